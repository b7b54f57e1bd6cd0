"""The revisions model: does the new version of a paragraph read better or worse than the old one?

A pairwise logistic model over feature *differences* (new minus old) of each changed sentence,
trained by `peerlint bench drafts --suite revisions` on arXivEdits train.json only and shipped as
`data/revisions_model.npz`, so the editor needs no training.  Which features it uses is the bench's
choice (by cross-validation on train.json); the candidates are in `FEATURES`: SmolLM2 fluency of
the whole sentence and of the edited span in context, tokens per word, length, the register head's
rating and a small hedging / clarity lexicon (`revision_features.py`).

The model is antisymmetric by construction (every feature is a difference, with no intercept), so
P(new better than old) = 1 - P(old better than new): it cannot learn "the later one is better",
which arXivEdits' win rate would otherwise reward.  A paragraph's logit is the sum over its changed
sentences, so unchanged sentences cost nothing and are judged by nothing.
"""

from __future__ import annotations

import logging
import math
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from ..npz_file import load_npz, save_npz
from ...types import text_hash
from .fluency import PROMPT, logliks
from .heads import LinearHead, load_register_head, sigmoid
from .revision_features import SURFACE, changed_sentences, edit_window, normalise, surface_features
from .scale import QualityScale, section_kind, shipped_scale
from .analyzer import compatible

log = logging.getLogger(__name__)

MODEL_FILE = Path(__file__).with_name("data") / "revisions_model.npz"
VERSION = 1
LM_FEATURES = ("fluency", "tokens per word", "log tokens")
WINDOW_FEATURES = ("edit fluency", "edit tokens")
FEATURES = LM_FEATURES + WINDOW_FEATURES + ("register",) + SURFACE
MAX_CACHED = 20_000
EXPLAINED = {  # a feature's change in words: (when it went up, when it went down)
    "fluency": ("reads more fluently to the language model", "reads less fluently to the language model"),
    "edit fluency": ("the edited words fit their context better", "the edited words fit their context worse"),
    "log words": ("is longer", "is shorter"),
    "log tokens": ("is longer", "is shorter"),
    "register": ("reads more like published papers", "reads less like published papers"),
}


@dataclass
class RevisionModel:
    """Weights over raw feature differences; `info` says what it was trained and measured on."""

    names: tuple[str, ...]
    weights: np.ndarray
    info: dict = field(default_factory=dict)

    def contributions(self, diffs: np.ndarray) -> np.ndarray:
        """Each feature's share of the logit, summed over the rows (changed sentences)."""
        return (np.reshape(diffs, (-1, len(self.names))) * self.weights).sum(axis=0)

    def save(self, path: Path = MODEL_FILE) -> None:
        save_npz(path, {"names": list(self.names), "info": self.info, "version": VERSION}, {"weights": self.weights})

    @classmethod
    def load(cls, path: Path = MODEL_FILE) -> "RevisionModel | None":
        model = load_npz(path, VERSION, lambda meta, data: cls(tuple(meta["names"]), data["weights"], meta["info"]))
        if model is not None and not set(model.names) <= set(FEATURES):
            log.warning("%s names features this version does not compute: ignored", path)
            return None
        return model


@dataclass(frozen=True)
class Driver:
    """One feature behind a verdict: how much it changed (new minus old) and its share of the logit."""

    name: str
    change: float
    share: float

    def words(self) -> str:
        """The change in words, and whether it counted for or against the new version."""
        up, down = EXPLAINED.get(self.name, (f"{self.name} went up", f"{self.name} went down"))
        return f"{up if self.change > 0 else down} ({'for' if self.share > 0 else 'against'} the revision)"


@dataclass(frozen=True)
class RevisionJudgment:
    """One edited paragraph's verdict.  `probability` is that of the verdict (>= 0.5)."""

    verdict: str  # "better" | "worse"
    probability: float
    p_better: float
    drivers: tuple[Driver, ...]  # strongest first
    sentences: int  # changed sentence pairs judged

    def reason(self) -> str:
        """What drove the verdict most, in words ("reads less fluently to the language model (against …)")."""
        return next((d.words() for d in self.drivers if d.share and d.change), "")


