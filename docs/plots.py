"""Draws the benchmark pages' plots from the run files the pages cite (results/latest/).

    python docs/plots.py [--out docs/images/plots]

Run it after copying a new run to results/latest/ (docs/benchmarks/results.md); it needs matplotlib
(the `dev` and `bench` extras). Each plot shows numbers of one results file, nothing else.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
LATEST = REPO / "results" / "latest"
CUTOFFS = ["10", "20", "30", "40", "50"]


def _load(name: str) -> dict:
    return json.loads((LATEST / name).read_text(encoding="utf-8"))


def _save(fig, out: Path, name: str) -> Path:
    fig.tight_layout()
    path = out / name
    fig.savefig(path, dpi=110, metadata={"Software": None})
    plt.close(fig)
    return path


def schnovel(out: Path) -> Path:
    field, year = _load("schnovel-split-field.json"), _load("schnovel-split-year.json")
    rows = [("peerlint\n(other fields)", field, "peerlint"), ("peerlint\n(other years)", year, "peerlint"),
            ("date-knn", field, "date-knn"), ("embedding-head\n(other fields)", field, "embedding-head")]
    values = [next(m["mean"] for m in run["methods"] if m["method"] == method) for _, run, method in rows]
    fig, ax = plt.subplots(figsize=(6.5, 3.2))
    ax.bar([r[0] for r in rows], values, color=["#3b6ea5", "#3b6ea5", "#999999", "#999999"])
    ax.axhline(0.72, color="#c0504d", linestyle="--", label="the paper's best (RAG-Novelty, GPT-4o-mini)")
    ax.axhline(0.5, color="black", linewidth=0.8, label="chance")
    ax.set_ylim(0.4, 0.85)
    ax.set_ylabel("mean accuracy, both orders")
    ax.set_title("SchNovel: which of two papers is more novel (1,000 pairs)")
    ax.legend(fontsize=8, loc="lower right")
    return _save(fig, out, "schnovel.png")


def retrieval(out: Path) -> Path:
    fig, axes = plt.subplots(1, 2, figsize=(8, 3.2), sharey=False)
    names = {"dense": "dense", "lexical": "lexical (BM25)", "hybrid-rrf": "hybrid, RRF",
             "hybrid-weighted": "hybrid, weighted (default)", "SEC (hybrid)": "SEC over hybrid"}
    for ax, (truth, title) in zip(axes, [("context", "paragraphs (94)"), ("paper", "papers (20)")]):
        run = _load(f"related-acm-cr-{truth}-full.json")
        for row in run["rows"]:
            if row["row"] in names:
                ax.plot([int(c) for c in CUTOFFS], [row["recall"][c] for c in CUTOFFS], marker="o",
                        label=names[row["row"]], linewidth=2.2 if row["row"] == "hybrid-weighted" else 1.2)
        ax.set_title(f"ACM-CR dev, all 96,692 papers: {title}", fontsize=9)
        ax.set_xlabel("k")
        ax.set_ylabel("recall@k")
    axes[0].legend(fontsize=7)
    return _save(fig, out, "retrieval.png")


def related_precision(out: Path) -> Path:
    run = _load("related-precision-sample12000.json")
    fig, axes = plt.subplots(1, 2, figsize=(8, 3.2), sharey=True)
    for ax, split in zip(axes, ["dev", "test"]):
        for k in (1, 2, 3):
            points = sorted((p["threshold"], p["precision"]) for p in run[split] if p["k"] == k)
            ax.plot([t for t, _ in points], [p for _, p in points], marker="o", label=f"top {k}")
        chosen = run["operating_point"][split]
        ax.scatter([chosen["threshold"]], [chosen["precision"]], s=120, facecolors="none", edgecolors="black",
                   label="default (top 2, cosine ≥ 0.65)")
        ax.axhline(run["target_precision"], color="#c0504d", linestyle="--", linewidth=0.8, label="target")
        ax.set_title(f"{split}: {len({p['threshold'] for p in run[split]})} thresholds", fontsize=9)
        ax.set_xlabel("cosine threshold")
    axes[0].set_ylabel("precision of suggestions")
    axes[0].legend(fontsize=7)
    return _save(fig, out, "related-precision.png")


def latency(out: Path) -> Path:
    int8, exact = _load("lsp-int8.json"), _load("lsp-exact.json")
    labels, a, b = [], [], []
    for pages in (10, 40):
        row8 = next(r for r in int8["rows"] if r["pages"] == pages)
        rowx = next(r for r in exact["rows"] if r["pages"] == pages)
        labels += [f"{pages} pages:\nfirst screen", f"{pages} pages:\nwhole draft"]
        a += [row8["first_screen_ms"] / 1000, row8["first_diagnostics_ms"] / 1000]
        b += [rowx["first_screen_ms"] / 1000, rowx["first_diagnostics_ms"] / 1000]
    x = range(len(labels))
    fig, ax = plt.subplots(figsize=(6.5, 3.2))
    ax.bar([i - 0.2 for i in x], a, width=0.4, label="int8 queries (default)", color="#3b6ea5")
    ax.bar([i + 0.2 for i in x], b, width=0.4, label="exact queries", color="#999999")
    ax.set_xticks(list(x), labels, fontsize=8)
    ax.set_ylabel("seconds to diagnostics")
    ax.set_title("The language server on generated drafts")
    ax.legend(fontsize=8)
    return _save(fig, out, "latency.png")


def scale(out: Path) -> Path:
    """The beam sweep of one run each: recall@10 against dense p50 for each expansion_search."""
    fig, ax = plt.subplots(figsize=(6.5, 3.4))
    for label, name in [("1M vectors", "bench-index-scale-1m.json"), ("3M vectors", "bench-index-scale-3m.json")]:
        sweep = _load(name)["search"]["expansion_sweep"]
        ax.plot([s["p50_ms"] for s in sweep], [s["recall_at_10"] for s in sweep], marker="o", label=label)
        for s in sweep:
            ax.annotate(str(s["expansion_search"]), (s["p50_ms"], s["recall_at_10"]), fontsize=7,
                        textcoords="offset points", xytext=(4, -10))
    ax.axhline(0.95, color="#c0504d", linestyle="--", linewidth=0.8, label="target recall@10")
    ax.set_xlabel("dense search p50, ms (warm pages)")
    ax.set_ylabel("recall@10 against exact search")
    ax.set_title("HNSW beam (expansion_search) sweep on near-real vectors", fontsize=9)
    ax.legend(fontsize=8, loc="lower right")
    return _save(fig, out, "scale.png")


PLOTS = {"schnovel.png": schnovel, "retrieval.png": retrieval, "related-precision.png": related_precision,
         "latency.png": latency, "scale.png": scale}


def main(argv: list[str] | None = None) -> list[Path]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "images" / "plots")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    return [draw(args.out) for draw in PLOTS.values()]


if __name__ == "__main__":
    for path in main():
        print(path)
