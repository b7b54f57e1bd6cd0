"""Reading parts of a `.npy` file with `pread`, for the search's scattered reads.

A memory-mapped array counts every page it touches (and, by the kernel's fault-around, up to 64 KB
around each) as the process's resident memory until the mapping goes: at 3M papers, 500 searches'
re-ranking rows and 200 queries' postings mapped ~2 GB that were read once. Read with `pread`, the
same bytes come from the same page cache, shared and dropped under memory pressure, and the process
holds only the rows it asked for. A smaller file (up to `MAP_LIMIT`, the default index's vectors among
them) is memory-mapped, so a search's few hundred scattered rows are one fancy index, not a few
hundred system calls. The kernel maps more than the row around every faulting one whatever the advice
(64 KB of fault-around, or all of a large folio when the page cache holds the file in those, as after
a sequential read: up to 2 MB), so the map's pages are released (`MADV_DONTNEED`) once the reads may
have made `RELEASE_PAGES` of them resident; those pages are also what makes the next rows cheap, hence
a budget and not a release per read (measured on the latency page, docs/benchmarks/latency.md).
"""

from __future__ import annotations

import mmap
import os
from pathlib import Path

import numpy as np
from numpy.lib import format as npy_format


MAP_LIMIT = 256 << 20  # files up to this size are read through a memory map
RELEASE_PAGES = 16_384  # pages a map may have made resident before they are released (64 MB)
PAGES_PER_READ = 512  # pages one faulting row may map: a 2 MB large folio (64 KB of fault-around on small pages)


class NpyReader:
    """Rows and slices of a C-ordered `.npy` file on disk, read on demand."""

    def __init__(self, path: Path, map_limit: int = MAP_LIMIT):
        self._fd = os.open(path, os.O_RDONLY)
        self._mmap = self._map = None
        self._unreleased = 0
        try:
            with open(path, "rb", buffering=0) as fh:
                version = npy_format.read_magic(fh)
                read_header = npy_format.read_array_header_1_0 if version == (1, 0) else npy_format.read_array_header_2_0
                shape, fortran, dtype = read_header(fh)
                self._offset = fh.tell()
        except Exception:
            os.close(self._fd)
            raise
        if fortran:
            os.close(self._fd)
            raise ValueError(f"{path}: Fortran-ordered arrays are not read row by row")
        self.shape, self.dtype = tuple(shape), np.dtype(dtype)
        self._row = int(np.prod(self.shape[1:], dtype=np.int64)) * self.dtype.itemsize
        if 0 < os.path.getsize(path) <= map_limit and self.shape[0] > 0:
            self._mmap = mmap.mmap(self._fd, 0, access=mmap.ACCESS_READ)
            self._mmap.madvise(mmap.MADV_RANDOM)
            self._map = np.frombuffer(self._mmap, self.dtype, int(np.prod(self.shape)), self._offset).reshape(self.shape)

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, item) -> np.ndarray:
        """`reader[a:b]`, `reader[keys]`, `reader[i]`, `reader[mask]`: copies, as numpy would index."""
        n = self.shape[0]
        if isinstance(item, slice):
            start, stop, step = item.indices(n)
            return self.slice(start, max(start, stop)) if step == 1 else self.rows(np.arange(start, stop, step))
        keys = np.asarray(item)
        if keys.dtype == bool:
            keys = np.nonzero(keys)[0]
        keys = keys.astype(np.int64)
        if ((keys < -n) | (keys >= n)).any():
            raise IndexError(f"index out of range for {n} rows")
        keys = np.where(keys < 0, keys + n, keys)
        return self.rows(keys.reshape(1))[0] if keys.ndim == 0 else self.rows(keys)

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        whole = self.slice(0, self.shape[0])
        return whole if dtype is None else whole.astype(dtype)

    def _read(self, start: int, count: int) -> np.ndarray:
        data = os.pread(self._fd, count * self._row, self._offset + start * self._row)
        return np.frombuffer(data, dtype=self.dtype).reshape((count, *self.shape[1:]))

    def slice(self, start: int, end: int) -> np.ndarray:
        """Rows start..end-1, one read."""
        if self._map is not None:
            return self._released(self._map[start:end].copy(), (end - start) * self._row // mmap.PAGESIZE + PAGES_PER_READ)
        return self._read(start, max(0, end - start)) if end > start else np.zeros((0, *self.shape[1:]), self.dtype)

    def rows(self, keys: np.ndarray) -> np.ndarray:
        """The rows of `keys`, in their order: one read per run of consecutive keys (searches pass
        them sorted, so a paper's chunks are one read)."""
        keys = np.asarray(keys, dtype=np.int64)
        if self._map is not None:
            return self._released(self._map[keys], len(keys) * PAGES_PER_READ)
        if len(keys) == 0:
            return np.zeros((0, *self.shape[1:]), self.dtype)
        breaks = np.flatnonzero(np.diff(keys) != 1) + 1
        parts = [self._read(int(run[0]), len(run)) for run in np.split(keys, breaks)]
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    def _released(self, copied: np.ndarray, pages: int) -> np.ndarray:
        """`copied` (rows copied out of the map, touching up to `pages` pages), after the map's pages are
        given back when RELEASE_PAGES pages may be resident."""
        self._unreleased += pages
        if self._unreleased >= RELEASE_PAGES:
            self._unreleased = 0
            try:
                self._mmap.madvise(mmap.MADV_DONTNEED)
            except (OSError, ValueError, AttributeError):  # closed meanwhile: nothing resident either
                pass
        return copied

    def close(self) -> None:
        self._map = None
        if self._mmap is not None:
            try:
                self._mmap.close()
            except BufferError:  # an array still views it: it goes with the last view
                pass
            self._mmap = None
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # at interpreter exit `os` may already be gone: nothing left to release
            pass


READ_BLOCK = 8 << 20


def prefetch(path: Path, budget_bytes: int) -> bool:
    """Read `path` through once, in large sequential blocks, when it is no larger than `budget_bytes`:
    its pages are then in the page cache, so searches by random access do not wait on one disk read
    per graph node or re-ranked row. Sequential reads take seconds where the same bytes read at random
    by the first searches took minutes of waiting; the pages belong to the page cache, not to this process."""
    try:
        if path.stat().st_size > budget_bytes:
            return False
        block = bytearray(READ_BLOCK)
        with open(path, "rb", buffering=0) as fh:
            while fh.readinto(block):
                pass
    except OSError:
        return False
    return True
