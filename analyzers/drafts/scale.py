"""The quality scale of section summaries: a section against published sections of its kind.

Issue 34: the register head (proceedings abstracts vs fortune cookies, mapped through the percentile
among published abstracts) gave published abstracts 1.1–1.5/10 and did not see an obviously worse
text (lower-cased, fillers, "we kinda", swapped letters: lower in 5 of 12).  This scale:

* scores a paragraph with a logistic head trained on published paragraphs vs synthetically degraded
  versions of the same paragraphs (typos, fillers, informal register, hedging, lower case:
  `benchmarks/drafts/degrade.py`, deterministic), on the MiniLM vector the summary already has plus
  a few surface features the (uncased) embedding cannot see: likely typos (an unknown word one
  keystroke from a published one), sentences that start in lower case, contractions and colloquialisms, first-person "I", exclamation marks;
* compares a section (the mean of its paragraphs' scores) with published sections of its *kind*
  (abstract, introduction, related work, method, experiments, conclusion; any other heading: all
  published sections), 1–10: the kind's median published section is 7, and a section falls from
  there along the head's own logit (1 + 9·σ(score − median + ln 2)), so one that scores like a
  degraded version falls well below and the number says "how far from typical published text of
  this kind".

Everything lives in one shipped file, `data/quality_scale.npz` (weights, vocabulary, per-kind
reference quantiles, provenance), rebuilt by `peerlint bench drafts --suite scale --rebuild`
from `data/published_sections.jsonl.xz` (ACLSum's paragraphs, MIT; see data/README.md).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Sequence

import numpy as np

from ..npz_file import load_npz, save_npz
from ...sentences import sentence_starts

SCALE_FILE = Path(__file__).with_name("data") / "quality_scale.npz"
VERSION = 1
MEDIAN_RATING = 7.0  # the kind's median published section

KINDS = ("abstract", "introduction", "related work", "method", "experiments", "conclusion")
ANY_KIND = "section"  # a heading of no known kind is compared with all published sections
PLURAL = {"abstract": "abstracts", "introduction": "introductions", "related work": "related-work sections",
          "method": "method sections", "experiments": "experiment sections", "conclusion": "conclusions",
          ANY_KIND: "sections"}

_KIND_PATTERNS = (  # first match wins: "Conclusion and related work" is a conclusion
    ("abstract", r"^\s*abstract\b"),
    ("conclusion", r"conclu|future work|limitation|closing|summary|discussion"),
    ("introduction", r"intro|motivation"),
    ("related work", r"related|background|prior work|previous work|literature|preliminar"),
    ("experiments", r"experiment|evaluat|result|setup|set-up|settings?\b|dataset|\bdata\b|corpus|corpora|"
                    r"analys|ablation|baseline|implementation|training|benchmark|case stud|performance"),
    ("method", r"method|approach|model|framework|architecture|algorithm|formulation|problem|design|system|"
               r"overview|proposed|learning|task|definition|feature|inference|decoding|theory|proof"),
)
KIND_RES = tuple((k, re.compile(p, re.I)) for k, p in _KIND_PATTERNS)


def section_kind(heading: str, chunk_kind: str = "paragraph") -> str:
    """The kind a section is compared as: from the chunk's own kind (an abstract) or its heading."""
    if chunk_kind == "abstract":
        return "abstract"
    for kind, pattern in KIND_RES:
        if pattern.search(heading or ""):
            return kind
    return ANY_KIND


# -- surface features: what an uncased sentence embedding cannot see -----------------------------

_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*")
_PLACEHOLDER = re.compile(r"\[[a-z]+\]")  # the parser's "[math]", "[ref]", "[cite]": not a lower-case start
# contractions and words with no scientific sense ("super linear", "cool down", "lots" are left out: an
# ACL abstract's "super linear complexity" scored 1/10 with "super" here)
_CONTRACTION = re.compile(r"\b\w+(?:n['’]t|['’](?:re|ll|ve|m|d))\b|\b(?:gonna|wanna|gotta|kinda|sorta|yeah|okay|"
                          r"stuff|awesome|guys|btw|lol)\b", re.I)
_FIRST_SINGULAR = re.compile(r"\bI\b|\bi\b(?!\.)|\bme\b|\bmy\b", re.I)
SURFACE = ("likely typos", "sentences starting in lower case", "colloquialisms per word",
           "first-person singular per word", "exclamation marks per sentence", "capitalised words")
