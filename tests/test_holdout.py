"""Benches never train on what they test (issue #35): not the test papers, not their titles under
another id, not the rest of their venue-years.  Each test builds a small corpus from real
proceedings files (`../shared/data/proceedings`), runs a bench's own split, and fails if a test
venue-year, id or title reaches training, and checks the `train_excludes` record that goes into
the bench's JSON."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from conftest import SHARED
from peerlint.benchmarks.harness.holdout import Holdout, LeakError, assert_no_leak, leaks, venue_year
from peerlint.index.ingest.load import load_papers
from peerlint.index.papers import Paper

PROCEEDINGS = SHARED / "data" / "proceedings"


def real(*names: str) -> list[Paper]:
    return list(load_papers([PROCEEDINGS / f"{n}.jsonl" for n in names], warn=lambda m: None))


def years_of(papers, venue: str) -> set[int]:
    return {p.year for p in papers if p.venue == venue}


# -- the rule ----------------------------------------------------------------------------------------

def test_holdout_names_every_reason_a_paper_may_not_train():
    iclr17, icml17, icml16 = real("iclr-2017"), real("icml-2017"), real("icml-2016")
    test = iclr17[:5]
    holdout = Holdout.of(test)
    assert holdout.names == ("ICLR 2017",) and len(holdout.ids) == 5
    assert holdout.reason(iclr17[100]) == "venue-year"  # not sampled, same venue-year
    assert holdout.reason(replace(iclr17[100], venue=" iclr ")) == "venue-year"  # compared case-blind
    resubmitted = replace(test[0], id="elsewhere-1", venue="ICML", year=2016, title=test[0].title.upper() + "!")
    assert holdout.reason(resubmitted) == "title"
    assert holdout.reason(replace(test[1], venue="ICML", year=2016)) == "id"
    assert all(holdout.allows(p) for p in icml17 + icml16)  # other venue-years, other papers
    named = Holdout.of([], [("ICML", 2016)])  # a whole venue-year named without a test paper
    assert {named.reason(p) for p in icml16} == {"venue-year"} and all(named.allows(p) for p in icml17)
    assert venue_year(icml16[0]) == ("icml", 2016)


def test_leak_check_fails_on_a_leak_and_passes_a_clean_split():
    iclr17, iclr13 = real("iclr-2017"), real("iclr-2013")
    assert leaks(iclr13, iclr17[:10]) == []
    assert_no_leak(iclr13, iclr17[:10], "clean")
    found = leaks(iclr13 + iclr17[10:12], iclr17[:10])
    assert found == [f"{iclr17[10].id} (venue-year)", f"{iclr17[11].id} (venue-year)"]
    with pytest.raises(LeakError, match="2 training papers share a test venue-year"):
        assert_no_leak(iclr13 + iclr17[10:12], iclr17[:10], "leaky")


# -- bench drafts --suite venue --------------------------------------------------------------------

def test_venue_suite_on_its_own_corpus_trains_on_other_years_only():
    from peerlint.benchmarks.drafts.suites import shipped_venue_split

    corpus = real("cvpr-2016", "cvpr-2017", "icml-2016", "icml-2017", "iclr-2014", "iclr-2017")
    split = shipped_venue_split(corpus, per_venue=20)
    assert split.dataset["year"] == 2017 and split.venues == ["CVPR", "ICLR", "ICML"]
    assert leaks(split.train, split.test) == []
    assert {p.year for p in split.train} == {2014, 2016}  # not one unsampled 2017 abstract trains
    rec = split.train_excludes
    assert rec["venue_years"] == ["CVPR 2017", "ICLR 2017", "ICML 2017"] and rec["ids"] == 60
    # every 2017 paper but ICLR's 47 workshop-track ones, which no venue head learns from anyway
    assert rec["dropped"]["venue-year"] == 783 + (489 - 47) + 425 and rec["trained_on"] == len(split.train)
    assert not any(p.status == "Workshop" for p in split.train + split.test)


def test_venue_suite_on_a_given_corpus_keeps_its_venue_years_out_of_the_shipped_training():
    """The shipped corpus now runs to 2025: a given corpus of venue-years it also holds must not train."""
    from peerlint.benchmarks.drafts.suites import given_venue_split

    shipped = real("aistats-2018", "aistats-2019", "colt-2018", "colt-2019", "icml-2016", "icml-2017",
                   "cvpr-2017", "iclr-2017")
    given = [replace(p, id=f"later-{p.id}") for p in real("aistats-2019", "colt-2019")]  # the same papers, new ids
    split = given_venue_split(shipped, given, per_venue_year=50)
    assert {p.venue for p in split.test} == {"AISTATS", "COLT"} and len(split.test) == 100
    assert leaks(split.train, split.test) == []
    assert years_of(split.train, "AISTATS") == {2018} and years_of(split.train, "COLT") == {2018}
    rec = split.train_excludes
    assert rec["venue_years"] == ["AISTATS 2019", "COLT 2019"]
    assert rec["dropped"]["venue-year"] == 359 + 124  # every one of them, not only the 100 sampled
    assert rec["titles"] == 100 and rec["trained_on"] == len(split.train)


# -- bench drafts --suite acceptance ---------------------------------------------------------------

def test_acceptance_heads_are_scored_on_a_venue_year_they_never_trained_on():
    from peerlint.benchmarks.drafts.suites import decision_groups, venue_year_folds

    iclr13, iclr17 = real("iclr-2013"), real("iclr-2017")
    rejected17 = next(p for p in iclr17 if "reject" in p.status.lower())
    resubmission = replace(rejected17, id="iclr2013-resubmitted", year=2013)  # the same title a year apart
    groups = decision_groups(iclr13 + iclr17 + [resubmission], min_papers=20)
    assert list(groups) == [("ICLR", 2013), ("ICLR", 2017)]
    papers = [p for ps in groups.values() for p in ps]
    folds, records = venue_year_folds(papers, groups)
    for (test, train), rec in zip(folds, records):
        tested = [papers[i] for i in test]
        assert len({(p.venue, p.year) for p in tested}) == 1
        assert leaks([papers[i] for i in train], tested) == []
        assert not set(test) & set(train)
    (t13, tr13), (t17, tr17) = folds
    assert papers.index(resubmission) not in tr17 and records[1]["dropped"]["title"] == 1
    assert records[0]["test"] == "ICLR 2013" and records[1]["venue_years"] == ["ICLR 2017"]
    assert len(tr17) == len(t13) - 1 and len(tr13) == len(t17) - 1  # the pair never trains either side


def test_informal_register_head_keeps_the_acceptance_venue_years_out():
    """The shipped register head is read zero-shot by the acceptance suite: the informal suite that
    writes it keeps those venue-years, and the held-out half's titles, out of its training."""
    from peerlint.benchmarks.drafts.context import stable_split
    from peerlint.benchmarks.drafts.suites import decision_groups

    corpus = real("iclr-2017", "icml-2017")
    decided = decision_groups(corpus)
    assert list(decided) == [("ICLR", 2017)]
    held = Holdout.of((), decided) | Holdout.papers([p for p in corpus if stable_split(p.id)])
    training = held.split(p for p in corpus if not stable_split(p.id))
    assert {p.venue for p in training.papers} == {"ICML"} and training.record()["venue_years"] == ["ICLR 2017"]


