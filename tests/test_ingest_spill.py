"""Corpora too large to hold: `load_papers` spills papers to disk and the build reads them back in order.

The spilled path must give exactly what the held one gives (cross-source merges included), hold only a
page of papers in memory whatever the corpus's size, and build the same index.
"""

from __future__ import annotations

import gc
import json

import numpy as np

import peerlint.index.build as build_module
from peerlint.index.build import build_index
from peerlint.index.ingest.load import load_papers
from peerlint.index.ingest.paper_store import PAGE, StoredPapers
from peerlint.index.papers import Paper
from peerlint.index.store import open_index
from test_index_scale import HashEmbedder
from test_ingest_dumps import ARXIV_RECORD, OPENALEX_WORK, write_jsonl

RECORDS = 3000


def arxiv_records(n: int) -> list[dict]:
    return [{**ARXIV_RECORD, "id": f"2001.{i:05d}", "title": f"Study {i} of a sufficiently long title",
             "abstract": f"Abstract {i}: " + " ".join(f"w{(i * 7 + k) % 997}" for k in range(90))} for i in range(n)]


def corpus_files(tmp_path):
    """arXiv records; OpenAlex works of every 100th of them (same arXiv id, citing each other's W-ids); a
    proceedings record of one by title alone."""
    arxiv = write_jsonl(tmp_path / "arxiv.jsonl", arxiv_records(RECORDS))
    works = [{**OPENALEX_WORK, "id": f"https://openalex.org/W{i}", "doi": f"https://doi.org/10.48550/arXiv.2001.{i:05d}",
              "title": f"Study {i} of a sufficiently long title", "publication_date": f"2020-01-{1 + i % 28:02d}",
              "referenced_works": [f"https://openalex.org/W{j}" for j in (i - 100, i + 100, 7)]}
             for i in range(0, RECORDS, 100)]
    openalex = write_jsonl(tmp_path / "openalex.jsonl", works)
    proceedings = write_jsonl(tmp_path / "proceedings.jsonl", [
        {"id": "acl-1", "title": "Study 2999 of a sufficiently long title.", "abstract": "Other.", "venue": "ACL",
         "year": 2020, "keywords": ["spill"]}])
    return [arxiv, openalex, proceedings]


def test_spilled_load_merges_across_sources_as_the_held_one_does(tmp_path):
    files = corpus_files(tmp_path)
    held_warnings: list[str] = []
    held = load_papers(files, warn=held_warnings.append)
    assert isinstance(held, list) and len(held) == RECORDS
    for hold in (0, 1500):  # spilled from the start, and midway (merges into flushed and pending papers)
        warnings: list[str] = []
        spilled = load_papers(files, warn=warnings.append, hold=hold)
        assert isinstance(spilled, StoredPapers)
        assert list(spilled) == held and warnings == held_warnings
        picks = (2999, 5, 6, 7, 1500, -1)  # jumps and an in-order walk, as the Ray build and benches read
        assert [spilled[i] for i in picks] == [held[i] for i in picks] and spilled[::700] == held[::700]
    merged = spilled[200]
    assert merged.id == "arXiv:2001.00200" and merged.date == "2017-06-12"  # the first record wins each field
    assert merged.citations == OPENALEX_WORK["cited_by_count"]  # a blank filled from the OpenAlex work
    # its W-references point at the papers the works were merged into; W7 was never read, so it stays
    assert merged.references == ("arXiv:2001.00100", "arXiv:2001.00300", "W7")
    assert spilled[-1].venue == "ACL" and spilled[-1].keywords == ("spill",)  # merged by title from another file
    assert len(warnings) == 21 and warnings[-1] == "11 more records merged into papers read before (31 in all)"
    assert warnings[2] == f"{files[1]}:3: 'W200' is 'arXiv:2001.00200' (same arxiv, first seen at {files[0]}:201); merged into it"