_LETTERS = "abcdefghijklmnopqrstuvwxyz"


_SUFFIXES = ("s", "es", "ed", "d", "ing", "er", "ers", "ly", "al", "ally", "ion", "ions", "ness", "able")


_BRITISH = (re.compile(r"(?<=[aeiou])(l)l(?=(?:ed|ing|er|ers)$)"),  # cancelled, levelled, signalling
            re.compile(r"(?<=^benefi)(t)t(?=(?:ed|ing)$)|(?<=^focu)(s)s(?=(?:ed|es|ing)$)"),  # benefitted, focussed
            re.compile(r"(?<=[^aeiou])(o)u(?=r(?:s|ed|ing|able|ably|ite|ites|less)?$)"))  # vapour, favourable


def _plain(word: str, vocabulary: frozenset[str]) -> bool:
    return word in vocabulary or any(word.endswith(x) and word[:-len(x)] in vocabulary for x in _SUFFIXES)


def known(word: str, vocabulary: frozenset[str]) -> bool:
    """A published word, or one with a common ending added to it ("raters", "bots"), or the British
    spelling of one ("levelled", "benefitted", "vapour"): the corpus is mostly American, and a
    British draft is not misspelt."""
    return _plain(word, vocabulary) or any(
        _plain(british, vocabulary) for rule in _BRITISH
        if (british := rule.sub(lambda m: m.group(m.lastindex), word, count=1)) != word)


@lru_cache(maxsize=65536)  # a draft repeats its own terms; the frozenset's hash is computed once
def likely_typo(word: str, vocabulary: frozenset[str]) -> bool:
    """An unknown word one keystroke from a known one: two neighbouring letters swapped, a letter
    doubled or extra, or one missing.  A field's own terms are unknown too, but rarely that close
    to a published word, so this counts typos rather than vocabulary (issue 34: a plain
    out-of-vocabulary share scored other fields' abstracts as misspelt)."""
    if len(word) < 4 or known(word, vocabulary):
        return False
    if any(word[:i] + word[i + 1] + word[i] + word[i + 2:] in vocabulary for i in range(len(word) - 1)):
        return True
    if len(word) < 6:  # "cryo" is "cry" and a letter: short terms are too often one letter from a word
        return False
    return (any(word[:i] + word[i + 1:] in vocabulary for i in range(len(word)))
            or any(word[:i] + c + word[i:] in vocabulary for i in range(1, len(word)) for c in _LETTERS))


def surface_features(text: str, vocabulary: frozenset[str]) -> np.ndarray:
    """Six shares in [0, 1] (see `SURFACE`); `vocabulary` holds lower-case published words."""
    words = _WORD.findall(text)
    n = max(len(words), 1)
    long_words = [part for w in words if not w[:1].isupper()  # names and acronyms are not typos
                  for part in w.lower().replace("’", "'").split("-") if len(part) >= 4 and "'" not in part]
    oov = sum(1 for w in long_words if likely_typo(w, vocabulary)) / max(len(long_words), 1)
    starts = [text[at:].lstrip("\"'(\u201c\u2018 ") for at in (0, *sentence_starts(text, any_case=True))]
    letters = [s.lstrip("[")[0] for s in starts if s.lstrip("[")[:1].isalpha() and not _PLACEHOLDER.match(s)]
    lower_start = sum(1 for c in letters if c.islower()) / max(len(letters), 1)
    colloquial = len(_CONTRACTION.findall(text)) / n
    first = len(re.findall(r"\bI\b|\bmy\b|\bme\b", text)) / n
    bangs = text.count("!") / max(len(starts), 1)
    capital = sum(1 for w in words if w[0].isupper()) / n
    return np.array([oov, lower_start, colloquial, first, min(bangs, 1.0), capital])


