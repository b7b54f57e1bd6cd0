"""What the revisions model reads from two versions of a text, side by side.

The model is trained on arXivEdits sentence pairs (Jiang et al., 2022) and applied to the changed
sentences of a paragraph, so both kinds of text go through the same `normalise` first: arXivEdits'
`[MATH]`/`[CITATION]`/`[REF]` become the parser's `[math]`/`[cite]`/`[ref]`, and its tokenised
spacing (" , ", "( x )") becomes ordinary prose spacing.

Three kinds of feature, each cheap on a CPU:
  * `surface_features` (pointwise, no model): length, LaTeX placeholders, punctuation and a small
    hedging / clarity lexicon, per word;
  * LM features (`LMFeatures`, under the embedded SmolLM2): the whole text's mean token
    log-likelihood, tokens per word (typos and odd spellings split into more tokens), and the
    log-likelihood of the edited span in its context (`edit_window`), which a one-word fix in a
    long sentence does not dilute;
  * the register head's rating (MiniLM; `heads.py`), read by `revisions.py`.
"""

from __future__ import annotations

import difflib
import math
import re
from dataclasses import dataclass

from ...sentences import split_sentences
from ...latex.tables import CITE, MATH, REF

_ARXIVEDITS = {"[MATH]": MATH, "[EQUATION]": MATH, "[CITATION]": CITE, "[REF]": REF}
_ARXIVEDITS_RE = re.compile("|".join(re.escape(k) for k in _ARXIVEDITS))
_SPACE_BEFORE = re.compile(r"\s+([,.;:!?)\]}%])")
_SPACE_AFTER = re.compile(r"([(\[{])\s+")
TOKEN = re.compile(r"\[(?:math|cite|ref|url|code|dummy)\]|\w+(?:[-'\u2019]\w+)*|[^\w\s]")
_WORD = re.compile(r"[^\W\d_]+(?:[-'\u2019][^\W\d_]+)*")

# Hyland's (2005) hedges and boosters, trimmed to what scientific prose uses; a revision that
# hedges less (or boosts less) is not worse by itself: the weights are learned, not assumed.
HEDGES = frozenset("""may might could perhaps possibly probably likely unlikely suggest suggests suggested
appear appears seem seems somewhat relatively approximately roughly generally typically often usually
partly partially presumably arguably""".split())
BOOSTERS = frozenset("""clearly obviously certainly definitely always never undoubtedly indeed very really
highly strongly significantly extremely truly""".split())
INFORMAL = frozenset("""thing things stuff lots basically actually pretty quite big get gets got kind sort
nice okay""".split())
FIRST_PERSON = frozenset("we our us ours i my".split())
CONNECTIVES = frozenset("""however therefore thus hence moreover furthermore consequently namely whereas
although nevertheless""".split())

SURFACE = ("log words", "mean word length", "math / word", "cite / word", "ref / word", "commas / word",
           "parentheses / word", "hedges / word", "boosters / word", "informal / word", "we / word",
           "connectives / word", "repeated word")


def normalise(text: str) -> str:
    """One spelling for both worlds: parser placeholders, prose spacing, single spaces."""
    text = _ARXIVEDITS_RE.sub(lambda m: _ARXIVEDITS[m.group(0)], text)
    text = _SPACE_AFTER.sub(r"\1", _SPACE_BEFORE.sub(r"\1", " ".join(text.split())))
    return text


def tokens(text: str) -> list[str]:
    return TOKEN.findall(text)


def surface_features(text: str) -> list[float]:
    """The SURFACE features of one (normalised) text: rates per word, so paragraph and sentence agree."""
    toks = tokens(text)
    words = [w.lower() for w in _WORD.findall(text)]
    n = max(len(words), 1)

    def rate(count: int) -> float:
        return count / n

    repeated = sum(1 for a, b in zip(words, words[1:]) if a == b and a not in ("that", "had"))
    return [math.log1p(len(words)), sum(map(len, words)) / n,
            rate(toks.count(MATH)), rate(toks.count(CITE)), rate(toks.count(REF)),
            rate(toks.count(",")), rate(toks.count("(")),
            rate(sum(w in HEDGES for w in words)), rate(sum(w in BOOSTERS for w in words)),
            rate(sum(w in INFORMAL for w in words)), rate(sum(w in FIRST_PERSON for w in words)),
            rate(sum(w in CONNECTIVES for w in words)), float(repeated)]


@dataclass(frozen=True)
class EditWindow:
    """Where two versions of a sentence differ: the shared prefix, and each side's changed span
    followed by up to `CONTEXT_TOKENS` shared tokens (how well the edit fits what comes after)."""

    prefix: str
    before: str
    after: str


CONTEXT_TOKENS = 8


def _spans(text: str) -> list[tuple[int, int, str]]:
    return [(m.start(), m.end(), m.group(0)) for m in TOKEN.finditer(text)]


def edit_window(before: str, after: str, context: int = CONTEXT_TOKENS) -> EditWindow:
    """The first-to-last changed tokens of each side, with their shared left and right context."""
    b, a = _spans(before), _spans(after)
    p = 0
    while p < min(len(a), len(b)) and a[p][2] == b[p][2]:
        p += 1
    s = 0
    while s < min(len(a), len(b)) - p and a[-1 - s][2] == b[-1 - s][2]:
        s += 1

    def window(text: str, spans: list[tuple[int, int, str]]) -> tuple[int, str]:
        start = spans[p][0] if p < len(spans) else len(text)
        last = min(len(spans) - s + context, len(spans)) - 1
        end = spans[last][1] if last >= p else start
        cut = len(text[:start].rstrip())
        return cut, text[cut:end]

    cut, b_win = window(before, b)
    _, a_win = window(after, a)
    return EditWindow(before[:cut], b_win, a_win)


def changed_sentences(before: str, after: str) -> list[tuple[str, str]]:
    """The (old, new) sentence pairs a paragraph edit consists of; unchanged sentences are left out.

    A replaced run of sentences is one pair (joined); an inserted or deleted sentence is joined to
    its neighbour, the way arXivEdits records a sentence that gained or lost a clause."""
    old, new = split_sentences(before), split_sentences(after)
    if not old or not new:
        return [(before, after)] if before != after else []
    ops = difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes()
    pairs: list[tuple[str, str]] = []
    for tag, i1, i2, j1, j2 in ops:
        if tag == "equal":
            continue
        if tag in ("insert", "delete"):  # widen to a neighbouring sentence shared by both sides
            if i1 > 0 and j1 > 0:
                i1, j1 = i1 - 1, j1 - 1
            elif i2 < len(old) and j2 < len(new):
                i2, j2 = i2 + 1, j2 + 1
        pairs.append((" ".join(old[i1:i2]), " ".join(new[j1:j2])))
    return [(x, y) for x, y in dict.fromkeys(pairs) if x != y]


def word_changes(before: str, after: str) -> tuple[list[str], list[str]]:
    """Lower-cased tokens removed from `before` and inserted in `after` (a word-level diff)."""
    b, a = [t.lower() for t in tokens(before)], [t.lower() for t in tokens(after)]
    removed, inserted = [], []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, b, a, autojunk=False).get_opcodes():
        if tag != "equal":
            removed += b[i1:i2]
            inserted += a[j1:j2]
    return removed, inserted
