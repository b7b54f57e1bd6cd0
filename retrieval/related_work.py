"""SciPIP's SEC related-work retrieval: Semantics, Entities, Citation co-occurrence, then clustering.

Wang et al., "SciPIP" (Section 3.2), over peerlint's index:

1. **Semantics**: the query's `semantic_k` nearest papers from the shared first stage
   (`hybrid.py`): cosine of MiniLM embeddings (`first_stage="dense"`, SciPIP's), or dense and
   BM25 fused (`"hybrid"`, what the editor uses: the `searchMode` setting).
2. **Entities**: the query's entities (keyphrases it mentions that the index knows) plus those of
   its `seed_papers` nearest papers, expanded with the entities that co-occur with one of them in
   at least `min_cooccurrence` papers, then pruned IDF-style: the rarest are kept until they
   cover `entity_papers` papers. Papers holding any of them become candidates.
3. **Citation co-occurrence**: for each of the `cocite_seeds` best candidates, the
   `cocite_per_seed` papers most often cited together with it, from `Paper.references` in the
   index and/or an external file of reference lists. Reference lists of `exclude_citers` (the
   query's own paper, in a benchmark) never count.
4. **Clustering**: a paper whose embedding has cosine >= `duplicate_similarity` with a paper
   ranked above it is a near-duplicate: it moves behind every cluster head (SciPIP's
   one-paper-per-cluster filter), so the top of the list is not spent on copies.

SciPIP ranks its candidate union by cosine alone; with exact nearest-neighbour search that order
can never beat the semantic top-k itself (every paper closer than the k-th is already in it), so
here the entity and co-citation evidence also move a paper up: score = base
+ `entity_weight` x (IDF mass of the kept entities it holds, as a share of the best candidate's)
+ `cocite_weight` x (co-citation count, as a share of the best candidate's), where base is the
first stage's weighted score of every candidate (`hybrid.weighted_scores`: the cosine when dense,
cosine + `lexical_weight` x BM25 share when hybrid).
Every stage is a switch in `SECConfig`, so the bench can ablate each (SciPIP's Table 5).
"""

from __future__ import annotations

import dataclasses
import json
import threading
from collections import Counter, OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping, Sequence

import numpy as np

from ..index.entities import EntityTable, entity_table
from ..index.papers import Hit, SearchFilter
from . import hybrid
from .hybrid import LEXICAL_WEIGHT, Fusion, shares, weighted_scores

STAGES = ("semantic", "entities", "cocitation", "clustering")


@dataclass(frozen=True)
class SECConfig:
    """Switches and thresholds of SEC retrieval; the defaults are SciPIP's where it states one."""

    semantic_k: int = 100  # semantic candidates (SciPIP: 100)
    first_stage: str = "dense"  # dense (SciPIP), lexical or hybrid: where the semantic candidates come from
    lexical_weight: float = LEXICAL_WEIGHT  # of the BM25 share in the base score of a hybrid first stage
    entities: bool = True
    cocitation: bool = True
    clustering: bool = True
    seed_papers: int = 5  # nearest papers whose entities join the query's (SciPIP: 5)
    min_cooccurrence: int = 7  # papers an expansion entity must share with a seed entity (SciPIP: 7)
    entity_papers: int = 100  # rarest entities are kept until they cover this many papers (SciPIP: 100)
    entity_weight: float = 0.2  # tuned on ACM-CR's context-level truth only (0.05-0.3 all gain there)
    cocite_seeds: int = 30  # best candidates whose co-cited papers are looked up
    cocite_per_seed: int = 1  # co-cited papers taken per seed (SciPIP: 1)
    cocite_weight: float = 0.05
    duplicate_similarity: float = 0.95  # SciPIP's clustering threshold

    def only(self, stages: Iterable[str]) -> "SECConfig":
        """This config with exactly `stages` on (semantic is always on: it seeds every other stage)."""
        wanted = set(stages)
        unknown = wanted - set(STAGES)
        if unknown:
            raise ValueError(f"unknown stage(s) {', '.join(sorted(unknown))}: choose from {', '.join(STAGES)}")
        return dataclasses.replace(self, entities="entities" in wanted, cocitation="cocitation" in wanted,
                                   clustering="clustering" in wanted)


@dataclass(frozen=True)
class RelatedHit(Hit):
    """A retrieved paper with its SEC score and where it came from."""

    score: float = 0.0
    found_by: tuple[str, ...] = ()  # stages that put it among the candidates: semantic|lexical|hybrid, entities, cocitation
    entities: tuple[str, ...] = ()  # the kept entities it holds
    cocited: int = 0  # how often it is cited together with a better-ranked candidate
    duplicate_of: str = ""  # set by the clustering filter: the cluster head it repeats

    def to_json(self) -> dict:
        p = self.paper
        return {"id": p.id, "title": p.title, "venue": p.venue, "year": p.year, "similarity": round(self.similarity, 4),
                "score": round(self.score, 4), "found_by": list(self.found_by), "entities": list(self.entities),
                "cocited": self.cocited, "duplicate_of": self.duplicate_of}