class FeatureReader:
    """Feature differences of sentence pairs, computed once per text (and per pair for the edit window).

    `llm` must score given text (the embedded backend); `embed` (texts -> MiniLM vectors) is needed
    only when a model uses the register head."""

    def __init__(self, llm, embed: Callable[[list[str]], np.ndarray] | None = None,
                 register: LinearHead | None = None):
        self.llm, self.embed = llm, embed
        self.register = register if register is not None else (load_register_head() if embed else None)
        self._texts: OrderedDict[str, dict[str, float]] = OrderedDict()
        self._windows: OrderedDict[tuple[str, str], tuple[float, float]] = OrderedDict()
        self._lock = threading.RLock()

    def _measures(self, texts: Sequence[str], names: set[str]) -> list[dict[str, float]]:
        with self._lock:
            todo = list(dict.fromkeys(t for t in texts if not names <= self._texts.get(t, {}).keys()))
        if todo:
            found = {t: dict(self._texts.get(t, {})) for t in todo}
            if names & set(LM_FEATURES):
                for t, ll in zip(todo, logliks(self.llm, todo)):
                    words = max(len(t.split()), 1)
                    found[t].update({"fluency": ll.per_token(1.0), "tokens per word": ll.n_tokens / words,
                                     "log tokens": math.log1p(ll.n_tokens)})
            if "register" in names:
                if self.register is None or self.embed is None:
                    raise ValueError("this revisions model uses the register head: give FeatureReader an embedder")
                for t, r in zip(todo, self.register.rating(np.asarray(self.embed(todo)))):
                    found[t]["register"] = float(r)
            if names & set(SURFACE):
                for t in todo:
                    found[t].update(zip(SURFACE, surface_features(t)))
            with self._lock:
                for t, m in found.items():
                    self._texts[t] = m
                    self._texts.move_to_end(t)
                while len(self._texts) > MAX_CACHED:
                    self._texts.popitem(last=False)
        with self._lock:
            return [self._texts[t] for t in texts]

    def _window(self, before: str, after: str) -> tuple[float, float]:
        """(edit fluency, edit tokens) of `after` minus `before`: the edited span after the shared prefix."""
        key = (before, after)
        with self._lock:
            if key in self._windows:
                return self._windows[key]
        w = edit_window(before, after)
        b, a = (self.llm.loglik(PROMPT + w.prefix, x) for x in (w.before, w.after))
        value = (a.per_token(1.0) - b.per_token(1.0), float(a.n_tokens - b.n_tokens))
        with self._lock:
            self._windows[key] = value
            while len(self._windows) > MAX_CACHED:
                self._windows.popitem(last=False)
        return value

    def differences(self, pairs: Sequence[tuple[str, str]], names: Sequence[str]) -> np.ndarray:
        """One row per (before, after) pair: after's features minus before's, in `names` order."""
        if not pairs:
            return np.zeros((0, len(names)))
        wanted = set(names) - set(WINDOW_FEATURES)
        m = self._measures([t for p in pairs for t in p], wanted)
        rows = []
        for k, (before, after) in enumerate(pairs):
            mb, ma = m[2 * k], m[2 * k + 1]
            row = {n: ma[n] - mb[n] for n in wanted}
            if set(names) & set(WINDOW_FEATURES):
                row.update(zip(WINDOW_FEATURES, self._window(before, after)))
            rows.append([row[n] for n in names])
        return np.array(rows, dtype=np.float64)


def paragraph_pairs(old: str, new: str) -> list[tuple[str, str]]:
    """The changed sentence pairs of two versions of a paragraph, as the model reads them."""
    return changed_sentences(normalise(old), normalise(new))


class RevisionJudge:
    """Verdicts on edited paragraphs and quality ratings of any paragraph, cached per text hash.

    A verdict is kept per (old hash, new hash): saving a draft again re-judges only what changed."""

    def __init__(self, model: RevisionModel, features: FeatureReader, scale: QualityScale | None = None):
        """`scale` rates paragraphs as the section summaries do (the shipped one when `features` can embed)."""
        self.model, self.features = model, features
        self.scale = scale if scale is not None or features.embed is None else shipped_scale()
        self._verdicts: OrderedDict[tuple[str, str], RevisionJudgment] = OrderedDict()
        self._scores: OrderedDict[str, float] = OrderedDict()
        self._lock = threading.Lock()

    def judge(self, old: str, new: str) -> RevisionJudgment:
        key = (text_hash(old), text_hash(new))
        with self._lock:
            hit = self._verdicts.get(key)
        if hit is not None:
            return hit
        pairs = paragraph_pairs(old, new)
        diffs = self.features.differences(pairs, self.model.names)
        change, share = diffs.sum(axis=0), self.model.contributions(diffs)
        p = float(sigmoid(np.array(share.sum())))
        drivers = tuple(Driver(self.model.names[i], round(float(change[i]), 4), round(float(share[i]), 4))
                        for i in np.argsort(-np.abs(share)))
        result = RevisionJudgment("better" if p >= 0.5 else "worse", max(p, 1 - p), p, drivers, len(pairs))
        with self._lock:
            self._verdicts[key] = result
            while len(self._verdicts) > MAX_CACHED:
                self._verdicts.popitem(last=False)
        return result

    def warm(self) -> None:
        """Load the language model now, if its backend can be warmed, with the fluency prompt in its KV
        cache: the first verdict after an edit then pays for neither (0.65 s and 0.08 s of the 3.9 s
        five edited paragraphs took cold)."""
        backend = getattr(self.features.llm, "inner", self.features.llm)
        warm = getattr(backend, "warm", None)
        if warm is not None:
            warm(PROMPT)

    def quality(self, texts: Sequence[str], section: str = "") -> float | None:
        """Where paragraphs `texts` of section `section` stand on the quality scale of the section
        summaries (`scale.py`: 1-10, 7 the median published section of its kind); None without an
        embedder or a scale, or without text."""
        if self.scale is None or self.features.embed is None or not texts:
            return None
        keys = [text_hash(t) for t in texts]
        with self._lock:
            known = {k: self._scores[k] for k in keys if k in self._scores}
        todo = {k: t for k, t in zip(keys, texts) if k not in known}
        if todo:
            vectors = np.asarray(self.features.embed(list(todo.values())))
            known.update(zip(todo, map(float, self.scale.paragraph_scores(vectors, list(todo.values())))))
            with self._lock:
                self._scores.update((k, known[k]) for k in todo)
                while len(self._scores) > MAX_CACHED:
                    self._scores.popitem(last=False)
        score = float(np.mean([known[k] for k in keys]))
        return float(self.scale.rating_of_score(score, section_kind(section)))


def make_judge(llm, embed: Callable[[list[str]], np.ndarray] | None = None, index=None) -> RevisionJudge | None:
    """The shipped model over `llm` (one that scores text: the embedded backend); None when no model
    is shipped.  `embed` (MiniLM vectors; `index`'s embedder when given, used only when the quality
    scale was trained on the same model) adds the quality ratings of the summary and the hover."""

    model = RevisionModel.load()
    if model is None:
        return None
    scale = shipped_scale() if embed is not None else None
    if scale is None or (index is not None and not compatible(scale.model_id, index)):
        embed, scale = None, None
    return RevisionJudge(model, FeatureReader(llm, embed=embed), scale)
