"""Where sentences start: one rule for the LaTeX parser's chunking and the revision features'
changed sentences (abbreviations and initials do not end a sentence)."""

from __future__ import annotations

import re

_SENTENCE_END = re.compile(r"[.!?\u2026]+[\"'\u201d\u2019)\]]*\s+(?=\S)(?![a-z])")
_ANY_END = re.compile(r"[.!?\u2026]+[\"'\u201d\u2019)\]]*\s+(?=\S)")
_ABBREVIATIONS = frozenset(
    "e.g i.e al fig figs eq eqs sec secs tab ref refs vs cf dr mr mrs ms prof no nos approx resp "
    "ch thm def alg app appx lem prop cor eqn vol pp ed eds inc ltd st".split()
)
# before a lower-case word these end no sentence either ("etc. and", "w.r.t. the")
_ABBREVIATIONS_IN_PROSE = _ABBREVIATIONS | frozenset("etc w.r.t a.k.a viz incl esp ca".split())


def sentence_starts(text: str, any_case: bool = False) -> list[int]:
    """Offsets in `text` where a sentence after the first begins.

    A sentence starts with a capital unless `any_case`: then also after an end followed by a
    lower-case word, which is how a careless draft's sentences start (the quality scale counts
    them), while abbreviations ("e.g. pytorch", "et al. show", "etc. and") still end none."""
    out = []
    abbreviations = _ABBREVIATIONS_IN_PROSE if any_case else _ABBREVIATIONS
    for m in (_ANY_END if any_case else _SENTENCE_END).finditer(text):
        head = text[max(0, m.start() - 12): m.start()].split()
        word = head[-1].lower().lstrip("([\"'") if head else ""
        if word in abbreviations or (len(word) == 1 and word.isalpha()):
            continue
        out.append(m.end())
    return out


def split_sentences(text: str) -> list[str]:
    """The sentences of `text`, stripped, empty ones left out."""
    bounds = [0, *sentence_starts(text), len(text)]
    return [text[x:y].strip() for x, y in zip(bounds, bounds[1:]) if text[x:y].strip()]
