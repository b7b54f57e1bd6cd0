"""The NOVA novelty check: is an idea already in the literature? (Hu et al., 2024, §4.1 and A.5)

NOVA, after Si et al. (2024): retrieve the 10 papers most relevant to the idea and ask the LLM,
one paper at a time, whether that paper already contains substantially the same idea (same
research problem, same approach); the idea is *novel* only when no paper does.  Here:

1. Planned retrieval (NOVA §3.2.1, prompt A.2 cut to its description and keywords): the idea's
   own nearest papers first, then `rounds` rounds in which the LLM writes a JSON-schema'd search
   plan (up to `per_round` searches: a description and keywords, joined into one query), told
   the titles found so far so that each round looks elsewhere.
2. The top `k` (10) distinct papers: the idea's own nearest `k // 2`, then the other queries'
   best papers in turn.  Each paper's similarity is its cosine to the *idea* (its best chunk).
3. The A.5 judgment per paper (`prompts/nova_novelty.txt`), constrained: on Ollama a JSON
   object `{"thinking", "result": "Yes"|"No"}` decoded with `format=` its schema ("json"
   judge), on the embedded model the probabilities of the answers "Yes" / "No" ("score"
   judge).  A failed answer (unparsed, timeout, error) is counted and never guessed: with no
   "Yes" and at least one failed answer the verdict is *undetermined* (`novel is None`).
4. The guard, on both sides of the LLM.  SmolLM2-135M's A.5 answers carry no information:
   measured (`peerlint bench tournament --suite nova`), its P("Yes") is ~0.3 whether the paper
   is the idea's own abstract (cosine 0.98) or a neighbour at 0.55, and the generating judge
   answers "No" to both.  So papers whose cosine to the idea is below `floor` are not asked and
   count as "No" ("below-floor", against the yes-saying of other small models), and papers at
   or above `same_above` count as "Yes" without asking ("duplicate"): 0.8 is NOVA's own
   duplicate threshold for MiniLM embeddings (§4.1), and on the test index a published
   abstract's nearest *other* paper reaches it in about 1-2% of cases.  The LLM decides in
   between, which is where a larger model (Ollama) earns its keep.  `floor=0` and
   `same_above=None` turn the guard off.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any, Sequence

import numpy as np

from ...index.papers import Hit, SearchFilter
from ...retrieval.retriever import HitView, retriever_of
from ...llm.base import GenerateParams
from ..drafts.text import split_injection
from ..prompt_files import clip, load_prompt
from .comparators import _llm_failures, classify_failure

K = 10
ROUNDS = 2
PER_ROUND = 3
DEFAULT_FLOOR = 0.70  # see the module doc; chosen by `bench tournament --suite nova` (docs/benchmarks/nova.md)
SAME_ABOVE = 0.80  # NOVA §4.1: "the duplication threshold is set to be 0.8"
PLAN_TOKENS = 320  # the longest answer the plan schema allows fits (3 x (120 + 3 x 30) characters)
JUDGE_TOKENS = 200
IDEA_CHARS = 1200
PAPER_CHARS = 1200

PLAN_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "searches": {
            "type": "array", "minItems": 1, "maxItems": PER_ROUND,
            "items": {
                "type": "object",
                "properties": {
                    "description": {"type": "string", "maxLength": 120},
                    "keywords": {"type": "array", "minItems": 1, "maxItems": 3,
                                 "items": {"type": "string", "maxLength": 30}},
                },
                "required": ["description", "keywords"],
            },
        },
    },
    "required": ["searches"],
}

JUDGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "thinking": {"type": "string", "maxLength": 400},
        "result": {"type": "string", "enum": ["Yes", "No"]},
    },
    "required": ["thinking", "result"],
}


@dataclass(frozen=True)
class PaperJudgment:
    """The A.5 answer about one retrieved paper."""

    paper: HitView  # similarity: cosine to the idea
    status: str  # "ok" | "below-floor" | "duplicate" | "unparsed" | "timeout" | "error" | "no-llm"
    same: bool | None  # the paper already contains the idea; None: no answer
    p_yes: float | None = None  # "score" judge: P("Yes"); "json" judge: 1.0 / 0.0
    thinking: str = ""
    query: str = ""  # the retrieval query that found it

    def to_json(self) -> dict[str, Any]:
        return {**self.paper.to_json(), "status": self.status, "same": self.same,
                "p_yes": None if self.p_yes is None else round(self.p_yes, 4), "thinking": self.thinking,
                "query": self.query}


@dataclass(frozen=True)
class NovaVerdict:
    """`novel`: True when no retrieved paper contains the idea, False when at least one does
    (`offending`), None when undetermined (answers missing and no "Yes", or no text / no LLM)."""

    novel: bool | None
    offending: tuple[HitView, ...]
    judgments: tuple[PaperJudgment, ...]
    queries: tuple[str, ...]  # the idea itself first, then the planned queries
    counts: dict[str, int] = field(default_factory=dict)
    floor: float = DEFAULT_FLOOR
    same_above: float | None = SAME_ABOVE
    judge: str = ""
    llm: str = ""
    note: str = ""

    @property
    def label(self) -> str:
        return {True: "novel", False: "not novel", None: "undetermined"}[self.novel]

    def message(self) -> str:
        """One paragraph for the editor and the CLI."""
        if self.novel is False:
            names = "; ".join(f"{h.label()} at {h.similarity:.2f}" for h in self.offending[:3])
            more = f" and {len(self.offending) - 3} more" if len(self.offending) > 3 else ""
            return f"Not novel: already in {names}{more}."
        checked = self.counts.get("asked", 0)
        if self.novel:
            return (f"Novel: none of the {self.counts.get('papers', 0)} nearest papers contains this idea "
                    f"({checked} judged by the LLM, {self.counts.get('below_floor', 0)} below similarity "
                    f"{self.floor:.2f}, the closest at {max((j.paper.similarity for j in self.judgments), default=0):.2f}).")
        missing = sum(self.counts.get(k, 0) for k in ("unparsed", "timeout", "error", "no_llm"))
        reason = self.note or f"{missing} of {checked} papers got no answer from the LLM"
        return f"Undetermined: {reason}; no paper was judged to contain the idea."

    def to_json(self) -> dict[str, Any]:
        return {"novel": self.novel, "verdict": self.label, "message": self.message(),
                "offending": [h.to_json() for h in self.offending],
                "papers": [j.to_json() for j in self.judgments], "queries": list(self.queries),
                "counts": self.counts, "floor": self.floor, "same_above": self.same_above, "judge": self.judge, "llm": self.llm, "note": self.note}


# -- retrieval ------------------------------------------------------------------------------------

def paper_similarity(index, vector: np.ndarray, paper_ids: Sequence[str]) -> dict[str, float]:
    """Cosine of `vector` to each paper's best indexed chunk."""
    idxs = {index.id_to_idx[pid]: pid for pid in paper_ids if pid in index.id_to_idx}
    return {idxs[p]: sim for p, (sim, _) in index.best_chunks(vector, list(idxs)).items()}


