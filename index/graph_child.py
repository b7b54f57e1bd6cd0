"""`python -m peerlint.index.graph_child BUILD DIM DTYPE`: a large build's HNSW graph, in a process of its own.

USearch takes the GIL back for every vector it inserts (its progress and interrupt checks), so a graph
grown on a thread of the process whose main thread writes the build's metadata, BM25 and entity
postings waits on that thread (docs/benchmarks/index.md has the rates). A child has its own
interpreter lock. It reads the build's
`vectors.npy`, writes `vectors.usearch`, prints "<done> <total>" lines for the parent's progress bar,
and stops when its parent is gone (killed mid-build), so no orphan keeps a core busy.
"""

import os
import sys
from pathlib import Path

import numpy as np

from .store import write_graph

REPORTS = 200  # progress lines over a whole graph


def main(argv: list[str]) -> int:
    build, dim, dtype = Path(argv[0]), int(argv[1]), argv[2]
    vectors = np.load(build / "vectors.npy")
    parent, every, last = os.getppid(), max(1, len(vectors) // REPORTS), [0]

    def progress(done: int, total: int) -> bool:  # usearch checks these annotations (so no __future__ import)
        if done - last[0] >= every or done == total:
            last[0] = done
            print(done, total, flush=True)
            return os.getppid() == parent  # False stops the insertion
        return True

    write_graph(build, dim, vectors, progress, dtype=dtype)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
