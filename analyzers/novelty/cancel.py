"""Stopping a *Check novelty* the user cancelled.

The check makes several LLM calls (the justification, NOVA's search plan, one judgment per close
paper), each seconds long on a CPU. `CancellableLLM` asks before every call whether the check is
still wanted, so a cancelled check ends within one LLM call and frees the LLM worker for the next
request, and nothing of it is cached.
"""

from __future__ import annotations

from typing import Callable, Sequence

from ...llm.base import ChoiceScores, GenerateParams, LLM, LLMWrapper, LogLik


class CheckCancelled(Exception):
    """The user cancelled the check. Not an `LLMError`: the per-call fallbacks (an unjustified score,
    an unjudged paper) must let it through instead of carrying on."""


class CancellableLLM(LLMWrapper):
    """`inner`, with `is_cancelled()` polled before each call."""

    def __init__(self, inner: LLM, is_cancelled: Callable[[], bool]):
        super().__init__(inner)
        self.is_cancelled = is_cancelled

    def _go_on(self) -> None:
        if self.is_cancelled():
            raise CheckCancelled("cancelled by the user")

    def generate(self, prompt: str, params: GenerateParams = GenerateParams()) -> str:
        self._go_on()
        return self.inner.generate(prompt, params)

    def score(self, prompt: str, choices: Sequence[str], system: str | None = None) -> ChoiceScores:
        self._go_on()
        return self.inner.score(prompt, choices, system)

    def loglik(self, prompt: str, text: str) -> LogLik:
        self._go_on()
        return self.inner.loglik(prompt, text)  # type: ignore[attr-defined]


def cancellable(llm: LLM | None, is_cancelled: Callable[[], bool]) -> LLM | None:
    return None if llm is None else CancellableLLM(llm, is_cancelled)  # type: ignore[return-value]