# -- the scale ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ScaleRating:
    """A section's place on the scale and what it was compared with."""

    rating: float  # 1–10
    kind: str  # the kind compared against (KINDS or ANY_KIND)
    percentile: float  # share of the kind's published sections that score lower (0–1)
    compared: int  # published sections of that kind in the reference
    middle: tuple[float, float]  # the middle half of those sections on the 1–10 scale

    def phrase(self) -> str:
        """'6.8/10 (published introductions score 5.9–8.0, median 7; above 45% of the 148 compared)'"""
        lo, hi = self.middle
        name = PLURAL.get(self.kind, "sections")
        return (f"{self.rating:.1f}/10 (published {name} score {lo:.1f}–{hi:.1f}, median {MEDIAN_RATING:.0f}; "
                f"clearer than {round(100 * self.percentile)}% of the {self.compared:,} compared)")


@dataclass
class QualityScale:
    """Paragraph score = w·[embedding, standardised surface features] + b; a section's score is the mean
    of its paragraphs'; `quantiles[kind]` holds the 101 quantiles of published sections' scores."""

    w: np.ndarray
    b: float
    surface_mean: np.ndarray
    surface_std: np.ndarray
    vocabulary: frozenset[str]
    quantiles: dict[str, np.ndarray]
    counts: dict[str, int]
    model_id: str = ""
    info: dict = field(default_factory=dict)

    def features(self, vectors: np.ndarray, texts: Sequence[str]) -> np.ndarray:
        surf = np.stack([surface_features(t, self.vocabulary) for t in texts]) if len(texts) else np.zeros((0, len(SURFACE)))
        surf = (surf - self.surface_mean) / self.surface_std
        return np.hstack([np.atleast_2d(np.asarray(vectors, dtype=np.float64)), surf])

    def paragraph_scores(self, vectors: np.ndarray, texts: Sequence[str]) -> np.ndarray:
        """Logit of 'a published paragraph rather than a degraded one', one per paragraph."""
        return self.features(vectors, texts) @ self.w + self.b

    def kind_of(self, kind: str) -> str:
        return kind if kind in self.quantiles else ANY_KIND

    def rating_of_score(self, score: float | np.ndarray, kind: str) -> np.ndarray:
        """1–10: the kind's median published section -> 7; logistic in the head's logit around it, so a
        section far below published ones nears 1 and one far above nears 10."""
        median = self.quantiles[self.kind_of(kind)][50]
        # 1 + 9·σ(s − median + c), σ(c) = 6/9: the head's own logit units, so one unit below the median is
        # a text e times less likely published than degraded, and the rating's spread is the head's, not the
        # reference's (a narrow reference would make a steep scale, harsh on other fields' prose)
        c = np.log(2.0)
        return 1.0 + 9.0 / (1.0 + np.exp(-(np.asarray(score, dtype=float) - median + c)))

    def rate_section(self, vectors: np.ndarray, texts: Sequence[str], kind: str) -> ScaleRating:
        score = float(np.mean(self.paragraph_scores(vectors, texts)))
        k = self.kind_of(kind)
        q = self.quantiles[k]
        pct = float(np.interp(score, q, np.linspace(0, 1, len(q)), left=0.0, right=1.0))
        lo, hi = self.rating_of_score(np.array([q[25], q[75]]), k)
        return ScaleRating(float(self.rating_of_score(score, k)), k, pct, self.counts[k], (float(lo), float(hi)))

    def save(self, path: Path = SCALE_FILE) -> None:
        kinds = sorted(self.quantiles)
        save_npz(path, {"model_id": self.model_id, "info": self.info, "version": VERSION, "kinds": kinds,
                        "counts": self.counts, "vocabulary": sorted(self.vocabulary)},
                 {"w": self.w, "b": np.array(self.b), "surface_mean": self.surface_mean, "surface_std": self.surface_std,
                  "quantiles": np.stack([self.quantiles[k] for k in kinds])})


def load_scale(path: Path = SCALE_FILE) -> QualityScale | None:
    def build(meta, data) -> QualityScale:
        kinds = list(meta["kinds"])
        return QualityScale(data["w"], float(data["b"]), data["surface_mean"], data["surface_std"],
                            frozenset(meta["vocabulary"]), dict(zip(kinds, data["quantiles"])),
                            {k: int(v) for k, v in meta["counts"].items()}, meta["model_id"], meta["info"])

    return load_npz(path, VERSION, build)


_CACHE: dict[Path, QualityScale | None] = {}


def shipped_scale(path: Path = SCALE_FILE) -> QualityScale | None:
    """The shipped scale, read once per process."""
    if path not in _CACHE:
        _CACHE[path] = load_scale(path)
    return _CACHE[path]
