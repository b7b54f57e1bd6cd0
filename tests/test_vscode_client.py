"""The VS Code extension (clients/vscode): install from the lock file, lint, tests, .vsix.

VS Code itself cannot be installed here (no Debian package; @vscode/test-electron downloads it at
run time from outside the package registries). The extension's mocha tests mock only the `vscode`
module: unit tests of the settings mapping and command wiring, and integration tests in which the
extension's real vscode-languageclient talks over stdio to the real server (given here through
PEERLINT_TEST_SERVER) on a copy of the example draft. This test then checks the packaged .vsix:
that it ships the bundle and contributes every server setting of server/config.py with its default.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
import zipfile

import pytest

from conftest import EXAMPLES, REPO
from peerlint.server.config import Settings, _camel

EXT = REPO / "clients" / "vscode"
CLIENT_KEYS = {"peerlint.server.command", "peerlint.server.args", "peerlint.trace.server"}


def npm(*args: str, timeout: int = 300, env: dict[str, str] | None = None) -> str:
    env = {**os.environ, "NPM_CONFIG_FUND": "false", "NPM_CONFIG_AUDIT": "false", "NPM_CONFIG_UPDATE_NOTIFIER": "false",
           **(env or {})}
    proc = subprocess.run(["npm", *args], cwd=EXT, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=timeout)
    assert proc.returncode == 0, f"npm {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    return proc.stdout


@pytest.fixture(scope="module")
def vsix(index_path, tmp_path_factory):
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed: the VS Code extension needs Node.js >= 20 and npm to build")
    out = EXT / "peerlint.vsix"
    out.unlink(missing_ok=True)
    npm("ci", "--no-audit", "--no-fund", "--prefer-offline")  # the lock pins every version; cached tarballs are used as they are
    npm("run", "lint")
    work = tmp_path_factory.mktemp("vscode")
    shutil.copytree(EXAMPLES, work / "paper")
    server = {"command": sys.executable, "args": ["-m", "peerlint", "serve"], "indexPath": str(index_path),
              "draft": str(work / "paper" / "draft.tex")}
    tests = npm("test", env={"PEERLINT_TEST_SERVER": json.dumps(server), "PEERLINT_CACHE_DIR": str(work / "cache"),
                             "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"})
    assert " passing" in tests and " failing" not in tests and " pending" not in tests, tests[-3000:]
    assert "✔ talks to the real peerlint server" in tests, tests[-3000:]
    npm("run", "package")
    assert out.exists()
    return out


def test_vsix_ships_the_bundle_and_activates_on_latex(vsix):
    with zipfile.ZipFile(vsix) as z:
        names = set(z.namelist())
        manifest = json.loads(z.read("extension/package.json"))
    assert "extension/out/extension.js" in names and manifest["main"] == "./out/extension.js"
    assert not any(n.startswith("extension/node_modules/") or n.startswith("extension/src/") for n in names)
    assert {"onLanguage:latex", "onLanguage:tex"} <= set(manifest["activationEvents"])
    titles = {c["title"] for c in manifest["contributes"]["commands"]}
    assert {"Check novelty of selection/paragraph", "Show related work", "Rebuild index", "Show status"} <= titles


def test_vsix_contributes_every_server_setting_with_its_default(vsix):
    with zipfile.ZipFile(vsix) as z:
        manifest = json.loads(z.read("extension/package.json"))
    props = manifest["contributes"]["configuration"]["properties"]
    defaults = Settings()
    expected = {f"peerlint.{_camel(f.name)}": getattr(defaults, f.name) for f in dataclasses.fields(Settings)}
    assert set(props) - CLIENT_KEYS == set(expected)
    for key, default in expected.items():
        assert props[key]["default"] == (list(default) if isinstance(default, tuple) else default), key
        assert props[key].get("description") or props[key].get("markdownDescription"), key
    assert props["peerlint.server.command"]["default"] == "peerlint"
    assert props["peerlint.server.args"]["default"] == ["serve"]
