"""`peerlint bench drafts --suite scale`: does the section summary's quality scale pass published text
and see an obviously worse one?  (issue 34, deliverable 4)

Held out from everything the scale learned: ACLSum's test split (up to 30 sections of each kind) and
every section of the real papers in tests/data/real (other venues and fields, parsed by peerlint's
own LaTeX parser).  Each section (its first paragraph: CPU time) is scored as published, then once per
degradation of `degrade.py` with the *test* lexicon (fillers and hedges the head never saw).

Reported beside three baselines: today's scale (the register head's 1–10 rating averaged over the
section, as `summaries.py` showed it before), length (more words = better) and typo count (fewer
out-of-vocabulary words = better).  `--rebuild` retrains the scale from the shipped sections first.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import numpy as np

from ...analyzers.drafts.heads import load_register_head
from ...analyzers.drafts.scale import KINDS, ANY_KIND, SCALE_FILE, QualityScale, load_scale, surface_features
from .context import Bench, BenchError, log
from .degrade import ALL_KINDS, degrade
from .scale_data import (EVAL_PARAGRAPHS, SECTIONS_FILE, CachedEmbed, Section, build_scale, eval_sections,
                         read_sections, real_sections)
from ...index.embedding.embedder import Embedder
from ...locations import cache_root

SCORERS = ("scale", "today", "length", "typo count")


def _r(x, nd=2):
    return None if x is None else round(float(x), nd)


def embedder_for(bench: Bench | None) -> CachedEmbed:
    return CachedEmbed(Embedder(), cache_root() / "drafts" / "scale-vectors.npz", log=log)


def section_scores(scale: QualityScale, register, embed, paragraphs: list[str], kind: str) -> dict[str, float]:
    """Every scorer's number for one section (higher = better)."""
    V = embed(paragraphs)
    words = [len(p.split()) for p in paragraphs]
    oov = [surface_features(p, scale.vocabulary)[0] for p in paragraphs]
    return {"scale": scale.rate_section(V, paragraphs, kind).rating,
            "today": float(np.mean(register.rating(V))) if register is not None else float("nan"),
            "length": float(np.mean(words)), "typo count": -float(np.mean(oov))}


def measure(scale: QualityScale, register, embed, sections: list[Section]) -> list[dict]:
    """One record per held-out section: its scores as published and per degradation."""
    texts = [p for s in sections for p in s.paragraphs[:EVAL_PARAGRAPHS]]
    embed(texts)  # in batches, cached: the loop below reads them back
    for k in ALL_KINDS:
        embed([degrade(p, k, "test") for p in texts])
    out = []
    for n, s in enumerate(sections, 1):
        paras = s.paragraphs[:EVAL_PARAGRAPHS]
        rec = {"paper": s.paper, "split": s.split, "heading": s.heading, "kind": s.kind,
               "published": section_scores(scale, register, embed, paras, s.kind)}
        for k in ALL_KINDS:
            rec[k] = section_scores(scale, register, embed, [degrade(p, k, "test") for p in paras], s.kind)
        out.append(rec)
        if n % 100 == 0:
            log(f"scale: {n}/{len(sections)} sections scored")
    return out


REAL_LABEL = "tests/data/real"


def landing_rows(records: list[dict], real: str = REAL_LABEL) -> list[list]:
    """Published held-out sections by source and kind: the new scale's median and minimum beside today's."""
    rows = []
    for source, label in (("test", "ACLSum test"), ("real", real)):
        for kind in KINDS + (ANY_KIND, "all"):
            recs = [r for r in records if r["split"] == source and (kind == "all" or r["kind"] == kind)]
            if not recs:
                continue
            new = np.array([r["published"]["scale"] for r in recs])
            old = np.array([r["published"]["today"] for r in recs])
            rows.append([label, kind, len(recs), _r(np.median(new)), _r(new.min()), _r(np.mean(new >= 5), 3),
                         _r(np.median(old)), _r(old.min())])
    return rows


def lower_share(records: list[dict], degradation: str, scorer: str) -> float:
    return float(np.mean([r[degradation][scorer] < r["published"][scorer] for r in records]))


def degraded_rows(records: list[dict], real: str = REAL_LABEL) -> list[list]:
    rows = []
    for source, label in (("test", "ACLSum test"), ("real", real), (None, "all")):
        recs = [r for r in records if source is None or r["split"] == source]
        if not recs:
            continue
        for k in ALL_KINDS + ("any",):
            kinds = ALL_KINDS if k == "any" else (k,)
            shares = [np.mean([lower_share(recs, d, s) for d in kinds]) for s in SCORERS]
            rows.append([label, k, len(recs) * len(kinds)] + [_r(x, 3) for x in shares])
    return rows


