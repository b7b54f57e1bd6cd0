"""`index build --engine ray`: Ray Data in local mode builds the same index as the single-process build.

The default build of the shipped papers reads their shipped vectors (embedded once by the same torch
route), so only the Ray build embeds: the comparison costs one embedding pass. Ray is installed by
`make install` (the `scale` extra); without it these tests skip with the reason, and the no-Ray
message is tested with the import blocked.
"""

from __future__ import annotations

import builtins
import os
import sys

import numpy as np
import pytest

from peerlint.index.build import build_index
from peerlint.index.distributed.ray_build import EmbedWorker, RayOptions, RayUnavailable, ray_build_index
from peerlint.index.distributed.shards import (ShardChunks, finished, plan_shards, read_shard, shard_path,
                                               work_dir, write_shard)
from peerlint.index.embedding.embedder import Embedder
from peerlint.hashing import text_hash
from conftest import shipped_papers
from peerlint.index.store import open_index

PAPERS = 2000


@pytest.fixture(scope="module")
def shipped():
    return shipped_papers()


@pytest.fixture(scope="module")
def ray_local():
    ray = pytest.importorskip("ray", reason="Ray is not installed: pip install 'peerlint[scale]'")
    import ray.cloudpickle

    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the test's worker classes, to the workers
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


@pytest.fixture(scope="module")
def embedder():
    return Embedder("torch")


def _same_index(a_root, b_root) -> None:
    a, b = open_index(a_root), open_index(b_root)
    try:
        assert a.ids == b.ids
        assert np.array_equal(a.chunk_paper, b.chunk_paper) and np.array_equal(a.chunk_spans, b.chunk_spans)
        va, vb = np.asarray(a.vectors, np.float32), np.asarray(b.vectors, np.float32)
        cos = (va * vb).sum(1) / np.linalg.norm(va, axis=1) / np.linalg.norm(vb, axis=1)
        assert cos.min() >= 0.999, cos.min()  # seeded shipped rows (int8, 63 levels) against fresh float ones
        assert a.has_lexical and b.has_lexical
        assert a.lexical_search(b.paper(3).title, 5) == b.lexical_search(b.paper(3).title, 5)
    finally:
        a.close()
        b.close()


@pytest.mark.timeout(1800)  # ~3 min on 2 idle cores (3,000 chunks embedded); much longer on a loaded machine
def test_ray_build_matches_the_single_process_build(shipped, ray_local, embedder, tmp_path):
    papers = shipped[:PAPERS]
    report = ray_build_index(papers, tmp_path / "ray", embedder, ["test"], show_progress=False)
    assert report.papers == PAPERS and report.embedded == report.chunks > PAPERS
    assert not (tmp_path / "ray" / "distributed").exists() or not any((tmp_path / "ray" / "distributed").iterdir())
    single = build_index(papers, tmp_path / "single", embedder, ["test"], show_progress=False)
    assert single.chunks == report.chunks
    _same_index(tmp_path / "ray", tmp_path / "single")


class CrashOnce(EmbedWorker):
    """Kills its own process on its first shard (once per test, by a marker file): a worker lost mid-run."""

    marker = ""  # set by the test; the class travels to the workers by value, with it

    def __call__(self, row):
        try:
            os.close(os.open(self.marker, os.O_CREAT | os.O_EXCL))
        except FileExistsError:
            return super().__call__(row)
        os._exit(1)


class FailOnShard1(EmbedWorker):
    """Raises on shard 1: a worker's error stops the run."""

    def __call__(self, row):
        if int(row["number"]) == 1:
            raise RuntimeError("simulated failure")
        return super().__call__(row)


def test_a_killed_worker_is_replaced_and_no_paper_is_lost(shipped, ray_local, embedder, tmp_path, monkeypatch):
    monkeypatch.setattr(CrashOnce, "marker", str(tmp_path / "crashed"))
    papers = shipped[2000:2150]
    ray_build_index(papers, tmp_path / "ray", embedder, ["test"], RayOptions(shard_papers=50), show_progress=False,
                    embed_worker=CrashOnce)
    assert (tmp_path / "crashed").exists()  # a worker did die
    build_index(papers, tmp_path / "single", embedder, ["test"], show_progress=False)
    _same_index(tmp_path / "ray", tmp_path / "single")


