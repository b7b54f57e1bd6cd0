"""What every `bench drafts` suite shares: the corpus, its index, the LLM, the report and the splits."""

from __future__ import annotations

import hashlib
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np

from ...analyzers.drafts.heads import paper_matrix
from ...analyzers.drafts.scoring import ChunkScore, DraftScorer
from ...retrieval.retriever import Retriever
from ...types import text_hash
from ...index.papers import Paper
from ..harness.results import print_table, write_result
from ...llm.base import LLMUnavailable
from ...llm import select  # `select.make_llm` at call time: tests and benches put their own LLM there

FORTUNES = Path("/usr/share/games/fortunes")
FORTUNE_FILES = ("fortunes", "literature", "riddles")
ARXIVEDITS = Path(__file__).resolve().parents[3] / "shared" / "data" / "arxivedits"
ACM_CR = ARXIVEDITS.parent / "acm-cr" / "corpus.jsonl.gz"
# ACM-CR venues of fields no proceedings corpus of peerlint holds: HCI, databases, theory of computing
OUT_OF_FIELD = {"CHI": "HCI", "UIST": "HCI", "CSCW": "HCI", "UBICOMP": "HCI", "MOBILEHCI": "HCI", "IJHC": "HCI",
                "SIGMOD": "databases", "PODS": "databases", "VLDB": "databases", "SICOMP": "theory"}


def log(message: str) -> None:
    print(f"bench drafts: {message}", file=sys.stderr, flush=True)


class BenchError(RuntimeError):
    """A missing dataset or tool; the message says how to get it."""


@dataclass
class Bench:
    """What every suite shares: the corpus, its index, the LLM scorer and cached embeddings."""

    args: object
    papers: list[Paper]
    index: object
    sources: list[str]
    _llm: object = None
    _cached: bool | None = None
    _scorer: DraftScorer | None = None
    _fluency: object = None
    llm_calls: int = 0
    llm_seconds: float = 0.0
    _paper_vectors: np.ndarray | None = None
    by_id: dict[str, Paper] = field(default_factory=dict)

    def __post_init__(self):
        self.retriever = Retriever(self.index)
        self.by_id = {p.id: p for p in self.papers}

    # -- services ---------------------------------------------------------------------------
    def llm(self, cache: bool = True):
        """The backend, behind the persistent answer cache unless `cache=False` (consistency, latency)."""

        if self._llm is None or self._cached != cache:
            self._llm, self._cached = select.make_llm(self.args.backend, self.args.model, cache=cache), cache
        return self._llm

    def fluency_llm(self):
        """The LM whose log-likelihoods are the fluency features (revisions model, acceptance prior):
        `--fluency-model`, else the judge (`--model`). A judge comparison keeps it fixed, so that only
        the judge's ratings differ between runs (and a 1.5B model need not score 1,200 sentences)."""
        name = getattr(self.args, "fluency_model", None)
        if name == "none":
            raise LLMUnavailable("--fluency-model none")
        if not name or name == self.args.model:
            return self.llm()
        if self._fluency is None:
            self._fluency = select.make_llm("embedded", name)
        return self._fluency

    def scorer(self, cache: bool = True) -> DraftScorer:
        llm = self.llm(cache)
        if self._scorer is None or self._scorer.llm is not llm:
            self._scorer = DraftScorer(llm, self.retriever)
        return self._scorer

    def rate(self, text: str, aspect: str = "quality", scorer: DraftScorer | None = None, **kw) -> ChunkScore:
        """One LLM rating, timed and counted."""
        start = time.perf_counter()
        result = (scorer or self.scorer()).score(text, aspect, **kw)
        self.llm_seconds += time.perf_counter() - start
        self.llm_calls += 1
        return result

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return np.asarray(self.retriever.vectors(list(texts), [text_hash(t) for t in texts]), dtype=np.float64)

    def paper_vectors(self) -> np.ndarray:
        """One vector per indexed paper (mean of its chunks), rows in index order."""
        if self._paper_vectors is None:
            self._paper_vectors = paper_matrix(self.index).astype(np.float64)
        return self._paper_vectors

    def vector_of(self, papers: Sequence[Paper]) -> np.ndarray:
        rows = [self.index.id_to_idx.get(p.id) for p in papers]
        if all(r is not None for r in rows):
            return self.paper_vectors()[rows]
        return self.embed([p.text for p in papers])

    def abstract_vectors(self, texts: Sequence[str]) -> np.ndarray:
        """One unit vector per text as `paper_matrix` makes it for indexed papers: the mean of its
        200-token chunks' vectors."""
        pieces, owner = [], []
        for i, text in enumerate(texts):
            spans = self.index.embedder.split(text, 200) or []
            chunks = [text[s.start:s.end] for s in spans] or [text]
            pieces += chunks
            owner += [i] * len(chunks)
        V = self.embed(pieces)
        sums = np.zeros((len(texts), V.shape[1]))
        np.add.at(sums, np.array(owner), V)
        return sums / np.maximum(np.linalg.norm(sums, axis=1, keepdims=True), 1e-12)

    def first_chunk(self, text: str) -> str:
        """The first 200-token chunk (Appendix B.5 segmentation); the LLM suites rate only this one."""
        spans = self.index.embedder.split(text, 200)
        return text[spans[0].start:spans[0].end] if spans else text

    def model_name(self) -> str:
        llm = self._llm
        return f"{getattr(llm, 'name', '?')}:{getattr(llm, 'model', '?')}" if llm is not None else "-"

    def fluency_name(self) -> str:
        llm = getattr(self, "_fluency", None)
        return f"{getattr(llm, 'name', '?')}:{getattr(llm, 'model', '?')}" if llm is not None else self.model_name()

    # -- output -----------------------------------------------------------------------------
    def report(self, suite: str, dataset: dict, tables: list[tuple[str, list[str], list[list]]], payload: dict) -> Path:
        for title, headers, rows in tables:
            print_table(rows, headers, title=title)
        record = {"suite": suite, "dataset": dataset, "corpus": self.sources, "index": str(self.index.root),
                  "llm": self.model_name(), "fluency_llm": self.fluency_name(), "llm_calls": self.llm_calls, "llm_seconds": round(self.llm_seconds, 1),
                  "limit": self.args.limit, **payload}
        path = write_result(self.args.out, f"drafts-{suite}", record)
        print(f"wrote {path}", flush=True)
        return path