def test_spilled_papers_are_on_disk_not_in_memory(tmp_path):
    path = write_jsonl(tmp_path / "arxiv.jsonl", arxiv_records(RECORDS))
    gc.collect()
    before = _live_papers()
    held = load_papers([path], warn=lambda m: None)
    assert _live_papers() - before >= RECORDS  # the held list: every paper an object
    del held
    gc.collect()
    spilled = load_papers([path], warn=lambda m: None, hold=100)
    gc.collect()
    assert _live_papers() - before < PAGE  # at most the page not yet written
    assert isinstance(spilled, StoredPapers) and len(spilled) == RECORDS
    assert spilled.store.page_bytes() > sum(len(r["abstract"]) for r in arxiv_records(RECORDS))
    assert [p.id for p in spilled[2990:]] == [f"arXiv:2001.{i:05d}" for i in range(2990, RECORDS)]  # views, in order
    gc.collect()
    assert _live_papers() - before < PAGE + 10  # read a page at a time, never the whole corpus


def _live_papers() -> int:
    return sum(isinstance(o, Paper) for o in gc.get_objects())


class BlockEmbedder(HashEmbedder):
    """Records the most chunk texts one encode call was given."""

    most = 0

    def encode(self, texts, progress=None):
        self.most = max(self.most, len(texts))
        return super().encode(texts, progress)


def test_a_build_from_spilled_papers_is_the_build_from_a_list(tmp_path, monkeypatch):
    path = write_jsonl(tmp_path / "arxiv.jsonl", arxiv_records(300))
    held = load_papers([path], warn=lambda m: None)
    build_index(held, tmp_path / "held", HashEmbedder(), show_progress=False, shipped_vectors=False)
    monkeypatch.setattr(build_module, "BLOCK", 64)
    spilled = load_papers([path], warn=lambda m: None, hold=0)
    embedder = BlockEmbedder()
    report = build_index(spilled[:250], tmp_path / "spilled", embedder, show_progress=False, shipped_vectors=False)
    assert report.papers == 250 and 0 < embedder.most <= 64 * 2  # one block of 64 papers (~2 chunks each) at a time
    report = build_index(spilled, tmp_path / "spilled", embedder, show_progress=False, shipped_vectors=False)
    assert report.appended == 50 and report.embedded == sum(len(s) for s in embedder.split_many([p.text for p in held[250:]]))
    one, other = open_index(tmp_path / "held"), open_index(tmp_path / "spilled")
    try:
        assert one.ids == other.ids == [p.id for p in held]
        assert np.array_equal(np.asarray(one.vectors), np.asarray(other.vectors))
        assert np.array_equal(one.chunk_spans, other.chunk_spans)
        assert other.paper(299).abstract == held[299].abstract
    finally:
        one.close()
        other.close()


def test_bench_ingest_reads_the_generated_file_three_ways(tmp_path, capsys):
    from peerlint.server.cli import main

    assert main(["bench", "ingest", "--records", "200", "--work", str(tmp_path), "--out", str(tmp_path / "results")]) == 0
    assert "Ingest of 200 arXiv-snapshot records" in capsys.readouterr().out
    (result,) = (tmp_path / "results").glob("ingest-*.json")
    runs = json.loads(result.read_text())["runs"]
    assert [(label, run["papers"]) for label, run in runs.items()] == [
        ("stream", 200), ("load", 200), ("load --where category=cs.CL", 25)]
    assert all(run["peak_rss_mb"] > 0 and run["warnings"] == 0 for run in runs.values())
    assert main(["bench", "ingest", "--records", "200", "--build", "-1", "--work", str(tmp_path)]) == 2


def _worker_peak() -> float:
    from peerlint.benchmarks.harness.results import peak_rss_mb

    return peak_rss_mb()


def test_a_spawned_bench_worker_reports_its_own_peak_not_its_parents():
    """`bench ingest` reads each peak in a spawned worker; ru_maxrss there starts at the parent's peak from
    before exec, so a parent that had generated the file made every step read ~500 MB."""
    import multiprocessing

    held = bytearray(400 * 2**20)
    held[:: 4096] = b"x" * len(held[:: 4096])  # touched: resident in this process
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        worker = pool.apply(_worker_peak)
    del held
    assert worker < 300, f"the worker reports {worker} MB, its parent's 400 MB and more"
