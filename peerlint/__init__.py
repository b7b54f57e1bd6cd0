"""peerlint: a LaTeX language server that reads a draft the way a senior colleague would."""

__version__ = "0.1.0"