def stable_split(key: str, test_share: float = 0.5) -> bool:
    """True for the held-out side: a hash of the text, so every run and machine splits alike."""
    return int(hashlib.blake2b(key.encode(), digest_size=4).hexdigest(), 16) / 2**32 < test_share


@dataclass(frozen=True)
class OutOfField:
    """A real abstract of a field the index does not hold."""

    id: str
    venue: str
    field: str
    text: str


def load_out_of_field(held_venues, per_venue: int = 30, path: Path = ACM_CR) -> list[OutOfField]:
    """Up to `per_venue` abstracts (200+ characters, seed 0) of each OUT_OF_FIELD venue of ACM-CR that the
    index does not hold (`held_venues`, any case): what "reads unlike every indexed venue" is tuned on."""
    import gzip
    import json
    import random

    if not path.is_file():
        raise BenchError(f"no ACM-CR corpus at {path}: the out-of-field rows need ../shared/data/acm-cr")
    held = {str(v).lower() for v in held_venues}
    wanted = {v for v in OUT_OF_FIELD if v.lower() not in held}
    by_venue: dict[str, list[OutOfField]] = {}
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            if d.get("venue") in wanted and len(d.get("abstract") or "") >= 200:
                by_venue.setdefault(d["venue"], []).append(
                    OutOfField(d["id"], d["venue"], OUT_OF_FIELD[d["venue"]], d["abstract"]))
    rng = random.Random(0)
    return [x for v in sorted(by_venue) for x in rng.sample(by_venue[v], min(per_venue, len(by_venue[v])))]


def load_fortunes() -> tuple[list[str], str]:
    """Informal English from Debian's fortunes-min package, and a line naming that source."""
    files = [FORTUNES / f for f in FORTUNE_FILES if (FORTUNES / f).is_file()]
    if not files:
        raise BenchError(f"no fortune files under {FORTUNES}: install them with "
                         "`apt-get update && apt-get install fortunes-min`")
    texts = []
    for f in files:
        for entry in f.read_text(encoding="utf-8", errors="replace").split("\n%\n"):
            entry = " ".join(entry.replace("%", " ").split())
            if entry:
                texts.append(entry)
    return texts, (f"Debian package fortunes-min (fortune-mod): {', '.join(str(f) for f in files)}; "
                   f"{len(texts)} fortune cookies (quips, literature quotes, riddles)")