class CitationGraph:
    """Reference lists (citing id -> cited ids) and the reverse postings, for co-citation counts."""

    def __init__(self, lists: Mapping[str, Sequence[str]], source: str, years: Mapping[str, int | None] | None = None):
        self.refs = {citer: tuple(dict.fromkeys(refs)) for citer, refs in lists.items() if refs}
        self.source = source
        self.years = dict(years or {})
        self.citers_of: dict[str, list[str]] = {}
        for citer, refs in self.refs.items():
            for ref in refs:
                self.citers_of.setdefault(ref, []).append(citer)

    def __len__(self) -> int:
        return len(self.refs)

    @classmethod
    def from_index(cls, index) -> "CitationGraph":
        """The reference lists the index's papers carry (the optional `references` corpus field)."""
        import sqlite3

        db = sqlite3.connect(f"file:{index.build / 'meta.sqlite'}?mode=ro", uri=True)
        try:
            rows = db.execute("SELECT id, year, refs FROM papers WHERE refs IS NOT NULL AND refs != '[]'").fetchall()
        finally:
            db.close()
        return cls({pid: json.loads(refs) for pid, _, refs in rows}, f"references of {len(rows):,} indexed papers",
                   {pid: year for pid, year, _ in rows})

    @classmethod
    def from_file(cls, path: Path | str) -> "CitationGraph":
        """JSONL of `{"id", "references": [ids]}` (or `"cited"`, as in a ground-truth file of citing papers)."""
        lists: dict[str, list[str]] = {}
        years: dict[str, int | None] = {}
        with open(path, encoding="utf-8") as fh:
            for n, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                    refs = row.get("references", row.get("cited")) or []
                    if not isinstance(row, dict) or not isinstance(refs, list):
                        raise ValueError("not an object with a list of references")
                except ValueError as exc:
                    raise ValueError(f"{path}:{n}: {exc}") from None
                citer = str(row.get("id") or f"{path}:{n}")
                lists.setdefault(citer, []).extend(str(r) for r in refs)
                years[citer] = row.get("year") if isinstance(row.get("year"), int) else None
        return cls(lists, f"reference lists of {len(lists):,} papers in {Path(path).name}", years)

    def merged(self, other: "CitationGraph") -> "CitationGraph":
        if not len(other):
            return self
        if not len(self):
            return other
        lists = {c: list(r) for c, r in self.refs.items()}
        for citer, refs in other.refs.items():
            lists.setdefault(citer, []).extend(refs)
        return CitationGraph(lists, f"{self.source} + {other.source}", {**self.years, **other.years})

    def cocited(self, seed: str, exclude_citers: frozenset[str] = frozenset(), year_max: int | None = None) -> Counter:
        """Papers cited together with `seed`, with how many (allowed) citing papers cite both."""
        counts: Counter = Counter()
        for citer in self.citers_of.get(seed, ()):
            if citer in exclude_citers:
                continue
            year = self.years.get(citer)
            if year_max is not None and year is not None and year > year_max:
                continue
            counts.update(r for r in self.refs[citer] if r != seed)
        return counts


