"""Package discovery only (metadata lives in pyproject.toml).

The repository keeps its promised top-level folders (`server/`, `analyzers/`, `index/`,
`benchmarks/`) while they install as `peerlint.<folder>`; every sub-package below them is
found here, so a new capability folder needs no edit of the build files.
"""

from setuptools import find_packages, setup

TOP_LEVEL = ("server", "analyzers", "latex", "llm", "retrieval", "index", "benchmarks")

packages = ["peerlint"]
for top in TOP_LEVEL:
    packages += [f"peerlint.{top}"] + [f"peerlint.{top}.{sub}" for sub in find_packages(top)]

setup(packages=packages, package_dir={"peerlint": "peerlint", **{f"peerlint.{top}": top for top in TOP_LEVEL}})
