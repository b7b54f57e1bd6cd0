"""Index crashes (issue 18, item 3c): `peerlint index build` killed with SIGKILL at random points
leaves an index that answers; damaged files, a missing or hostile CURRENT and two builds at once
give one clear error naming the rebuild (which then works) or correct answers, never a traceback,
a signal or a wrong answer.  The cases are benchmarks/robustness/index_faults.py, which `peerlint
bench robustness` runs with 20 kills of a longer build."""

from __future__ import annotations

from peerlint.benchmarks.robustness.index_faults import DAMAGE, Probe, concurrent_builds, damaged_indexes, kill_builds

LIMITS = (300, 350)  # papers of the shipped corpus: a build of ~3 s, most of it before the swap


def test_killed_builds_damage_and_concurrent_builds(tmp_path):
    kills = kill_builds(tmp_path, kills=4, limits=LIMITS, seed=5)
    assert all(r.ok and r.recovered is not False for r in kills), [(r.name, r.detail) for r in kills if not r.ok]
    good = tmp_path / "killed-index"
    probe = Probe.of(good)
    damaged = damaged_indexes(tmp_path, good, probe, LIMITS[0],
                              rebuild={"garbage meta.sqlite", "missing CURRENT", "CURRENT naming a path out of the index"})
    assert [r.name for r in damaged] == [name for name, _ in DAMAGE]
    assert all(r.ok and not r.crashed for r in damaged), [(r.name, r.detail) for r in damaged if not r.ok]
    out_of_index = next(r for r in damaged if r.name == "CURRENT naming a path out of the index")
    assert "damaged CURRENT" in out_of_index.detail and "/etc" not in out_of_index.detail.split("is not a build name")[-1]
    assert sum(r.recovered is True for r in damaged) == 3
    both = concurrent_builds(tmp_path, good, probe, LIMITS)
    assert both.ok, both.detail


def test_pruning_old_builds_touches_only_build_folders(tmp_path, monkeypatch):
    """An index path pointed at another folder (a workspace setting, a typo) loses nothing but old builds."""
    import os

    from peerlint.index import store

    root = tmp_path / "somewhere"
    for name in ("20200101T000000-abcdef", "20200102T000000-123456", "my-thesis", "figures"):
        (root / "builds" / name).mkdir(parents=True)
        os.utime(root / "builds" / name, (0, 0))  # as old as can be
    monkeypatch.setattr(store, "KEEP_RECENT_S", 0)
    store.make_live(root, root / "builds" / "20200102T000000-123456")
    assert sorted(p.name for p in (root / "builds").iterdir()) == ["20200102T000000-123456", "figures", "my-thesis"]


def test_dropping_an_old_build_deletes_its_caches_and_no_others(tmp_path, monkeypatch):
    """What the novelty check and the venue heads keep for a build (the default index's lexicon is the size
    of its vectors) goes with the build; the live build's, another index's and unrelated files stay."""
    import os

    from peerlint.index import store

    cache = tmp_path / "cache"
    monkeypatch.setenv("PEERLINT_CACHE_DIR", str(cache))
    root = tmp_path / "index"
    old, live, elsewhere = "20200101T000000-abcdef", "20200102T000000-123456", "20200103T000000-fedcba"
    for name in (old, live):
        (root / "builds" / name).mkdir(parents=True)
        os.utime(root / "builds" / name, (0, 0))
    kept = [cache / "novelty" / f"lexicon-{live}-v3.pkl", cache / "novelty" / f"model-{elsewhere}.npz",
            cache / "drafts" / "scale-vectors.npz", cache / "query-vectors-v2.sqlite"]
    dropped = [cache / "novelty" / f"lexicon-{old}-v3.pkl", cache / "novelty" / f"lexicon-{old}-v3.rows.npy",
               cache / "novelty" / f"model-{old}.npz", cache / "drafts" / f"venue-head-{old}.npz",
               cache / "drafts" / f"venue-calibration-{old}.npz"]
    for path in kept + dropped:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"x")
    monkeypatch.setattr(store, "KEEP_RECENT_S", 0)
    (root / "CURRENT").write_text(live)  # the build live until now stays, so make a third one live
    newest = "20200104T000000-0a0b0c"
    (root / "builds" / newest).mkdir()
    store.make_live(root, root / "builds" / newest)
    assert sorted(p.name for p in (root / "builds").iterdir()) == [live, newest]
    assert all(p.exists() for p in kept) and not any(p.exists() for p in dropped)
