"""The revisions model's training and the `diff` suite of `peerlint bench drafts`.

`fit_and_measure` chooses the feature set by 5-fold cross-validation (3 seeds) on arXivEdits
train.json alone, refits it on all of train.json, writes analyzers/drafts/data/revisions_model.npz
and reports the win rate of every candidate on the evaluation file (dev.json by default, or any
arXivEdits-layout file given with `--arxivedits`); the evaluation file never shapes the model.
`diff_suite` builds a throwaway git repository from revision pairs (the originals committed, the
revisions in the work tree), runs the diff machinery of `peerlint diff` on it and reports how
often it calls the revision better.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...analyzers.drafts.paper_diff import diff_project
from ...analyzers.drafts.revision_features import normalise
from ...analyzers.drafts.revisions import FeatureReader, RevisionJudge, RevisionModel, paragraph_pairs
from ...analyzers.novelty.model import fit_pairwise_logistic
from .context import ARXIVEDITS, Bench, BenchError, log
from .metrics import win_rate
from ...server.service import Service
from ...settings import Settings
from ..lsp.draft import make_draft

# feature sets tried, simplest first; the one with the best train cross-validation is shipped
CANDIDATES = {
    "fluency + length": ("fluency", "log words"),
    "fluency + length + register": ("fluency", "log words", "register"),
    "+ edit window": ("fluency", "log words", "register", "edit fluency", "edit tokens"),
    "+ tokens per word, lexicon": ("fluency", "log words", "register", "edit fluency", "edit tokens",
                                   "tokens per word", "hedges / word", "boosters / word", "informal / word",
                                   "connectives / word", "commas / word", "repeated word"),
}
L2 = 1.0


@dataclass(frozen=True)
class EditPair:
    before: str
    after: str
    intents: tuple[str, ...]
    paper: str


def load_pairs(path: Path) -> list[EditPair]:
    """Sentence pairs of an arXivEdits-layout JSON file ({id: {sentence-1, sentence-2, …}})."""
    if not path.is_file():
        raise BenchError(f"arXivEdits file {path} is missing (the shared copy is in shared/data/arxivedits)")
    try:
        items = json.loads(path.read_text(encoding="utf-8"))
        out = []
        for item in (items.values() if isinstance(items, dict) else items):
            intents = {e.get("intention") or "unlabelled" for e in (item.get("edits-combination-0") or {}).values()}
            out.append(EditPair(item["sentence-1"], item["sentence-2"], tuple(sorted(intents)) or ("unlabelled",),
                                str(item.get("arxiv-id", ""))))
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise BenchError(f"{path} is not in the arXivEdits layout (sentence-1, sentence-2 per item): {exc}") from None
    if not out:
        raise BenchError(f"{path} holds no sentence pairs")
    return out


def design(reader: FeatureReader, pairs: list[EditPair], names: tuple[str, ...]) -> np.ndarray:
    """One row per pair: feature differences summed over its changed sentences (what the judge sums)."""
    rows = []
    for n, p in enumerate(pairs, 1):
        diffs = reader.differences(paragraph_pairs(p.before, p.after), names)
        rows.append(diffs.sum(axis=0) if len(diffs) else np.zeros(len(names)))
        if n % 100 == 0:
            log(f"revisions: features of {n}/{len(pairs)} pairs")
    return np.array(rows)


def fit(X: np.ndarray) -> np.ndarray:
    """Weights on raw differences of a pairwise logistic fit on standardised ones."""
    scale = X.std(axis=0)
    scale = np.where(scale > 1e-12, scale, 1.0)
    return fit_pairwise_logistic(X / scale, l2=L2) / scale


def _wins(scores: np.ndarray) -> float:
    return float(((scores > 0).sum() + 0.5 * (scores == 0).sum()) / len(scores))


def cross_validate(X: np.ndarray, seeds: int = 3, folds: int = 5) -> float:
    results = []
    for seed in range(seeds):
        order = np.random.default_rng(seed).permutation(len(X))
        for k in range(folds):
            test = order[k::folds]
            w = fit(X[np.setdiff1d(order, test)])
            results.append(_wins(X[test] @ w))
    return float(np.mean(results))


def fit_and_measure(bench: Bench, eval_pairs: list[EditPair], eval_name: str,
                    save: bool = True) -> tuple[dict, list[list], dict]:
    """(scores per candidate on the evaluation pairs, table rows, info); `save` writes the chosen model
    (the same fit whatever the evaluation file: only its recorded dev number would differ)."""
    train = load_pairs(ARXIVEDITS / "train.json")
    reader = FeatureReader(bench.fluency_llm(), embed=lambda texts: bench.embed(texts))
    names = tuple(dict.fromkeys(n for c in CANDIDATES.values() for n in c))
    start = time.perf_counter()
    Xt, Xe = design(reader, train, names), design(reader, eval_pairs, names)
    seconds = time.perf_counter() - start
    col = {n: i for i, n in enumerate(names)}
    rows, scores, weights = [], {}, {}
    for label, features in CANDIDATES.items():
        idx = [col[n] for n in features]
        cv = cross_validate(Xt[:, idx])
        w = fit(Xt[:, idx])
        weights[label] = w
        after = Xe[:, idx] @ w
        scores[f"revisions model: {label}"] = (after, np.zeros(len(after)))
        rows.append([label, len(features), round(cv, 3), round(_wins(after), 3)])
    best = max(rows, key=lambda r: r[2])
    chosen = CANDIDATES[best[0]]
    info = {"trained_on": f"arXivEdits train.json ({len(train)} sentence pairs)", "chosen": best[0],
            "chosen_by": "mean win rate of 5-fold cross-validation (3 seeds) on train.json", "train_cv": best[2],
            "eval": eval_name, "eval_win_rate": best[3], "l2": L2, "features_seconds": round(seconds, 1)}
    if save:
        RevisionModel(chosen, weights[best[0]], info).save()
    info["saved"] = save
    info["weights"] = dict(zip(chosen, map(float, weights[best[0]])))
    log(f"revisions: {'shipped' if save else 'chose (not saved)'} '{best[0]}' (train CV {best[2]}, {eval_name} {best[3]})")
    return scores, rows, info


# -- the diff suite ----------------------------------------------------------------------------------

_LATEX_SPECIAL = {"\\": r"\textbackslash{}", "%": r"\%", "&": r"\&", "#": r"\#", "_": r"\_", "$": r"\$",
                  "{": r"\{", "}": r"\}", "^": r"\^{}", "~": r"\textasciitilde{}"}


def as_latex(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in normalise(text))


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=peerlint bench", "-c", "user.email=bench@peerlint.invalid", *args],
                   cwd=repo, check=True, capture_output=True, timeout=60)


def write_repository(repo: Path, pairs: list[EditPair]) -> Path:
    """paper.tex with every original as a paragraph, committed; the revisions in the work tree."""
    def document(side: str) -> str:
        body = "\n\n".join(as_latex(getattr(p, side)) for p in pairs)
        return f"\\documentclass{{article}}\n\\begin{{document}}\n\\section{{Revisions}}\n\n{body}\n\n\\end{{document}}\n"

    repo.mkdir(parents=True, exist_ok=True)
    _git(repo, "init", "-q")
    (repo / "paper.tex").write_text(document("before"), encoding="utf-8")
    _git(repo, "add", "paper.tex")
    _git(repo, "commit", "-q", "-m", "originals")
    (repo / "paper.tex").write_text(document("after"), encoding="utf-8")
    return repo / "paper.tex"


def diff_suite(bench: Bench, pairs: list[EditPair], eval_name: str) -> None:
    model = RevisionModel.load()
    if model is None:
        raise BenchError("no revisions model in analyzers/drafts/data/revisions_model.npz: run "
                         "`peerlint bench drafts --suite revisions` first (it trains and writes it)")
    judge = RevisionJudge(model, FeatureReader(bench.fluency_llm(), embed=lambda texts: bench.embed(texts)))
    with tempfile.TemporaryDirectory(prefix="peerlint-diff-bench-") as tmp:
        start = time.perf_counter()
        result = diff_project(write_repository(Path(tmp) / "repo", pairs), judge)
        seconds = time.perf_counter() - start
    verdicts = [r for r in result.revisions if r.verdict in ("better", "worse")]
    p_better = np.array([r.judgment.p_better for r in verdicts])
    kinds: dict[str, int] = {}
    for r in result.revisions:
        kinds[r.aligned.kind] = kinds.get(r.aligned.kind, 0) + 1
    judged = win_rate(p_better, np.full(len(p_better), 0.5))
    # a pair the alignment could not pair (new + removed) is a coin flip: counted as half a win
    overall = (judged["wins"] + 0.5 * judged["ties"] + 0.5 * (len(pairs) - len(verdicts))) / len(pairs)
    rows = [["peerlint diff (revisions model)", len(pairs), len(verdicts), round(judged["win_rate"] or 0, 3),
             round(overall, 3), result.unchanged, round(seconds, 1)]]
    bench.report("diff", {"pairs": f"{eval_name} ({len(pairs)} pairs), one paragraph each in a throwaway git "
                                   "repository: originals committed, revisions in the work tree",
                          "model": model.info},
                 [("diff: revised paragraph judged better than the committed original",
                   ["method", "pairs", "judged", "win rate (judged)", "win rate (all)", "unchanged", "seconds"], rows)],
                 {"rows": rows, "alignment": kinds, "win_rate": judged["win_rate"], "win_rate_all": overall})


# -- how long the editor takes to judge a save --------------------------------------------------------

EDITED_PARAGRAPHS = 5


def edit_paragraphs(text: str, count: int = EDITED_PARAGRAPHS, word: str = "also") -> tuple[str, int]:
    """`text` with one sentence of `count` prose paragraphs, spread over the draft, edited (`word` put
    after its first word), and how many were edited: the editor's case of a save after a round of edits."""
    import re

    lines = text.splitlines()
    prose = [i for i, line in enumerate(lines) if len(line) > 300 and not line.startswith("\\")]
    chosen = prose[2::max(len(prose) // count, 1)][:count]
    for i in chosen:
        sentences = re.split(r"(?<=[.!?])\s+", lines[i])
        k = 1 if len(sentences) > 1 else 0
        first, _, rest = sentences[k].partition(" ")
        sentences[k] = f"{first} {word} {rest}"
        lines[i] = " ".join(sentences)
    return "\n".join(lines) + "\n", len(chosen)


def editor_latency(pages: int) -> tuple[list[list], dict]:
    """The language server's revision judgments (the `revisions` analyzer, as its background tier
    runs it) on a `pages`-page draft in a fresh git repository with a fresh cache: rows for opening it
    unedited (the LM is loaded then), a save with `EDITED_PARAGRAPHS` paragraphs edited, the same save
    again, and a further edit of one of them; each with the sentences the LM scored."""

    rows, payload = [], {}
    with tempfile.TemporaryDirectory(prefix="peerlint-revision-latency-") as tmp:
        repo = Path(tmp) / "paper"
        repo.mkdir()
        text = make_draft(pages)
        (repo / "draft.tex").write_text(text, encoding="utf-8")
        try:
            _git(repo, "init", "-q")
            _git(repo, "add", "draft.tex")
            _git(repo, "commit", "-q", "-m", "v1")
        except (OSError, subprocess.SubprocessError) as exc:
            raise BenchError(f"the revision rows need git ({exc}): install git") from None
        uri = (repo / "draft.tex").as_uri()
        service = Service(Settings(analyzers=("revisions",)),
                          workspace=repo, cache_dir=Path(tmp) / "cache")
        judge = service.revision_judge()
        if judge is None:
            raise BenchError("no revisions model shipped: run `peerlint bench drafts --suite revisions` first")
        llm = judge.features.llm
        scored = {"n": 0}
        loglik = llm.loglik

        def counted(prompt: str, sentence: str):
            scored["n"] += 1
            return loglik(prompt, sentence)

        llm.loglik = counted
        edited, n = edit_paragraphs(text)
        again, _ = edit_paragraphs(edited, count=1, word="then")
        for name, version in (("open, nothing edited (loads the LM)", text),
                              (f"save, {n} paragraphs edited (one sentence each)", edited),
                              ("the same save again", edited),
                              ("one of them edited again", again)):
            service.changed(uri, version)
            before, start = scored["n"], time.perf_counter()
            state = service.parse(uri)
            found = service.engine.run(state.chunks, "llm", state.bib, project=service.source(state)).judgments
            seconds = time.perf_counter() - start
            rows.append([name, round(seconds, 3), scored["n"] - before, len(found)])
            payload[name] = seconds
    return rows, payload