class RelatedWork:
    """SEC retrieval over one open `VectorIndex`; thread-safe, entity postings loaded once per index."""

    def __init__(self, index, config: SECConfig | None = None, graph: CitationGraph | None = None):
        self.index = index
        self.config = config or SECConfig()
        self._graph = graph
        self._entities: EntityTable | None = None
        self._lock = threading.Lock()
        self._chunk_ptr = index.chunk_ptr  # the store checked that chunks are in paper order

    # -- shared state --------------------------------------------------------------------
    @property
    def entities(self) -> EntityTable:
        with self._lock:
            if self._entities is None:
                self._entities = entity_table(self.index)
            return self._entities

    @property
    def graph(self) -> CitationGraph:
        with self._lock:
            if self._graph is None:
                self._graph = CitationGraph.from_index(self.index)
            return self._graph

    def graph_source(self) -> str:
        """Where co-citations come from, or "n/a" when no reference list is known."""
        return self.graph.source if len(self.graph) else "n/a"

    # -- retrieval -----------------------------------------------------------------------
    def search(self, text: str, k: int = 10, flt: SearchFilter | None = None,
               exclude_citers: Iterable[str] = (), config: SECConfig | None = None) -> list[RelatedHit]:
        if not text.strip():
            return []
        return self.search_vector(self.index.embed([text])[0], text, k, flt, exclude_citers, config)

    def search_vector(self, query: np.ndarray, text: str, k: int = 10, flt: SearchFilter | None = None,
                      exclude_citers: Iterable[str] = (), config: SECConfig | None = None) -> list[RelatedHit]:
        """Top-k papers for a query vector (and its text, for entities), ranked by SEC score."""
        cfg = config or self.config
        if k <= 0 or len(self.index) == 0:
            return []
        query = np.asarray(query, dtype=np.float32).reshape(-1)
        mask = self.index.allowed_mask(flt)
        mode = hybrid.check_mode(cfg.first_stage) if self.index.has_lexical else "dense"
        first = hybrid.search(self.index, query, text, max(cfg.semantic_k, k), flt, mode,
                              Fusion(weight=cfg.lexical_weight))
        stage = "semantic" if mode == "dense" else mode
        found: dict[int, set[str]] = {}
        for hit in first:
            found.setdefault(self.index.id_to_idx[hit.paper.id], set()).add(stage)
        matched: dict[int, list[int]] = {}
        idf = np.zeros(0)
        if cfg.entities:
            kept, idf = self._entity_set(text, list(found)[: cfg.seed_papers], mask, cfg)
            matched = self._holders(kept, mask)
            for pidx in matched:
                found.setdefault(pidx, set()).add("entities")
        entity_share = shares({p: float(idf[ents].sum()) for p, ents in matched.items()})
        sims = self._similarities(query, list(found))
        bm25 = self.index.lexical_scores(text, flt) if mode != "dense" else {}

        def scored() -> dict[int, float]:
            base = weighted_scores(sims, bm25, mode, cfg.lexical_weight)
            return {p: base[p] + cfg.entity_weight * entity_share.get(p, 0.0) for p in found}

        score = scored()
        cocited: Counter = Counter()
        if cfg.cocitation and len(self.graph):
            cocited = self._cocited(score, mask, frozenset(exclude_citers), flt, cfg)
            new = [p for p in cocited if p not in found]
            sims.update(self._similarities(query, new))
            cocite_share = shares(cocited)
            for p in cocite_share:
                found.setdefault(p, set()).add("cocitation")
            score = scored()
            for p, share in cocite_share.items():
                score[p] += cfg.cocite_weight * share
        ranked = sorted(score, key=lambda p: (-score[p], p))
        order, dup_of = self._clustered(ranked, k, cfg) if cfg.clustering else (ranked, {})
        entities = self.entities if matched else None
        return [RelatedHit(self.index.paper(p), sims[p], score=score[p],
                           found_by=tuple(s for s in ("semantic", "lexical", "hybrid", "entities", "cocitation")
                                          if s in found[p]),
                           entities=tuple(entities.texts[e] for e in matched.get(p, ())) if entities else (),
                           cocited=int(cocited.get(p, 0)),
                           duplicate_of=self.index.ids[dup_of[p]] if p in dup_of else "")
                for p in order[:k]]

    # -- stages ----------------------------------------------------------------------------
    def _entity_set(self, text: str, seeds: Sequence[int], mask: np.ndarray | None,
                    cfg: SECConfig) -> tuple[np.ndarray, np.ndarray]:
        """Kept entity ids (rarest first) and the per-entity IDF array (over allowed papers)."""
        table = self.entities
        allowed = table.papers if mask is None else int(mask.sum())
        start = set(table.link(text)) | set(table.entities_of_papers(seeds).tolist())
        candidates = set(start)
        for eid in start:  # expansion by co-occurrence (SciPIP: >= 7 papers)
            holders = table.papers_of([eid])
            if mask is not None:
                holders = holders[mask[holders]]
            if len(holders) < cfg.min_cooccurrence:
                continue
            ents, counts = np.unique(table.entities_of_papers(holders), return_counts=True)
            candidates.update(ents[counts >= cfg.min_cooccurrence].tolist())
        ids = np.array(sorted(candidates), dtype=np.int64)
        df = self._df(ids, mask)
        idf = np.zeros(len(table.texts))
        idf[ids] = np.log((1 + allowed) / (1 + df))
        kept: list[int] = []
        covered = 0
        for i in np.lexsort((ids, df)):  # rarest first (SciPIP: until 100 papers are covered)
            if df[i] == 0:
                continue
            if covered + df[i] > cfg.entity_papers:
                break  # sorted by df: every later entity covers more
            kept.append(int(ids[i]))
            covered += int(df[i])
        return np.array(kept, dtype=np.int64), idf

    def _df(self, ids: np.ndarray, mask: np.ndarray | None) -> np.ndarray:
        table = self.entities
        if mask is None:
            return table.df[ids]
        lens = table.df[ids]  # every stored entity has at least one paper, so no segment is empty
        if len(ids) == 0:
            return lens
        return np.add.reduceat(mask[table.papers_of(ids)].astype(np.int64), np.cumsum(lens) - lens)

    def _holders(self, kept: np.ndarray, mask: np.ndarray | None) -> dict[int, list[int]]:
        """Allowed papers holding any kept entity -> the kept entities each holds."""
        table = self.entities
        out: dict[int, list[int]] = {}
        for eid in kept.tolist():
            for p in table.papers_of([eid]).tolist():
                if mask is None or mask[p]:
                    out.setdefault(p, []).append(eid)
        return out

    def _cocited(self, score: dict[int, float], mask: np.ndarray | None, exclude_citers: frozenset[str],
                 flt: SearchFilter | None, cfg: SECConfig) -> Counter:
        """Papers most co-cited with the best candidates, with their summed co-citation counts."""
        ids = self.index.ids
        year_max = flt.year_max if flt is not None else None
        seeds = sorted(score, key=lambda p: -score[p])[: cfg.cocite_seeds]
        total: Counter = Counter()
        for seed in seeds:
            counts = self.graph.cocited(ids[seed], exclude_citers, year_max)
            ranked = [(n, self.index.id_to_idx[r]) for r, n in counts.items() if r in self.index.id_to_idx]
            ranked = [(n, p) for n, p in ranked if (mask is None or mask[p]) and p != seed]
            for n, p in sorted(ranked, key=lambda t: (-t[0], t[1]))[: cfg.cocite_per_seed]:
                total[p] += n
        return total

    def _clustered(self, ranked: list[int], k: int, cfg: SECConfig) -> tuple[list[int], dict[int, int]]:
        """SciPIP's clustering filter, one paper per cluster of near-duplicates (cosine >= threshold).

        A cluster keeps the place of its best-ranked member, and is represented there by its
        earliest publication (a reprint or a republished version comes later; citing authors cite
        the original); the other members step back behind every other candidate. Only the top of
        the ranking is clustered: what k can reach. Returns the new order and member -> its head.
        """
        pool = ranked[: 2 * k + 10]
        vecs = self.paper_vectors(pool)
        seeds: list[int] = []  # pool positions of each cluster's best-ranked member
        members: dict[int, list[int]] = {}
        for i in range(len(pool)):
            if seeds:
                sims = vecs[seeds] @ vecs[i]
                j = int(np.argmax(sims))
                if sims[j] >= cfg.duplicate_similarity:
                    members[seeds[j]].append(i)
                    continue
            seeds.append(i)
            members[i] = [i]
        years = self.index.years
        order: list[int] = []
        dup_of: dict[int, int] = {}
        for seed in seeds:
            group = [pool[i] for i in members[seed]]
            head = min(group, key=lambda p: (years[p] if years[p] >= 0 else 1 << 30, group.index(p)))
            order.append(head)
            dup_of.update({p: head for p in group if p != head})
        order += ranked[len(pool):]
        return order + [p for p in pool if p in dup_of], dup_of

    # -- vectors ---------------------------------------------------------------------------
    def _similarities(self, query: np.ndarray, papers: Sequence[int]) -> dict[int, float]:
        """Cosine of each paper's best chunk with the query (what `search_vector` reports)."""
        return {p: sim for p, (sim, _) in self.index.best_chunks(query, papers).items()}

    def paper_vectors(self, papers: Sequence[int]) -> np.ndarray:
        """One unit vector per paper: the mean of its chunk vectors."""
        out = np.zeros((len(papers), self.index.vectors.shape[1]), dtype=np.float32)
        for i, p in enumerate(papers):
            v = np.asarray(self.index.vectors[self._chunk_ptr[p] : self._chunk_ptr[p + 1]], dtype=np.float32).mean(0)
            out[i] = v / (np.linalg.norm(v) or 1.0)
        return out


_shared: OrderedDict[int, RelatedWork] = OrderedDict()
_shared_lock = threading.Lock()
SHARED = 4  # indexes a process keeps a retriever for (a reindex opens a new one)


def related_work_for(index) -> RelatedWork:
    """One `RelatedWork` per open index, shared by the editor's analyzers."""
    with _shared_lock:
        found = _shared.get(id(index))
        if found is None or found.index is not index:
            found = _shared[id(index)] = RelatedWork(index)
        _shared.move_to_end(id(index))
        while len(_shared) > SHARED:
            _shared.popitem(last=False)
        return found
