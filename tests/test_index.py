"""The index on real shipped abstracts: build, search, filters, incremental builds, crashes, damage.

Everything here builds small indexes (40-odd papers) into tmp_path with the real MiniLM model,
which loads once per module. Builds that only need to differ from the module's index copy its
directory first, so the embedding cache makes them cost seconds, not a re-embedding.
"""

from __future__ import annotations

import dataclasses
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import peerlint.index.store as store_module
from peerlint.index.build import build_index
from peerlint.index.embedding.embedder import Embedder
from conftest import shipped_papers
from peerlint.index.papers import Paper, SearchFilter
from peerlint.index.store import EXACT_FRACTION, IndexCorrupt, IndexMissing, open_index

REPO = Path(__file__).resolve().parents[1]
GROUPS = [("ACL", 2021), ("COLING", 2020), ("ICLR", 2017), ("NeurIPS", 2010), ("NeurIPS", 1995),
          ("CVPR", 2015), ("ICML", 2013), ("COLT", 2016), ("AISTATS", 2019), ("UAI", 2020)]
PER_GROUP = 4
# Two ICLR 2017 papers get exact dates, so `before` is tested on dated and year-only papers alike.
DATED = {0: "2017-02-01", 1: "2017-09-01"}


@pytest.fixture(scope="module", autouse=True)
def embed_for_real():
    """These tests are about embedding and caching: the shipped vectors would hold their papers already."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PEERLINT_SHIPPED_VECTORS", "")
        yield


@pytest.fixture(scope="module")
def corpus() -> dict[tuple[str, int], list[Paper]]:
    by_group: dict[tuple[str, int], list[Paper]] = {}
    for paper in shipped_papers():
        by_group.setdefault((paper.venue, paper.year), []).append(paper)
    return by_group


@pytest.fixture(scope="module")
def papers(corpus) -> list[Paper]:
    """40 real papers, 4 from each of 10 venue-years; two ICLR 2017 ones carry ISO dates."""
    chosen: list[Paper] = []
    for group in GROUPS:
        for i, paper in enumerate(corpus[group][:PER_GROUP]):
            if group == ("ICLR", 2017) and i in DATED:
                paper = dataclasses.replace(paper, date=DATED[i])
            chosen.append(paper)
    return chosen


@pytest.fixture(scope="module")
def extra_papers(corpus) -> list[Paper]:
    """10 more papers, none of them in `papers`."""
    return corpus[("ICML", 2016)][:5] + corpus[("CVPR", 2017)][:5]


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return Embedder("torch")


@pytest.fixture(scope="module")
def built(tmp_path_factory, papers, embedder):
    root = tmp_path_factory.mktemp("index") / "idx"
    report = build_index(papers, root, embedder, sources=["test"], show_progress=False)
    return root, report


@pytest.fixture(scope="module")
def index(built, embedder):
    vi = open_index(built[0], embedder)
    yield vi
    vi.close()


def copy_index(built, tmp_path: Path) -> Path:
    target = tmp_path / "copy"
    shutil.copytree(built[0], target)
    return target


def n_chunks(embedder: Embedder, papers: list[Paper]) -> int:
    return sum(len(spans) for spans in embedder.split_many([p.text for p in papers]))


def brute_force(vi, query: np.ndarray, k: int, allowed: set[str] | None) -> list[str]:
    """Top-k paper ids by best-chunk cosine, straight from the stored vectors."""
    sims = np.asarray(vi.vectors, dtype=np.float32) @ query
    best: dict[int, float] = {}
    for key, sim in enumerate(sims):
        pidx = int(vi.chunk_paper[key])
        if allowed is not None and vi.ids[pidx] not in allowed:
            continue
        best[pidx] = max(best.get(pidx, -2.0), float(sim))
    return [vi.ids[p] for p in sorted(best, key=lambda p: -best[p])[:k]]


def run_cli(*args: str, env_extra: dict | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", **(env_extra or {})}
    return subprocess.run([sys.executable, "-m", "peerlint", *args], capture_output=True, text=True,
                          timeout=120, cwd=REPO, env=env)


# -- build → open → search ------------------------------------------------------------------

def test_cold_build_embeds_every_chunk(built, papers, embedder):
    _root, report = built
    assert report.papers == len(papers)
    assert report.chunks == n_chunks(embedder, papers) > len(papers)  # some abstracts need two chunks
    assert (report.embedded, report.cached) == (report.chunks, 0)


def test_own_abstract_comes_first(index, papers):
    for paper in papers[::5]:
        hits = index.search(paper.text, k=5)  # the text that was indexed: title and abstract
        assert hits[0].paper.id == paper.id
        assert hits[0].paper == paper  # metadata survives the round trip through SQLite
        chunks = [(int(a), int(b)) for a, b in index.chunk_spans[index.chunk_paper == index.id_to_idx[paper.id]]]
        if len(chunks) == 1:
            assert hits[0].similarity > 0.95
        for start, end in chunks:  # a long abstract is found by each of its chunks
            hit = index.search(paper.text[start:end], k=1)[0]
            assert (hit.paper.id, hit.chunk_start, hit.chunk_end) == (paper.id, start, end)
            assert hit.similarity > 0.95


def test_a_batch_of_queries_ranks_as_each_query_alone(index, papers, embedder):
    """The server searches a draft's paragraphs in one batched graph search: the same papers, chunks and
    similarities as one search per paragraph, with and without a filter, for one query and for none."""
    queries = embedder.encode([p.text[: len(p.text) // 2] for p in papers[::3]])
    flt = SearchFilter(year_max=2016)
    for f in (None, flt):
        alone = [index.dense_ranked(q, 7, f) for q in queries]
        assert index.dense_ranked_many(queries, 7, f) == alone
        assert all(len(r) == 7 for r in alone)
    assert index.dense_ranked_many(queries[:1], 7) == [index.dense_ranked(queries[0], 7)]
    assert index.dense_ranked_many(queries[:0], 7) == []
    exact = index.dense_ranked_many(queries, 7, flt, exact=True)  # the vectors read once for the batch
    assert exact == [index.dense_ranked(q, 7, flt, exact=True) for q in queries]
    allowed = {p.id for p in papers if 0 <= p.year <= 2016}
    assert [[index.ids[p] for p, _, _ in r] for r in exact] == [brute_force(index, q, 7, allowed) for q in queries]


def test_only_a_searching_caller_reads_the_index_ahead(built, monkeypatch):
    """Reading the graph, vectors and BM25 postings into the page cache is for processes that will search;
    `index info` and `doctor` open the index only for its statistics (at 3M papers the read-ahead is ~10 s)."""
    read: list[str] = []
    monkeypatch.setattr(store_module, "prefetch", lambda path, budget: read.append(path.name) or True)
    open_index(built[0], read_ahead=False).close()
    assert read == []
    open_index(built[0]).close()
    assert read == ["vectors.usearch", "vectors.npy", "lexical-docs.npy", "lexical-tf.npy"]


def _columns_of(root: Path) -> tuple:
    vi = open_index(root, read_ahead=False)
    try:
        return (list(vi.ids), list(vi.venues), list(vi.dates), vi.years.tolist(), vi.chunk_paper.tolist(),
                vi.chunk_spans.tolist())
    finally:
        vi.close()


def test_opening_reads_the_builds_columns_file_and_ignores_a_stale_or_damaged_one(built, tmp_path, papers):
    """columns.npz spares an opening server the scan of meta.sqlite; it must say what that scan says,
    and one not of this meta.sqlite (another size) or cut short is not read."""
    root = copy_index(built, tmp_path)
    columns = root / "builds" / (root / "CURRENT").read_text().strip() / store_module.COLUMNS_FILE
    assert columns.exists()
    from_file = _columns_of(root)
    assert from_file[0] == [p.id for p in papers] and from_file[2] == [p.date for p in papers]
    assert from_file[1][0] == papers[0].venue.lower() and from_file[3][0] == papers[0].year
    original = columns.read_bytes()
    columns.unlink()
    assert _columns_of(root) == from_file  # the scan of meta.sqlite
    with np.load(io.BytesIO(original)) as data:
        stale = {name: data[name] for name in data.files}
    stale["meta_bytes"] = np.int64(int(stale["meta_bytes"]) + 4096)  # as after a later write to the metadata
    stale["years"] = stale["years"] + 1
    np.savez(columns, **stale)
    assert _columns_of(root) == from_file
    columns.write_bytes(original[: len(original) // 2])
    assert _columns_of(root) == from_file


def test_hits_are_one_per_paper_and_k_is_respected(index, papers):
    long_paper = max(papers, key=lambda p: len(p.text))
    assert int(np.sum(index.chunk_paper == index.id_to_idx[long_paper.id])) > 1
    for k in (1, 3, 10, 40, 100):
        hits = index.search(long_paper.text, k=k)
        ids = [h.paper.id for h in hits]
        assert len(ids) == min(k, len(papers)) and len(set(ids)) == len(ids)
        sims = [h.similarity for h in hits]
        assert sims == sorted(sims, reverse=True)
    assert index.search(long_paper.text, k=0) == []
    hit = index.search(long_paper.text, k=1)[0]
    assert 0 <= hit.chunk_start < hit.chunk_end <= len(long_paper.text)


# -- filters --------------------------------------------------------------------------------

def _ids(hits) -> list[str]:
    return [h.paper.id for h in hits]


def test_venue_filter_is_case_insensitive(index, papers):
    query = "graph neural networks for structured prediction"
    for venues in (("ICML",), ("icml",), ("IcMl", "cvpr")):
        hits = index.search(query, k=40, flt=SearchFilter(venues=venues))
        wanted = {v.lower() for v in venues}
        assert hits and {h.paper.venue.lower() for h in hits} <= wanted
        assert len(hits) == sum(p.venue.lower() in wanted for p in papers)


def test_year_range(index, papers):
    hits = index.search("learning theory", k=40, flt=SearchFilter(year_min=2015, year_max=2019))
    assert sorted(_ids(hits)) == sorted(p.id for p in papers if 2015 <= p.year <= 2019)


@pytest.mark.parametrize("before, early_in, late_in", [
    ("2017", False, False),  # a year: only papers of 2016 and before
    ("2017-06-01", True, False),  # a date: dated papers by date, year-only 2017 papers are out
    ("2017-12-31", True, True),
])
def test_before_year_or_date(index, papers, before, early_in, late_in):
    def allowed(p: Paper) -> bool:  # year-granular papers count only when their whole year is earlier
        if p.date and len(before) > 4:
            return p.date < before
        return p.year < int(before[:4])

    hits = index.search("deep learning", k=40, flt=SearchFilter(before=before))
    assert set(_ids(hits)) == {p.id for p in papers if allowed(p)}
    early = next(p for p in papers if p.date == DATED[0])
    late = next(p for p in papers if p.date == DATED[1])
    undated_2017 = next(p for p in papers if p.year == 2017 and not p.date)
    assert (early.id in _ids(hits), late.id in _ids(hits)) == (early_in, late_in)
    assert undated_2017.id not in _ids(hits)


def test_bad_before_value_is_a_clear_error(index):
    with pytest.raises(ValueError, match="year or an ISO date"):
        index.search("x", flt=SearchFilter(before="last spring"))


def test_exclude_ids(index, papers):
    target = papers[5]
    assert index.search(target.abstract, k=1)[0].paper.id == target.id
    hits = index.search(target.abstract, k=40, flt=SearchFilter(exclude_ids=frozenset({target.id, "no-such-id"})))
    assert target.id not in _ids(hits) and len(hits) == len(papers) - 1


def test_selective_filter_matches_brute_force(index, papers, embedder):
    colt = [p.id for p in papers if p.venue == "COLT"]
    flt = SearchFilter(venues=("COLT",), exclude_ids=frozenset(colt[:1]))
    mask = index.allowed_mask(flt)
    assert mask.mean() < EXACT_FRACTION  # so search_vector takes the exact path
    query = embedder.encode(["online learning with bandit feedback and regret bounds"])[0]
    got = _ids(index.search_vector(query, k=10, flt=flt))
    assert got == brute_force(index, query, 10, set(colt[1:]))
    assert got == _ids(index.search_vector(query, k=10, flt=flt, exact=True))


def test_broad_filter_on_hnsw_matches_brute_force(index, papers, embedder):
    flt = SearchFilter(year_min=2010)
    assert index.allowed_mask(flt).mean() >= EXACT_FRACTION  # HNSW path
    allowed = {p.id for p in papers if p.year >= 2010}
    for text in ("image segmentation with convolutional networks", "word alignment for translation"):
        query = embedder.encode([text])[0]
        got, expected = _ids(index.search_vector(query, k=10, flt=flt)), brute_force(index, query, 10, allowed)
        assert got[0] == expected[0] and set(got) == set(expected)  # float16 near-ties may swap neighbours


def test_filter_matching_nothing_gives_no_hits(index):
    assert index.search("anything", flt=SearchFilter(venues=("NoSuchVenue",))) == []
    assert index.search("anything", flt=SearchFilter(before="1900")) == []


# -- incremental ----------------------------------------------------------------------------

def test_incremental_build_embeds_only_new_chunks(built, tmp_path, papers, extra_papers, embedder):
    root = copy_index(built, tmp_path)
    report = build_index(papers + extra_papers, root, embedder, show_progress=False)
    new_chunks = n_chunks(embedder, extra_papers)
    assert report.papers == len(papers) + len(extra_papers)
    assert report.embedded == new_chunks
    assert report.cached == report.chunks - new_chunks == built[1].chunks
    again = build_index(papers + extra_papers, root, embedder, show_progress=False)
    assert (again.embedded, again.cached) == (0, report.chunks)
    vi = open_index(root, embedder)
    assert vi.search(extra_papers[3].abstract, k=1)[0].paper.id == extra_papers[3].id
    vi.close()


def test_changed_abstract_is_re_embedded(built, tmp_path, papers, embedder):
    root = copy_index(built, tmp_path)
    edited = dataclasses.replace(papers[0], abstract=papers[0].abstract + " We also release our code.")
    report = build_index([edited, *papers[1:]], root, embedder, show_progress=False)
    assert 1 <= report.embedded <= n_chunks(embedder, [edited])
    vi = open_index(root, embedder)
    assert vi.get(edited.id).abstract.endswith("release our code.")
    vi.close()


def test_a_large_graph_grows_in_a_child_process_with_the_same_results(built, tmp_path, papers, embedder, monkeypatch):
    """From GRAPH_CHILD_FROM vectors on, the graph is built by `python -m peerlint.index.graph_child`
    (here from 1): the index searches as the one built on a thread, and progress reaches the bar."""
    monkeypatch.setattr(store_module, "GRAPH_CHILD_FROM", 1)
    seen = []
    real = store_module._follow
    monkeypatch.setattr(store_module, "_follow", lambda child, progress: real(child, lambda d, t: seen.append((d, t)) or True))
    root = tmp_path / "child"
    build_index(papers, root, embedder, show_progress=False)
    assert seen and seen[-1][0] == seen[-1][1] == built[1].chunks
    vi, reference = open_index(root, embedder), open_index(built[0], embedder)
    for p in papers[:5]:
        assert _ids(vi.search(p.abstract, k=5)) == _ids(reference.search(p.abstract, k=5))
    vi.close()
    reference.close()


def test_a_failed_graph_child_is_a_clear_error_and_the_old_index_stays(built, tmp_path, papers, embedder, monkeypatch):
    root = copy_index(built, tmp_path)
    before = _live_ids(root, embedder)
    monkeypatch.setattr(store_module, "GRAPH_CHILD_FROM", 1)
    monkeypatch.setattr(store_module, "graph_dtype", lambda n: "no-such-scalar")
    with pytest.raises(OSError, match="building the HNSW graph failed"):
        build_index(papers[::-1], root, embedder, show_progress=False)
    assert _live_ids(root, embedder) == before


# -- atomic swaps ---------------------------------------------------------------------------

def _live_ids(root: Path, embedder) -> list[str]:
    vi = open_index(root, embedder)
    try:
        assert vi.search("neural networks", k=3)  # still searchable, not just openable
        return list(vi.ids)
    finally:
        vi.close()


def test_crash_while_writing_a_build_keeps_the_old_index(built, tmp_path, monkeypatch, papers, extra_papers,
                                                         embedder):
    import peerlint.index.build as build_module

    root = copy_index(built, tmp_path)
    before = _live_ids(root, embedder)
    current = (root / "CURRENT").read_text()

    def half_written(build, papers_, hashes, rows, vectors, manifest, progress=None, alongside=None):
        build.mkdir(parents=True)
        np.save(build / "vectors.npy", vectors[: len(vectors) // 2].astype(np.float16))
        raise OSError("simulated crash: disk full")

    monkeypatch.setattr(build_module, "write_build", half_written)
    with pytest.raises(OSError, match="simulated crash"):
        build_index(extra_papers, root, embedder, show_progress=False)
    assert (root / "CURRENT").read_text() == current
    assert _live_ids(root, embedder) == before
    assert len(list((root / "builds").iterdir())) == 2  # the live build and the half-written one
    monkeypatch.undo()

    def crash_before_swap(root_, build):
        raise KeyboardInterrupt  # e.g. Ctrl-C between writing the build and making it live

    monkeypatch.setattr(build_module, "make_live", crash_before_swap)
    with pytest.raises(KeyboardInterrupt):
        build_index(extra_papers, root, embedder, show_progress=False)
    assert _live_ids(root, embedder) == before

    monkeypatch.undo()
    monkeypatch.setattr(store_module, "KEEP_RECENT_S", 0)  # as if the failed builds were an hour old
    build_index(extra_papers, root, embedder, show_progress=False)
    assert _live_ids(root, embedder) == [p.id for p in extra_papers]
    builds = {b.name for b in (root / "builds").iterdir()}
    assert builds == {(root / "CURRENT").read_text().strip(), current.strip()}  # stale builds cleaned; the previous live one stays


def test_killed_build_process_keeps_the_old_index(built, tmp_path, embedder, papers, monkeypatch):
    """A real SIGKILL while a build process is writing its HNSW graph."""
    import pickle

    root = copy_index(built, tmp_path)
    before = _live_ids(root, embedder)
    reordered = papers[::-1]  # vectors and spans come from the cache, so it gets to writing fast
    (tmp_path / "papers.pickle").write_bytes(pickle.dumps(reordered))
    script = (
        "import pickle, sys, time\n"
        "import peerlint.index.build as b\n"
        "real = b.write_build\n"
        "def slow(*args, **kwargs):\n"
        "    def progress(done: int, total: int) -> bool:  # usearch checks the annotations\n"
        "        print('writing', flush=True)\n"
        "        time.sleep(30)\n"
        "        return True\n"
        "    return real(*args, **{**kwargs, 'progress': progress})\n"
        "b.write_build = slow\n"
        f"papers = pickle.loads(open({str(tmp_path / 'papers.pickle')!r}, 'rb').read())\n"
        f"b.build_index(papers, {str(root)!r}, show_progress=False)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "HF_HUB_OFFLINE": "1"})
    try:
        assert proc.stdout.readline().strip() == "writing"
    finally:
        proc.kill()
        proc.wait(timeout=30)
    assert _live_ids(root, embedder) == before
    assert len(list((root / "builds").iterdir())) == 2  # the half-written build is left behind...
    previous = (root / "CURRENT").read_text().strip()
    build_index(reordered, root, embedder, show_progress=False)
    assert _live_ids(root, embedder) == [p.id for p in reordered]
    assert len(list((root / "builds").iterdir())) == 3  # a young half-written build may be another writer's
    monkeypatch.setattr(store_module, "KEEP_RECENT_S", 0)
    build_index(papers, root, embedder, show_progress=False)
    kept = {b.name for b in (root / "builds").iterdir()}
    live = (root / "CURRENT").read_text().strip()
    assert previous not in kept and len(kept) == 2  # ...old ones go; the live and the one before stay
    assert live in kept and _live_ids(root, embedder) == [p.id for p in papers]


# -- damaged indexes ------------------------------------------------------------------------

def _live_build(root: Path) -> Path:
    return root / "builds" / (root / "CURRENT").read_text().strip()


def _truncate_vectors(root):
    f = _live_build(root) / "vectors.usearch"
    f.write_bytes(f.read_bytes()[: f.stat().st_size // 2])


def _garbage_vectors(root):
    (_live_build(root) / "vectors.usearch").write_bytes(os.urandom(4096))


def _delete_meta(root):
    (_live_build(root) / "meta.sqlite").unlink()


def _garbage_meta(root):
    (_live_build(root) / "meta.sqlite").write_bytes(b"not a database" * 100)


def _garbage_manifest(root):
    (_live_build(root) / "manifest.json").write_text("{ this is not json")


def _delete_vectors_npy(root):
    (_live_build(root) / "vectors.npy").unlink()


def _dangling_current(root):
    (root / "CURRENT").write_text("20990101T000000-gone")


def _missing_current(root):
    (root / "CURRENT").unlink()


DAMAGE = {
    "truncated vectors.usearch": (_truncate_vectors, IndexCorrupt),
    "garbage vectors.usearch": (_garbage_vectors, IndexCorrupt),
    "deleted meta.sqlite": (_delete_meta, IndexCorrupt),
    "garbage meta.sqlite": (_garbage_meta, IndexCorrupt),
    "garbage manifest.json": (_garbage_manifest, IndexCorrupt),
    "deleted vectors.npy": (_delete_vectors_npy, IndexCorrupt),
    "CURRENT points nowhere": (_dangling_current, IndexCorrupt),
    "no CURRENT": (_missing_current, IndexMissing),
}


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_damaged_index_raises_with_the_fix(built, tmp_path, damage):
    root = copy_index(built, tmp_path)
    breaker, error = DAMAGE[damage]
    breaker(root)
    with pytest.raises(error, match="peerlint index build"):
        open_index(root)


@pytest.mark.parametrize("damage", ["deleted meta.sqlite", "truncated vectors.usearch", "no CURRENT"])
def test_cli_reports_a_damaged_index_without_traceback(built, tmp_path, damage):
    root = copy_index(built, tmp_path)
    DAMAGE[damage][0](root)
    result = run_cli("search", "foo", "--index", str(root))
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith("peerlint: error:")]
    assert len(lines) == 1 and f"peerlint index build --index {root}" in lines[0]


def test_cli_reports_a_missing_index(tmp_path):
    result = run_cli("index", "info", "--index", str(tmp_path / "nowhere"))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "peerlint: error: no index at" in result.stderr and "peerlint index build" in result.stderr


# -- dimensions -----------------------------------------------------------------------------

def test_query_of_the_wrong_dimension(index):
    with pytest.raises(ValueError, match="100 dimensions, the index has 384"):
        index.search_vector(np.ones(100, dtype=np.float32))


def test_manifest_dimension_disagreeing_with_vectors(built, tmp_path):
    root = copy_index(built, tmp_path)
    manifest = _live_build(root) / "manifest.json"
    raw = json.loads(manifest.read_text())
    manifest.write_text(json.dumps(raw | {"dim": 128}))
    with pytest.raises(IndexCorrupt, match="wrong dimension.*peerlint index build"):
        open_index(root)


# -- corpus errors through the CLI ----------------------------------------------------------

def _snapshot(root: Path) -> dict[str, int]:
    return {str(p.relative_to(root)): p.stat().st_mtime_ns for p in root.rglob("*") if p.is_file()}


@pytest.mark.parametrize("corpus_kind", ["missing", "empty"])
def test_cli_build_refuses_a_missing_or_empty_corpus(built, tmp_path, corpus_kind):
    corpus = tmp_path / "corpus.jsonl"
    if corpus_kind == "empty":
        corpus.write_text("")
    fresh = tmp_path / "new-index"
    result = run_cli("index", "build", "--corpus", str(corpus), "--index", str(fresh), "--quiet")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "peerlint: error:" in result.stderr and str(corpus) in result.stderr
    assert not fresh.exists()

    existing = copy_index(built, tmp_path)
    before = _snapshot(existing)
    result = run_cli("index", "build", "--corpus", str(corpus), "--index", str(existing), "--quiet")
    assert result.returncode == 2
    assert _snapshot(existing) == before


# -- chunking -------------------------------------------------------------------------------

def test_split_many_spans(embedder, corpus):
    texts = sorted((p.text for p in corpus[("NeurIPS", 2016)]), key=len)[-20:]  # the longest abstracts
    texts += ["A short abstract.", "", "   \n\t "]
    spans_per_text = embedder.split_many(texts)
    assert len(spans_per_text) == len(texts)
    for text, spans in zip(texts, spans_per_text):
        if not text.strip():
            assert spans == []
            continue
        position = 0
        for span in spans:
            assert position <= span.start < span.end <= len(text)  # in order, no overlap
            assert not text[position : span.start].strip()  # only whitespace between spans
            assert embedder.count_tokens(text[span.start : span.end]) <= 200
            position = span.end
        assert not text[position:].strip()
    assert spans_per_text[-3] == [embedder.split("A short abstract.")[0]]
    assert len(spans_per_text[-3]) == 1 and spans_per_text[-3][0].end == len("A short abstract.")
    assert all(len(spans) >= 2 for spans in spans_per_text[:-3][-5:])  # the longest need several
    assert embedder.split_many([]) == []


def test_split_respects_a_smaller_budget(embedder, papers):
    text = max(papers, key=lambda p: len(p.text)).text
    spans = embedder.split(text, max_tokens=50)
    assert len(spans) >= 3
    assert all(embedder.count_tokens(text[s.start : s.end]) <= 50 for s in spans)


# -- CLI JSON -------------------------------------------------------------------------------

def test_cli_index_info_json(built, papers):
    result = run_cli("index", "info", "--json", "--index", str(built[0]))
    assert result.returncode == 0, result.stderr
    info = json.loads(result.stdout)
    assert info["papers"] == len(papers) and info["chunks"] == built[1].chunks
    assert info["model"] == "all-MiniLM-L6-v2@torch"
    assert info["venues"]["icml"] == PER_GROUP and info["years"] == [1995, 2021]
    assert info["bytes_on_disk"] > 0 and info["sources"] == ["test"] and info["build"]
    assert info["venue_names"]["icml"] == "ICML" and set(info["venue_names"]) == set(info["venues"])
    shown = run_cli("index", "info", "--index", str(built[0]))
    assert f"papers:  {len(papers):,}" in shown.stdout and "years: 1995–2021" in shown.stdout
    assert f"ICML {PER_GROUP}" in shown.stdout and "icml" not in shown.stdout


def test_index_info_names_the_largest_venues_as_written_and_counts_the_rest():
    from peerlint.server.commands.index import venue_summary

    counts, names = {"neurips": 30_402, "sdp": 130, "icml": 14_266, "": 3}, {"neurips": "NeurIPS", "sdp": "SDP"}
    assert venue_summary(counts, names, shown=4) == "NeurIPS 30,402, icml 14,266, SDP 130, ? 3"
    assert venue_summary(counts, names, shown=2) == ("NeurIPS 30,402, icml 14,266, and 2 more venues with 133 papers "
                                                     "(`peerlint index info --json` lists every one)")
    assert "and 1 more venue with 3 papers" in venue_summary(counts, names, shown=3)


def test_cli_search_json(built, papers, capsys):
    from peerlint.server.cli import main

    target = papers[12]
    assert main(["search", target.title, "-k", "3", "--json", "--index", str(built[0])]) == 0
    hits = json.loads(capsys.readouterr().out)
    assert len(hits) == 3
    assert set(hits[0]) == {"id", "title", "venue", "year", "similarity", "score", "url"}
    assert hits[0]["id"] == target.id and hits[0]["title"] == target.title
    assert all(-1 <= h["similarity"] <= 1 for h in hits)
    assert main(["search", target.title, "-k", "3", "--json", "--venue", "UAI", "--before", "2020",
                 "--index", str(built[0])]) == 0
    assert json.loads(capsys.readouterr().out) == []  # the only UAI papers are from 2020


def test_whole_index_texts_come_in_one_pass_that_keeps_no_paper(vector_index, monkeypatch):
    """What fits the novelty lexicon reads every paper's text: the same as each paper's, without decoding
    every record into the paper cache (on the default index that held ~700 MB for the server's life)."""
    from peerlint.index import store

    texts = list(vector_index.texts())
    assert len(texts) == len(vector_index) > 100
    assert texts == [vector_index.paper(i).text for i in range(len(vector_index))]
    monkeypatch.setattr(store, "PAPERS_KEPT", 50)
    small = store.open_index(vector_index.root, read_ahead=False)
    assert list(small.texts()) == texts and len(small._paper_cache) == 0
    assert [small.paper(i).text for i in range(len(small))] == texts and len(small._paper_cache) == 50
