"""The one text hash: the key of every cache (embeddings, LLM answers, judgments).

It lives in the lowest layer because the index caches chunk vectors under it and the
analyzers cache judgments under it: same text, same key, everywhere.
"""

from __future__ import annotations

import hashlib


def text_hash(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()