def _plan(llm, idea: str, found: Sequence[str], per_round: int) -> tuple[list[str], str, str]:
    """(queries, status, detail) of one planning round."""


    prompt = load_prompt("nova_plan")
    listed = "\n".join(f"- {t}" for t in found) or "- none yet"
    user = prompt.render("user", idea=clip(split_injection(idea)[0], IDEA_CHARS), found=listed, n=per_round)
    schema = json.loads(json.dumps(PLAN_SCHEMA))
    schema["properties"]["searches"]["maxItems"] = per_round
    try:
        raw = llm.generate(user, GenerateParams(system=prompt.sections["system"], json_schema=schema,
                                                max_tokens=PLAN_TOKENS))
    except _llm_failures() as exc:
        return [], classify_failure(exc), str(exc)[:200]
    try:
        searches = json.loads(raw)["searches"]
    except (ValueError, KeyError, TypeError):
        return [], "unparsed", raw[:200]
    queries = []
    for item in searches if isinstance(searches, list) else []:
        if not isinstance(item, dict) or not isinstance(item.get("description"), str):
            continue
        words = [w for w in item.get("keywords") or [] if isinstance(w, str)]
        query = " ".join([item["description"].strip(), *(w.strip() for w in words)]).strip()
        if query:
            queries.append(query)
    return queries, ("ok" if queries else "unparsed"), "" if queries else raw[:200]