def abstract_rows(records: list[dict], real: str = REAL_LABEL) -> tuple[list[list], dict]:
    """Issue 34's check on held-out abstracts, each its own section: median, minimum, and how many of
    the combined degradations (lower case, fillers, "we kinda", swapped letters) score lower."""
    rows, detail = [], {}
    for source, label in (("real", f"{real} abstracts"), ("test", "ACLSum test abstracts")):
        recs = [r for r in records if r["split"] == source and r["kind"] == "abstract"]
        if not recs:
            continue
        for scorer in ("scale", "today"):
            pub = np.array([r["published"][scorer] for r in recs])
            lower = sum(r["combined"][scorer] < r["published"][scorer] for r in recs)
            rows.append([label, scorer, len(recs), _r(np.median(pub)), _r(pub.min()), f"{lower} of {len(recs)}"])
            detail[f"{source}:{scorer}"] = {"n": len(recs), "median": float(np.median(pub)), "min": float(pub.min()),
                                            "lower": int(lower)}
    return rows, detail


def llm_rows(bench: Bench, records: list[dict], sections: list[Section]) -> tuple[list[list], dict]:
    """Between the Drafts' A.1 rating (RAG) on the first `--limit` held-out abstracts of tests/data/real
    and their combined degradation, beside the scale on the same items; only with `--limit` (the LLM
    rates about one paragraph in 5-25 s on two cores)."""
    k = bench.args.limit or 0
    picked = [(r, s) for r, s in zip(records, sections) if r["split"] == "real" and r["kind"] == "abstract"][:k]
    if not picked:
        return [], {}
    pub, bad = [], []
    for _, s in picked:
        text = s.paragraphs[0]
        pub.append(bench.rate(text).score)
        bad.append(bench.rate(degrade(text, "combined", "test")).score)
    ok = [i for i in range(len(picked)) if pub[i] is not None and bad[i] is not None]
    rows = []
    for name, p, d in (("llm (A.1, RAG)", [pub[i] for i in ok], [bad[i] for i in ok]),
                       ("scale (same items)", [picked[i][0]["published"]["scale"] for i in ok],
                        [picked[i][0]["combined"]["scale"] for i in ok])):
        rows.append([name, bench.model_name() if name.startswith("llm") else "MiniLM head", len(ok),
                     _r(np.median(p)) if p else None, _r(min(p)) if p else None,
                     f"{sum(x < y for x, y in zip(d, p))} of {len(ok)}"])
    return rows, {"published": pub, "degraded": bad, "seconds": round(bench.llm_seconds, 1)}


def run(bench: Bench) -> None:
    if not SECTIONS_FILE.exists():
        raise BenchError(f"no {SECTIONS_FILE}: run `python -m peerlint.benchmarks.drafts.scale_data` "
                         "(needs `pip install --no-deps aclsum==0.1.2`)")
    sections = read_sections()
    embed = embedder_for(bench)
    if getattr(bench.args, "rebuild", False):
        scale = build_scale(sections, embed, embed.embedder.model_id, log=log)
        scale.save()
        log(f"scale: wrote {SCALE_FILE}")
    scale = load_scale()
    if scale is None:
        raise BenchError(f"no quality scale in {SCALE_FILE}: run `peerlint bench drafts --suite scale --rebuild`")
    register = load_register_head()
    projects = getattr(bench.args, "from_latex", None)
    real = "--from-latex papers" if projects else REAL_LABEL
    try:
        held_out = eval_sections(sections + real_sections(projects=projects))
    except ValueError as exc:
        raise BenchError(f"--from-latex: {exc}") from None
    records = measure(scale, register, embed, held_out)
    landing = landing_rows(records, real)
    lowered = degraded_rows(records, real)
    abstracts, abstract_detail = abstract_rows(records, real)
    llm, llm_detail = llm_rows(bench, records, held_out)
    bench.report("scale-from-latex" if projects else "scale",
                 {"held_out": f"{sum(r['split'] == 'test' for r in records)} sections of ACLSum's test split "
                              f"(up to 30 a kind) and {sum(r['split'] == 'real' for r in records)} of {real}; "
                              f"each its first {EVAL_PARAGRAPHS} paragraph(s) of 20+ words",
                  **({"projects": [str(p) for p in projects]} if projects else {}),
                  "degradations": "benchmarks/drafts/degrade.py, test lexicon (fillers and hedges the head never saw)",
                  "scale": scale.info, "baselines": {"today": "register head, mean paragraph rating (1-10)",
                                                     "length": "mean words per paragraph",
                                                     "typo count": "minus the share of out-of-vocabulary words"}},
                 [("scale: published held-out sections (target: abstracts median >= 6, none < 3)",
                   ["source", "kind", "sections", "median", "min", "share >= 5", "today median", "today min"], landing),
                  ("scale: degraded version scores lower than its original (target >= 0.85)",
                   ["held out", "degradation", "pairs"] + list(SCORERS), lowered),
                  ("scale: issue 34's abstract check (combined degradation)",
                   ["abstracts", "scorer", "n", "median", "min", "degraded lower"], abstracts)]
                 + ([("scale: the LLM's A.1 rating on the first --limit real abstracts (combined degradation)",
                      ["scorer", "model", "n", "median", "min", "degraded lower"], llm)] if llm else []),
                 {"landing": landing, "degraded": lowered, "abstracts": abstracts, "abstract_detail": abstract_detail,
                  "llm_rows": llm, "llm": llm_detail,
                  "records": records})