# -- bench tournament's embedding head -------------------------------------------------------------

def test_tournament_head_never_trains_on_the_test_year_or_a_resubmission():
    from peerlint.benchmarks.tournament.bench import HeadScorer, _label

    iclr13, iclr17 = real("iclr-2013"), real("iclr-2017")
    resubmission = replace(iclr17[0], id="iclr2013-resubmitted", year=2013)
    papers = iclr13 + iclr17 + [resubmission]

    def embed(texts):  # a fixed random projection of character counts: enough to fit a head on
        counts = np.array([[t.count(c) for c in "etaoinshrdlu"] for t in texts], dtype=np.float32)
        return counts / np.maximum(np.linalg.norm(counts, axis=1, keepdims=True), 1e-9)

    head = HeadScorer(None, papers, 2017, "ICLR", embed=embed)
    assert not head.train_ids & {p.id for p in iclr17} and resubmission.id not in head.train_ids
    assert head.train_ids <= {p.id for p in iclr13}
    rec = head.train_excludes
    decided17 = sum(_label(p.status) is not None for p in iclr17)  # the 2017 workshop track is neither
    assert rec["venue_years"] == ["ICLR 2017"] and rec["dropped"] == {"venue-year": decided17, "id": 0, "title": 1}


# -- bench schnovel's learned methods ----------------------------------------------------------------