def test_an_interrupted_build_resumes_from_its_shards(shipped, ray_local, embedder, tmp_path, monkeypatch):
    import peerlint.index.distributed.ray_build as ray_build

    papers = shipped[2200:2350]
    options = RayOptions(shard_papers=50, workers=1)
    shards = plan_shards([p.id for p in papers], [text_hash(p.text) for p in papers], 50)
    work = work_dir(tmp_path / "ray", embedder.model_id, 200, shards)

    def killed(*args):
        raise KeyboardInterrupt  # the driver stopped after the pipeline, before the merge

    monkeypatch.setattr(ray_build, "merge_shards", killed)
    with pytest.raises(KeyboardInterrupt):
        ray_build_index(papers, tmp_path / "ray", embedder, ["test"], options, show_progress=False)
    monkeypatch.undo()
    assert finished(work, shards) == {0, 1, 2} and not (tmp_path / "ray" / "CURRENT").exists()
    shard_path(work, shards[1]).unlink()  # as if the run had stopped before shard 1 was written
    lost = sum(len(s) for s in Embedder("torch").split_many([p.text for p in papers[50:100]]))
    report = ray_build_index(papers, tmp_path / "ray", embedder, ["test"], options, show_progress=False)
    assert report.embedded == lost and report.cached == report.chunks - lost  # shards 0 and 2 were not redone
    build_index(papers, tmp_path / "single", embedder, ["test"], show_progress=False)
    _same_index(tmp_path / "ray", tmp_path / "single")


def test_a_failing_worker_stops_the_build_and_says_to_rerun(shipped, ray_local, embedder, tmp_path):
    papers = shipped[2400:2460]
    with pytest.raises(RayUnavailable, match=r"simulated failure.*run the same command again"):
        ray_build_index(papers, tmp_path / "ray", embedder, ["test"], RayOptions(shard_papers=20), show_progress=False,
                        embed_worker=FailOnShard1)
    assert not (tmp_path / "ray" / "CURRENT").exists()


def test_a_shard_written_twice_or_of_other_papers(tmp_path):
    ids, hashes = [f"p{i}" for i in range(10)], [f"h{i}" for i in range(10)]
    shards = plan_shards(ids, hashes, 4)
    assert [(s.lo, s.hi) for s in shards] == [(0, 4), (4, 8), (8, 10)]
    chunks = ShardChunks(shards[1], np.array([0, 0, 3]), np.array([0, 5, 0]), np.array([5, 9, 7]),
                         np.eye(3, 384, dtype=np.float32))
    write_shard(tmp_path, chunks)
    write_shard(tmp_path, chunks)  # a retried task's second answer
    assert sorted(p.name for p in tmp_path.iterdir()) == ["shard-000001.npz"]
    again = read_shard(tmp_path, shards[1])
    assert again is not None and np.array_equal(again.vectors, chunks.vectors)
    other = plan_shards(ids[:4] + ["changed"] + ids[5:], hashes, 4)
    assert read_shard(tmp_path, other[1]) is None  # a shard of other papers is redone, never merged
    assert finished(tmp_path, shards) == {1}
    (tmp_path / "shard-000001.npz").write_bytes(b"truncated")
    assert read_shard(tmp_path, shards[1]) is None


def test_no_ray_names_the_extra(tmp_path, monkeypatch, capsys, shipped):
    import json

    from peerlint.server.cli import main

    real_import = builtins.__import__

    def no_ray(name, *args, **kwargs):
        if name == "ray" or name.startswith("ray."):
            raise ImportError("No module named 'ray'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_ray)
    corpus = tmp_path / "c.jsonl"
    corpus.write_text("".join(json.dumps({"id": p.id, "title": p.title, "abstract": p.abstract}) + "\n" for p in shipped[:5]))
    code = main(["index", "build", "--engine", "ray", "--corpus", str(corpus), "--index", str(tmp_path / "i"), "--quiet"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "pip install 'peerlint[scale]'" in err[0], err
    assert not (tmp_path / "i" / "CURRENT").exists()
