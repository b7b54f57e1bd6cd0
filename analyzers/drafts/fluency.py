"""Fluency: how likely the embedded LM finds a sentence, the signal typo, grammar and style edits move.

Read through `llm.loglik` after a neutral prompt, so nothing about quality is asked of a 135M model;
only backends that score given text (the embedded one) can do it.  `POWERS` names the length
normalisations compared in `peerlint bench drafts --suite revisions`.
"""

from __future__ import annotations

from typing import Sequence

from ...llm.base import LLMUnavailable, LogLik

PROMPT = "A sentence from a scientific paper:\n"
POWERS = {"mean per token": 1.0, "sum / sqrt(tokens)": 0.5, "sum": 0.0}


def logliks(llm: object, texts: Sequence[str], prompt: str = PROMPT) -> list[LogLik]:
    """Each text's log-likelihood after `prompt`; LLMUnavailable when the backend cannot score text."""
    score = _loglik_of(llm)
    return [score(prompt, t) for t in texts]


def _loglik_of(llm: object):
    """The backend's `loglik`, or LLMUnavailable (Ollama's API cannot score a given text).

    The cache always has a `loglik` that forwards to its backend, so the backend itself is asked:
    a scorer refuses an Ollama backend when it is made, not halfway through a ranking."""
    backend = getattr(llm, "inner", llm)
    if getattr(backend, "loglik", None) is None:
        raise LLMUnavailable(f"the {getattr(llm, 'name', '?')} backend cannot score a given text's likelihood")
    return llm.loglik


ABSTRACT_PROMPT = "An abstract of a scientific paper:\n"


class FluencyScore:
    """A pointwise scorer (texts -> numbers, higher = better) from the mean token log-likelihood.

    A label-free prior for ranking abstracts and ideas: on ICLR 2017 the accepted abstracts read a
    little more fluent to SmolLM2 than the rejected ones (AUROC 0.56, `peerlint bench drafts
    --suite acceptance`).  About 2 s per abstract on two cores, cached per text by the LLM cache."""

    def __init__(self, llm, prompt: str = ABSTRACT_PROMPT, progress=None):
        self.loglik, self.prompt, self.progress = _loglik_of(llm), prompt, progress
        self.name = f"fluency({getattr(llm, 'name', '?')}:{getattr(llm, 'model', '?')})"

    def __call__(self, texts: Sequence[str]) -> list[float]:
        out = []
        for n, text in enumerate(texts, 1):
            out.append(self.loglik(self.prompt, text).per_token(1.0))
            if self.progress is not None:
                self.progress(n, len(texts))
        return out