def test_schnovel_training_pairs_touch_no_tested_venue_year():
    from peerlint.analyzers.novelty.pairs import sample_pairs
    from peerlint.benchmarks.schnovel.bench import training_pairs

    corpus = real(*(f"colt-{y}" for y in range(2011, 2021)), *(f"aistats-{y}" for y in range(2011, 2021)))
    papers = {p.id: p for p in corpus}
    tested = sample_pairs(corpus, total=40, seed=0)
    pool = sample_pairs(corpus, total=2000, seed=1)
    cut = 2016  # `--split year`: pairs ending after the cut are tested by models of pairs ending before it,
    late = [p for p in tested if papers[p.newer].year >= cut]  # one fold per start year
    starts = sorted({papers[p.older].year for p in late})
    assert any(y < cut for y in starts)  # pairs that straddle the cut exist: their start year must not train
    for start in starts:
        fold = [p for p in late if papers[p.older].year == start]
        train, rec = training_pairs(pool, fold, papers, lambda p: papers[p.newer].year < cut)
        tested_years = {(papers[i].venue, papers[i].year) for p in fold for i in (p.newer, p.older)}
        assert len(train) >= 50
        assert all((papers[i].venue, papers[i].year) not in tested_years for p in train for i in (p.newer, p.older))
        assert rec["trained_on"] == len(train) and rec["unit"] == "training pairs" and rec["pool"] == 2000
        assert rec["venue_years"] == sorted(f"{v} {y}" for v, y in tested_years)
        if start < cut:
            assert rec["dropped"]["venue-year"] > 0  # the start year's pairs left the training set


def test_acceptance_scores_one_year_and_trains_on_every_other_venue_year():
    """`--venue-year 2017`: only ICLR 2017 is scored (the pool's first papers), by heads that learn from
    ICLR 2013, never from 2017; a year with no decisions is a clear error naming those there are."""
    from peerlint.benchmarks.drafts.context import BenchError
    from peerlint.benchmarks.drafts.suites import decision_groups, scored_folds

    every = decision_groups(real("iclr-2013") + real("iclr-2017"), min_papers=20)
    groups, pool, folds, records = scored_folds(every, 2017)
    assert list(groups) == [("ICLR", 2017)] and [r["test"] for r in records] == ["ICLR 2017"]
    (test, train), = folds
    scored = groups[("ICLR", 2017)]
    assert pool[:len(scored)] == scored and sorted(test) == list(range(len(scored)))
    assert {pool[i].year for i in train} == {2013} and len(train) == len(every[("ICLR", 2013)])
    assert len(scored_folds(every, None)[2]) == 2  # by default every venue-year is scored
    with pytest.raises(BenchError, match="no venue-year of 2019 .* ICLR 2013, ICLR 2017"):
        scored_folds(every, 2019)


def test_decision_benches_leave_out_anthology_only_acceptances_of_a_year_with_rejections():
    """ICLR 2017 in the shipped corpus: 489 OpenReview decisions plus 57 ML Anthology records of its
    workshop track marked "Accept"; the decision benches read the 489 (ICLR 2014, no rejections, keeps all)."""
    from conftest import shipped_papers
    from peerlint.benchmarks.drafts.suites import decision_groups
    from peerlint.benchmarks.harness.decisions import with_decisions

    shipped = shipped_papers()
    iclr17 = [p for p in shipped if p.venue == "ICLR" and p.year == 2017]
    kept = with_decisions(iclr17)
    assert len(iclr17) == 546 and len(kept) == 489 and not any(p.status == "Accept" for p in kept)
    iclr14 = [p for p in shipped if p.venue == "ICLR" and p.year == 2014]
    assert with_decisions(iclr14) == iclr14
    assert len(decision_groups(shipped)[("ICLR", 2017)]) == 489


def test_one_reading_of_a_status_serves_the_acceptance_and_tournament_benches():
    """Every status of the shipped ICLR years read once: ICLR 2023's "Top-5%" / "Top-25%" are
    acceptances, ICLR 2017-18's "Workshop" is no conference acceptance (the acceptance suite counts it
    rejected, the tournament leaves it out), a withdrawal or an empty status is no decision."""
    from conftest import shipped_papers
    from peerlint.benchmarks.drafts.suites import decision as acceptance_label
    from peerlint.benchmarks.harness.decisions import decision
    from peerlint.benchmarks.tournament.bench import _label as tournament_label

    statuses = {p.status for p in shipped_papers() if p.venue == "ICLR"}
    read = {s: decision(s) for s in statuses}
    assert {s for s, d in read.items() if d is None} == {"", "Withdraw"}
    assert read["Top-5%"] == read["Top-25%"] == "accept" and read["Workshop"] == read["Oral Workshop"] == "workshop"
    assert acceptance_label("Workshop") == acceptance_label("Reject") == 0 and acceptance_label("Top-25%") == 1
    assert tournament_label("Workshop") is None and tournament_label("Reject") is False
    assert tournament_label("Top-5%") is True and tournament_label("Withdraw") is None
