"""peerlint: a LaTeX language server that reads a draft the way a senior colleague would."""

import os

__version__ = "0.1.0"

# llama.cpp and torch share libgomp, which reads this once: spinning OpenMP threads would
# starve the other library on a 2-core machine (decode fell from ~25 to ~1 token/s).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def _share_libstdcxx() -> None:
    """Put the system libstdc++ in the global symbol scope before USearch is imported.

    USearch's extension links its own static libstdc++ and exports it; loaded first, it keeps
    its private locale tables and llama.cpp then fails to load any model ("error loading model
    vocabulary: std::bad_cast"). With libstdc++ already global, both bind to the same copy.
    """
    import ctypes

    try:
        ctypes.CDLL("libstdc++.so.6", mode=os.RTLD_NOW | ctypes.RTLD_GLOBAL)
    except OSError:
        pass  # not glibc/libstdc++: nothing to share


if os.name == "posix":
    _share_libstdcxx()