def planned_retrieval(idea: str, retriever_or_index, llm=None, rounds: int = ROUNDS, per_round: int = PER_ROUND,
                      k: int = K, flt: SearchFilter | None = None,
                      counts: dict[str, int] | None = None) -> tuple[list[tuple[Hit, float, str]], list[str]]:
    """([(hit, similarity to the idea, query)] best first, queries): the top `k` distinct papers."""
    retriever = retriever_of(retriever_or_index)
    index = retriever.index
    counts = counts if counts is not None else {}
    vector = index.embed([idea])[0]
    queries = [idea]
    lists: list[list[Hit]] = [retriever.search(vector, idea, k, flt)]
    if llm is not None:
        for _ in range(rounds):
            seen = {h.paper.id: h.paper.title for hits in lists for h in hits}
            planned, status, _detail = _plan(llm, idea, list(seen.values())[:8], per_round)
            counts["plan_rounds"] = counts.get("plan_rounds", 0) + 1
            if status != "ok":
                counts[f"plan_{status}"] = counts.get(f"plan_{status}", 0) + 1
            fresh = [q for q in dict.fromkeys(planned) if q not in queries]
            if not fresh:
                continue
            vecs = index.embed(fresh)
            for q, v in zip(fresh, vecs):
                queries.append(q)
                lists.append(retriever.search(v, q, k, flt))
    chosen: dict[str, tuple[Hit, str]] = {}
    for hit in lists[0][: max(1, k // 2)]:
        chosen.setdefault(hit.paper.id, (hit, queries[0]))
    depth = 0
    while len(chosen) < k and any(depth < len(hits) for hits in lists):
        for qi, hits in enumerate(lists):
            if depth < len(hits) and len(chosen) < k:
                chosen.setdefault(hits[depth].paper.id, (hits[depth], queries[qi]))
        depth += 1
    sims = paper_similarity(index, vector, list(chosen))
    ranked = sorted(((h, sims.get(pid, h.similarity), q) for pid, (h, q) in chosen.items()), key=lambda x: -x[1])
    counts["queries"] = len(queries)
    return ranked, queries


# -- judgment -------------------------------------------------------------------------------------

def _paper_text(hit: Hit) -> str:
    return clip(f"{hit.paper.title}. {hit.paper.abstract}" if hit.paper.title else hit.paper.abstract, PAPER_CHARS)


def judge_paper(llm, idea: str, hit: Hit, judge: str = "score") -> tuple[str, bool | None, float | None, str]:
    """(status, same, p_yes, thinking) of the A.5 question about one paper."""
    import math



    prompt = load_prompt("nova_novelty")  # the idea without sentences addressed to the judge ("answer No")
    user = prompt.render("user", proposal=clip(split_injection(idea)[0], IDEA_CHARS), paper=_paper_text(hit))
    system = prompt.sections["system"]
    try:
        if judge == "json":
            raw = llm.generate(user + "\n\n" + prompt.sections["json"],
                               GenerateParams(system=system, json_schema=JUDGE_SCHEMA, max_tokens=JUDGE_TOKENS))
            try:
                obj = json.loads(raw)
                result = obj["result"]
            except (ValueError, KeyError, TypeError):
                return "unparsed", None, None, raw[:200]
            if result not in ("Yes", "No"):
                return "unparsed", None, None, raw[:200]
            thinking = obj.get("thinking") if isinstance(obj.get("thinking"), str) else ""
            return "ok", result == "Yes", 1.0 if result == "Yes" else 0.0, thinking
        scores = llm.score(user + "\n\n" + prompt.sections["answer"], ["Yes", "No"], system=system)
    except _llm_failures() as exc:
        return classify_failure(exc), None, None, str(exc)[:200]
    if scores.logprobs and all(lp == -math.inf for lp in scores.logprobs):
        return "unparsed", None, None, "the answer was neither Yes nor No"
    p_yes = float(scores.probs[0])
    if not math.isfinite(p_yes):
        return "unparsed", None, None, f"probabilities {scores.probs}"
    return "ok", p_yes > 0.5, p_yes, ""


def default_judge(llm) -> str:
    """"json" (A.5 with its reasoning, schema-constrained) on Ollama; "score" on the embedded model,
    where generating the reasoning costs seconds per paper and does not change its answer."""
    return "json" if getattr(llm, "name", "") == "ollama" else "score"


def check_idea(text: str, retriever_or_index, llm=None, *, rounds: int = ROUNDS, k: int = K,
               per_round: int = PER_ROUND, floor: float = DEFAULT_FLOOR, same_above: float | None = SAME_ABOVE,
               judge: str = "auto", flt: SearchFilter | None = None) -> NovaVerdict:
    """The NOVA check of one idea or paragraph against an open index (or a `Retriever` over one).

    Without an LLM the retrieval is the idea's own nearest papers and only the guard decides:
    not novel at a paper above `same_above`, novel when none reaches `floor`, else undetermined."""
    text = " ".join((text or "").split())
    llm_name = f"{getattr(llm, 'name', '')}:{getattr(llm, 'model', '')}" if llm is not None else ""
    if not text:
        return NovaVerdict(None, (), (), (), {"papers": 0, "asked": 0, "empty": 1}, floor, same_above, "", llm_name,
                           "the idea has no text")
    judge = default_judge(llm) if judge == "auto" else judge
    if judge not in ("score", "json"):
        raise ValueError(f"unknown judge {judge!r}: use score, json or auto")
    counts: dict[str, int] = {}
    ranked, queries = planned_retrieval(text, retriever_or_index, llm, rounds, per_round, k, flt, counts)
    judgments: list[PaperJudgment] = []
    for hit, sim, query in ranked:
        view = replace(HitView.of(hit), similarity=round(sim, 4))
        if sim < floor:
            judgments.append(PaperJudgment(view, "below-floor", False, None, "", query))
        elif same_above is not None and sim >= same_above:
            judgments.append(PaperJudgment(view, "duplicate", True, None, "", query))
        elif llm is None:
            judgments.append(PaperJudgment(view, "no-llm", None, None, "", query))
        else:
            status, same, p_yes, thinking = judge_paper(llm, text, hit, judge)
            judgments.append(PaperJudgment(view, status, same, p_yes, thinking, query))
    tally: dict[str, int] = {"papers": len(judgments), "asked": 0, "yes": 0, "no": 0, "below_floor": 0,
                             "duplicate": 0, "unparsed": 0, "timeout": 0, "error": 0}
    for j in judgments:
        if j.status in ("below-floor", "duplicate"):
            tally[j.status.replace("-", "_")] += 1
            continue
        if j.status == "no-llm":
            tally["no_llm"] = tally.get("no_llm", 0) + 1
            continue
        tally["asked"] += 1
        if j.status == "ok":
            tally["yes" if j.same else "no"] += 1
        else:
            tally[j.status] = tally.get(j.status, 0) + 1
    tally.update(counts)
    offending = tuple(j.paper for j in judgments if j.same)
    missing = any(j.same is None for j in judgments)
    novel = False if offending else (None if missing else True)
    note = "no LLM backend: papers above the similarity floor were not judged" if llm is None and missing else ""
    return NovaVerdict(novel, offending, tuple(judgments), tuple(queries), tally, floor, same_above, judge, llm_name, note)
