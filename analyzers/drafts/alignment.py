"""Which paragraph of the new draft continues which paragraph of the old one.

Exact text first (a hash: unchanged in order, or moved), then the most similar remaining pairs
(difflib's ratio over word tokens, above `THRESHOLD`), then runs of consecutive paragraphs that
together match one paragraph on the other side (split, merged).  What is left is new or removed;
a paragraph rewritten beyond recognition is therefore "new" (and its old text "removed"), never
a forced pair.  Works on any chunks in reading order, across the files of a project.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Sequence

from ...types import Chunk
from .revision_features import tokens

THRESHOLD = 0.5  # below this word-level similarity two paragraphs are different paragraphs
MAX_RUN = 4  # a split or merge joins at most this many consecutive paragraphs
MIN_OVERLAP = 0.3  # pairs sharing fewer of their longer words are not compared word by word (a 100 x 100 rewrite stays fast)
KINDS = ("unchanged", "moved", "changed", "split", "merged", "new", "removed")


@dataclass(frozen=True)
class Aligned:
    """Old paragraphs and the new ones that continue them; one side is empty for new / removed."""

    kind: str  # one of KINDS
    old: tuple[Chunk, ...]
    new: tuple[Chunk, ...]
    similarity: float

    @property
    def old_text(self) -> str:
        return " ".join(c.text for c in self.old)

    @property
    def new_text(self) -> str:
        return " ".join(c.text for c in self.new)

    @property
    def edited(self) -> bool:
        """The text differs: what the revision model judges (changed, split, merged)."""
        return self.kind in ("changed", "split", "merged")


def _key(text: str) -> str:
    return " ".join(text.split())


def _content(toks: Sequence[str]) -> frozenset[str]:
    return frozenset(t.lower() for t in toks if len(t) > 3)


def _overlap(a: frozenset[str], b: frozenset[str]) -> float:
    """Share of the smaller side's longer words found in the other: a cheap filter before difflib."""
    return len(a & b) / max(min(len(a), len(b)), 1) if a and b else float(not a and not b)


def similarity(a: Sequence[str], b: Sequence[str]) -> float:
    """difflib's ratio over token lists (1 = same words in the same order)."""
    if not a and not b:
        return 1.0
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    if matcher.real_quick_ratio() < THRESHOLD or matcher.quick_ratio() < THRESHOLD:
        return matcher.quick_ratio()
    return matcher.ratio()


def align(old: Sequence[Chunk], new: Sequence[Chunk]) -> list[Aligned]:
    """Every old and new chunk in exactly one `Aligned`, in the new draft's order (removed ones last)."""
    out: list[Aligned] = []
    old_keys, new_keys = [_key(c.text) for c in old], [_key(c.text) for c in new]
    free_old, free_new = set(range(len(old))), set(range(len(new)))
    placed: dict[int, Aligned] = {}  # new index -> its alignment, for ordering

    def take(kind: str, i: Sequence[int], j: Sequence[int], sim: float) -> None:
        a = Aligned(kind, tuple(old[x] for x in i), tuple(new[y] for y in j), sim)
        free_old.difference_update(i)
        free_new.difference_update(j)
        if j:
            placed[min(j)] = a
        else:
            out.append(a)

    for block in difflib.SequenceMatcher(None, old_keys, new_keys, autojunk=False).get_matching_blocks():
        for k in range(block.size):
            take("unchanged", [block.a + k], [block.b + k], 1.0)
    by_key: dict[str, list[int]] = {}
    for i in sorted(free_old):
        by_key.setdefault(old_keys[i], []).append(i)
    for j in sorted(free_new):
        if by_key.get(new_keys[j]):
            take("moved", [by_key[new_keys[j]].pop(0)], [j], 1.0)

    toks_old = {i: tokens(old[i].text) for i in free_old}
    toks_new = {j: tokens(new[j].text) for j in free_new}
    words_old = {i: _content(t) for i, t in toks_old.items()}
    words_new = {j: _content(t) for j, t in toks_new.items()}
    pairs = sorted(((similarity(toks_old[i], toks_new[j]), i, j) for i in free_old for j in free_new
                    if _overlap(words_old[i], words_new[j]) >= MIN_OVERLAP), key=lambda t: (-t[0], t[1], t[2]))
    singles = {}
    for sim, i, j in pairs:
        if sim < THRESHOLD:
            break
        if i in free_old and j in free_new and i not in singles.values() and j not in singles:
            singles[j] = i
    # a run of consecutive paragraphs that matches one paragraph better than any single one does
    single_sim = {j: similarity(toks_old[i], toks_new[j]) for j, i in singles.items()}
    best_of_old = {i: single_sim[j] for j, i in singles.items()}
    for i in sorted(free_old):
        run = _best_run(toks_old[i], words_old[i], sorted(free_new), toks_new, words_new)
        if run and run[1] > best_of_old.get(i, 0.0) and all(single_sim.get(j, 0.0) < run[1] for j in run[0]):
            take("split", [i], run[0], run[1])
    for j in sorted(free_new):
        run = _best_run(toks_new[j], words_new[j], sorted(free_old), toks_old, words_old)
        if run and run[1] > single_sim.get(j, 0.0) and all(best_of_old.get(i, 0.0) < run[1] for i in run[0]):
            take("merged", run[0], [j], run[1])
    for j, i in singles.items():
        if i in free_old and j in free_new:
            take("changed", [i], [j], single_sim[j])
    for j in sorted(free_new):
        take("new", [], [j], 0.0)
    for i in sorted(free_old):
        take("removed", [i], [], 0.0)
    return [placed[j] for j in sorted(placed)] + out


def _best_run(target: list[str], words: frozenset[str], free: list[int], toks: dict[int, list[str]],
              other_words: dict[int, frozenset[str]]) -> tuple[list[int], float] | None:
    """The run of 2..MAX_RUN consecutive free paragraphs, each sharing words with `target`, whose
    joined words match it best (at least THRESHOLD)."""
    best: tuple[list[int], float] | None = None
    for start, first in enumerate(free):
        if _overlap(words, other_words[first]) < MIN_OVERLAP:
            continue
        run = [first]
        for nxt in free[start + 1:start + MAX_RUN]:
            if nxt != run[-1] + 1 or _overlap(words, other_words[nxt]) < MIN_OVERLAP:
                break
            run.append(nxt)
            joined = [t for k in run for t in toks[k]]
            if len(joined) > 2 * len(target) + 10:
                break
            sim = similarity(target, joined)
            if sim >= THRESHOLD and (best is None or sim > best[1]):
                best = (list(run), sim)
    return best
