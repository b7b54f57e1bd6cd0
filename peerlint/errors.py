"""Errors a user can cause and fix, shared by every layer that talks to the user.

The CLI prints such an error as one line (`peerlint: error: …`) and exits 2, with no traceback;
benchmarks and command modules raise it without importing the CLI (which imports them).
"""


class UserError(Exception):
    """Anything the user can fix; the message names the fix."""
