"""Fluency: how likely the embedded LM finds a sentence, the signal typo, grammar and style edits move.

Read through `llm.loglik` after a neutral prompt, so nothing about quality is asked of a 135M model;
only backends that score given text (the embedded one) can do it.  `POWERS` names the length
normalisations compared in `peerlint bench drafts --suite revisions`.
"""

from __future__ import annotations

from typing import Sequence

from .llm.base import LLMUnavailable, LogLik

PROMPT = "A sentence from a scientific paper:\n"
POWERS = {"mean per token": 1.0, "sum / sqrt(tokens)": 0.5, "sum": 0.0}


def logliks(llm: object, texts: Sequence[str], prompt: str = PROMPT) -> list[LogLik]:
    """Each text's log-likelihood after `prompt`; LLMUnavailable when the backend cannot score text."""
    score = getattr(llm, "loglik", None)
    if score is None:
        raise LLMUnavailable(f"the {getattr(llm, 'name', '?')} backend cannot score a given text's likelihood")
    return [score(prompt, t) for t in texts]
