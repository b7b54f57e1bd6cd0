"""What every corpus reader shares: bytes decoded line by line, fields cleaned, bad rows reported.

The format readers (JSONL/CSV in `load.py`, BibTeX/LaTeX in `latex_sources.py`) all stand on
this module, and it imports none of them.
"""

from __future__ import annotations

import gzip
import lzma
import re
import unicodedata
from collections.abc import Callable, Iterator
from pathlib import Path

Warn = Callable[[str], None]

MAX_ROW_WARNINGS = 20  # per file; the rest are summed up in one line


class BadRecord(ValueError):
    """One row of a corpus is malformed; the message is the reason shown to the user."""


# --- bytes to text ----------------------------------------------------------------------------------


class FileReport:
    """Warns about skipped rows of one file, at most MAX_ROW_WARNINGS of them, then a summary."""

    def __init__(self, path: Path, warn: Warn) -> None:
        self.path, self.warn, self.skipped = path, warn, 0

    def skip(self, line: int, reason: str) -> None:
        self.skipped += 1
        if self.skipped <= MAX_ROW_WARNINGS:
            self.warn(f"{self.path}:{line}: {reason}; skipped")

    def close(self) -> None:
        if self.skipped > MAX_ROW_WARNINGS:
            self.warn(f"{self.path}: {self.skipped - MAX_ROW_WARNINGS} more rows skipped ({self.skipped} in all)")


def open_binary(path: Path):
    name = path.name.lower()
    if name.endswith(".gz"):
        return gzip.open(path, "rb")
    if name.endswith(".xz"):
        return lzma.open(path, "rb")
    return open(path, "rb")


def decoded_lines(path: Path, warn: Warn) -> Iterator[tuple[int, str]]:
    """(line number, text with its line ending) for each line; bytes that are not UTF-8 never stop the read.

    Lines are decoded one by one, so a UTF-8 file with one stray Latin-1 line keeps its other lines intact.
    """
    lineno, warned = 0, False
    try:
        with open_binary(path) as stream:
            for lineno, raw in enumerate(stream, 1):
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError as err:
                    text = _decode_legacy(raw)
                    if not warned:
                        warned = True
                        warn(f"{path}:{lineno}: not valid UTF-8 ({err.reason} at byte {err.start}); read as "
                             "Windows-1252/Latin-1 here and on any later such line (save the file as UTF-8 to fix)")
                if lineno == 1:
                    text = text.removeprefix("\ufeff")
                yield lineno, text
    except (OSError, EOFError, lzma.LZMAError) as err:
        warn(f"{path}:{lineno + 1}: cannot read the file ({err}); kept the {lineno} lines before it")


def _decode_legacy(raw: bytes) -> str:
    try:
        return raw.decode("cp1252")
    except UnicodeDecodeError:
        return raw.decode("latin-1")  # maps every byte; never fails


def read_text(path: Path, warn: Warn) -> str:
    return "".join(text for _, text in decoded_lines(path, warn))


_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_ISO_DATE = re.compile(r"(\d{4}(?:-\d{2}(?:-\d{2})?)?)(?:[T ][\d:.+\-Z]*)?")


def clean_text(text: str) -> str:
    """Collapse whitespace, strip, drop control characters, NFC-normalise; any other unicode is kept.
    Text that is clean already (printable: no control character and no whitespace but single inner
    spaces; NFC) comes back as it is, without the three passes over it."""
    if (text.isprintable() and "  " not in text and text[:1] != " " and text[-1:] != " "
            and (text.isascii() or unicodedata.is_normalized("NFC", text))):
        return text
    return " ".join(unicodedata.normalize("NFC", _CONTROL.sub("", text)).split())


ANTHOLOGY_URL = "https://aclanthology.org/"


def anthology_venue(acronym: str) -> str:
    """A venue of the ACL Anthology as its readers write it. The Anthology's metadata gives a few
    workshops only their lower-case id as acronym (`sdp`, `insights`); those read upper-cased, as the
    workshops without an acronym already do."""
    return acronym.upper() if acronym.islower() else acronym


def parse_date(value: object) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise BadRecord(f"date must be an ISO date string, not {type(value).__name__}")
    if not value.strip():
        return ""
    match = _ISO_DATE.fullmatch(value.strip())
    if not match:
        raise BadRecord(f"date {value!r:.40} is not an ISO date (YYYY, YYYY-MM or YYYY-MM-DD)")
    return match.group(1)
