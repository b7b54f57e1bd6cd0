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
