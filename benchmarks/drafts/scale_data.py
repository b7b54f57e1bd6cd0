"""The published sections behind the quality scale, and the function that rebuilds the scale.

`extract_sections()` reads ACLSum (PyPI `aclsum` 0.1.2, MIT: 250 ACL Anthology papers' full text in
S2ORC layout, split train / val / test by its authors) and writes `data/published_sections.jsonl.xz`:
one line a section — paper, split, heading, kind, up to `MAX_PARAGRAPHS` paragraphs of 20+ words.
Only that derived file ships; nothing reads `aclsum` at run time (`pip install --no-deps
aclsum==0.1.2` once, to re-extract).

`build_scale()` trains `analyzers/drafts/scale.QualityScale` from that file and the MiniLM vectors of
its paragraphs: the head learns published (train split) vs degraded (`degrade.py`, train lexicon)
paragraphs; the per-kind reference quantiles come from the train and val splits' published
sections; the test split and `tests/data/real` are never seen, and only reported.
"""

from __future__ import annotations

import importlib.util
import json
import lzma
import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Sequence

import numpy as np

from ...analyzers.drafts.heads import fit_logistic
from ...analyzers.drafts.scale import KINDS, ANY_KIND, SURFACE, QualityScale, section_kind, surface_features
from .degrade import KINDS as DEGRADATIONS, degrade
from ...analyzers.drafts.summaries import sections_of
from ...latex.project import parse_project
from ...latex.roots import root_in_folder
from ...index.ingest.load import default_corpus_path
from ...types import text_hash

SECTIONS_FILE = Path(__file__).with_name("data") / "published_sections.jsonl.xz"
REAL = Path(__file__).resolve().parents[2] / "tests" / "data" / "real"
MAX_PARAGRAPHS = 4  # kept in the file
SECTION_PARAGRAPHS = 2  # the scale's reference: a section's first two (CPU time: ~4 paragraphs/s on the shared cores)
EVAL_PARAGRAPHS = 1  # the bench: a held-out section's first paragraph, as published and in six degraded versions
SKIP = re.compile(r"acknowledg|funding|appendix|author contributions|ethic", re.I)
MIN_WORDS = 20
ACLSUM = "ACLSum (PyPI aclsum 0.1.2, MIT licence, Takeshita et al. 2024, ACL Anthology papers in S2ORC layout)"


@dataclass
class Section:
    paper: str
    split: str  # train | val | test (ACLSum's own split) | real (tests/data/real, test only)
    heading: str
    kind: str
    paragraphs: list[str]


def _words(text: str) -> int:
    return len(re.findall(r"[A-Za-z]{2,}", text))


def aclsum_dir() -> Path:
    spec = importlib.util.find_spec("aclsum")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("the aclsum package is not installed: `pip install --no-deps aclsum==0.1.2` "
                                "(only to re-extract published_sections.jsonl.xz)")
    return Path(list(spec.submodule_search_locations)[0]) / "dataset"


def aclsum_sections(dataset: Path) -> list[Section]:
    """Every paper's abstract and top-level sections (a subsection joins the section its number
    starts with), first `MAX_PARAGRAPHS` paragraphs of 20+ words each; the split is ACLSum's."""
    split_of = {}
    for split in ("train", "val", "test"):
        for line in (dataset / f"{split}.jsonl").read_text().splitlines():
            split_of[json.loads(line)["id"]] = split
    out = []
    for path in sorted((dataset / "paper_jsons").glob("*.json")):
        doc = json.loads(path.read_text())
        pid, parse = doc["paper_id"], doc["pdf_parse"]
        split = split_of.get(pid, "train")
        abstract = [p["text"] for p in parse.get("abstract", []) if _words(p["text"]) >= MIN_WORDS]
        if abstract:
            out.append(Section(pid, split, "Abstract", "abstract", abstract[:MAX_PARAGRAPHS]))
        top: dict[str, str] = {}
        groups: dict[str, list[str]] = defaultdict(list)
        order = []
        for p in parse["body_text"]:
            num, name = (p.get("sec_num") or "").strip(), (p.get("section") or "").strip()
            if not name:
                continue
            head = num.split(".")[0] if num else ""
            if head and "." not in num:
                top.setdefault(head, name)
            heading = top.get(head, name) if head else name
            if heading not in groups:
                order.append(heading)
            if _words(p["text"]) >= MIN_WORDS:
                groups[heading].append(p["text"])
        for heading in order:
            if groups[heading] and not SKIP.search(heading):
                out.append(Section(pid, split, heading, section_kind(heading), groups[heading][:MAX_PARAGRAPHS]))
    return out


def real_sections(folder: Path = REAL, projects: Iterable[Path] | None = None) -> list[Section]:
    """The papers of tests/data/real (or the LaTeX `projects` given: folders or root .tex files) through
    the project's own LaTeX parser: the sections a summary would judge (`summaries.sections_of`), first
    `MAX_PARAGRAPHS` paragraphs each."""

    papers = sorted(p for p in folder.iterdir() if p.is_dir()) if projects is None else check_projects(projects)
    out = []
    for paper in papers:
        root = paper if paper.is_file() else (choice.root if (choice := root_in_folder(paper)) else None)
        if root is None:
            if projects is not None:
                raise ValueError(f"{paper} holds no root .tex file (one with \\documentclass or \\begin{{document}}): "
                                 "pass the project's root .tex file")
            continue
        name = paper.stem if paper.is_file() else paper.name
        for group in sections_of(parse_project(root).chunks):
            texts = [c.text for c in group][:MAX_PARAGRAPHS]
            out.append(Section(name, "real", group[0].section,
                               section_kind(group[0].section, group[0].kind), texts))
    return out


def check_projects(projects: Iterable[Path]) -> list[Path]:
    """The LaTeX projects a user named (folders or .tex files), or a ValueError naming the first that is
    neither, before anything is embedded."""
    out = []
    for path in map(Path, projects):
        if not path.exists():
            raise ValueError(f"{path} does not exist: pass a LaTeX project folder or its root .tex file")
        if path.is_file() and path.suffix.lower() != ".tex":
            raise ValueError(f"{path} is not a .tex file: pass a LaTeX project folder or its root .tex file")
        out.append(path)
    return out


def write_sections(sections: Iterable[Section], path: Path = SECTIONS_FILE) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with lzma.open(path, "wt", encoding="utf-8", preset=9) as f:
        for s in sections:
            f.write(json.dumps(s.__dict__, ensure_ascii=False) + "\n")
    return path


def read_sections(path: Path = SECTIONS_FILE) -> list[Section]:
    with lzma.open(path, "rt", encoding="utf-8") as f:
        return [Section(**json.loads(line)) for line in f if line.strip()]


def extract_sections(dataset: Path | None = None, path: Path = SECTIONS_FILE) -> Path:
    """Re-extract the shipped file from an installed (or given) ACLSum dataset folder."""
    return write_sections(aclsum_sections(dataset or aclsum_dir()), path)


# -- embeddings, cached across runs ------------------------------------------------------------------

Embed = Callable[[Sequence[str]], np.ndarray]


class CachedEmbed:
    """`embed(texts)` through an embedder, each text's vector kept in an .npz keyed by its hash."""

    def __init__(self, embedder, path: Path, log: Callable[[str], None] = print):
        self.embedder, self.path, self.log, self.key = embedder, path, log, text_hash
        self.vectors: dict[str, np.ndarray] = {}
        if path.exists():
            with np.load(path) as data:
                self.vectors = dict(zip(data["keys"].tolist(), data["vectors"]))

    def __call__(self, texts: Sequence[str], batch: int = 256) -> np.ndarray:
        keys = [self.key(t) for t in texts]
        todo = list(dict((k, t) for k, t in zip(keys, texts) if k not in self.vectors).items())
        for start in range(0, len(todo), batch):
            part = todo[start:start + batch]
            for (k, _), v in zip(part, self.embedder.encode([t for _, t in part])):
                self.vectors[k] = np.asarray(v, dtype=np.float32)
            if len(todo) > batch:  # a long job: keep what is done and say how far it is
                self.save()
                self.log(f"scale: embedded {min(start + batch, len(todo))}/{len(todo)} new paragraphs")
        if 0 < len(todo) <= batch:
            self.save()
        return np.stack([self.vectors[k] for k in keys]).astype(np.float64) if keys else np.zeros((0, 384))

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp.npz")
        np.savez(tmp, keys=np.array(list(self.vectors)), vectors=np.stack(list(self.vectors.values())))
        tmp.replace(self.path)


def eval_sections(sections: list[Section], per_kind: int = 30) -> list[Section]:
    """The held-out sections the bench degrades: up to `per_kind` of each kind from ACLSum's test
    split (chosen by a hash of paper and heading), and every section of tests/data/real."""
    test = sorted((s for s in sections if s.split == "test"), key=lambda s: hash_index(s.paper, s.heading))
    picked, seen = [], Counter()
    for s in test:
        if seen[s.kind] < per_kind:
            picked.append(s)
            seen[s.kind] += 1
    return picked + [s for s in sections if s.split == "real"]


# -- building the scale -----------------------------------------------------------------------------


_WORDS = re.compile(r"[A-Za-z][A-Za-z'’-]*")


def vocabulary_of(sections: Iterable[Section], min_count: int = 1) -> frozenset[str]:
    counts = Counter(w.lower().strip("'’-") for s in sections for p in s.paragraphs
                     for w in _WORDS.findall(p) if len(w) >= 3)
    return frozenset(w for w, c in counts.items() if c >= min_count)


def tokenizer_words(embedder) -> frozenset[str]:
    """The whole lower-case words of 3+ letters in the embedder's word-piece vocabulary (general English:
    ~21k for MiniLM's uncased BERT vocabulary), so a field's ordinary words are not typos."""
    tok = getattr(embedder, "tokenizer", None)
    vocab = tok.get_vocab() if tok is not None and hasattr(tok, "get_vocab") else {}
    return frozenset(w for w in vocab if w.isalpha() and w.islower() and len(w) >= 3)


CORPUS_MIN_COUNT = 10  # "simulating" 559 times in the shipped abstracts, "caching" 290; "seperate" 5, "accross" 3


def corpus_words(path: Path | None = None, min_count: int = CORPUS_MIN_COUNT) -> frozenset[str]:
    """Words of 3+ letters used at least `min_count` times in the shipped corpus's titles and abstracts
    (~34k: the fields' own vocabulary, which ACLSum's ACL papers lack, so that a published paragraph on
    "caching" or "simulating" is not read as misspelt; a typo is rarely repeated that often)."""
    counts: Counter = Counter()
    with lzma.open(path or default_corpus_path(), "rt", encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            counts.update(w.lower().strip("'’-") for w in _WORDS.findall(f"{record.get('title') or ''} "
                                                                         f"{record.get('abstract') or ''}")
                          if len(w) >= 3)
    return frozenset(w for w, c in counts.items() if c >= min_count)


def section_score(scale: QualityScale, embed: Embed, paragraphs: Sequence[str]) -> float:
    return float(np.mean(scale.paragraph_scores(embed(paragraphs), paragraphs)))


def build_scale(sections: list[Section], embed: Embed, model_id: str, l2: float = 3.0,
                log: Callable[[str], None] = print) -> QualityScale:
    """Train the head on the train split (published vs each of its degraded versions, train lexicon),
    then set the per-kind reference from the train and val splits' published sections."""
    train = [s for s in sections if s.split == "train"]
    reference = [s for s in sections if s.split in ("train", "val")]
    vocabulary = vocabulary_of(reference) | tokenizer_words(getattr(embed, "embedder", None)) | corpus_words()
    texts, labels = [], []
    for s in train:
        for i, p in enumerate(s.paragraphs[:1]):
            texts.append(p)
            labels.append(1.0)
            kind = DEGRADATIONS[hash_index(s.paper, s.heading, i) % len(DEGRADATIONS)]
            texts.append(degrade(p, kind, "train"))
            labels.append(0.0)
    log(f"scale: embedding {len(texts)} training paragraphs (half of them degraded)")
    V = embed(texts)
    S = np.stack([surface_features(t, vocabulary) for t in texts])
    mean, std = S.mean(axis=0), S.std(axis=0) + 1e-6
    X = np.hstack([V, (S - mean) / std])
    y = np.array(labels)
    w, b = fit_logistic(X, y, l2=l2)
    scale = QualityScale(w, b, mean, std, vocabulary, {}, {}, model_id)
    log(f"scale: scoring {len(reference)} reference sections")
    by_kind: dict[str, list[float]] = defaultdict(list)
    for s in reference:
        score = section_score(scale, embed, s.paragraphs[:SECTION_PARAGRAPHS])
        by_kind[ANY_KIND].append(score)
        if s.kind != ANY_KIND:
            by_kind[s.kind].append(score)
    scale.quantiles = {k: np.quantile(np.array(v), np.linspace(0, 1, 101)) for k, v in by_kind.items()
                       if k in KINDS + (ANY_KIND,) and len(v) >= 20}
    scale.counts = {k: len(by_kind[k]) for k in scale.quantiles}
    scale.info = {"trained_on": f"{int(y.sum())} published paragraphs (each section's first) of ACLSum's train split ({len({s.paper for s in train})} "
                                f"papers) vs one degraded version each (benchmarks/drafts/degrade.py, train lexicon: "
                                f"{', '.join(DEGRADATIONS)} in turn)",
                  "reference": f"published sections (their first {SECTION_PARAGRAPHS} paragraphs) of ACLSum's train and val splits, by kind: "
                               + ", ".join(f"{k} {n}" for k, n in sorted(scale.counts.items())),
                  "source": ACLSUM, "surface_features": list(SURFACE), "l2": l2,
                  "vocabulary": f"{len(vocabulary)} words: those of 3+ letters in ACLSum's train and val paragraphs, the "
                                f"whole words of the embedder's word-piece vocabulary, and those used {CORPUS_MIN_COUNT}+ "
                                f"times in the shipped corpus's titles and abstracts",
                  "held_out": "ACLSum's test split and tests/data/real (never trained on, reported by --suite scale)"}
    return scale


def hash_index(*parts) -> int:
    import hashlib

    return int(hashlib.blake2b("|".join(map(str, parts)).encode(), digest_size=4).hexdigest(), 16)


if __name__ == "__main__":  # python -m peerlint.benchmarks.drafts.scale_data [ACLSUM_DATASET_DIR]
    import sys

    written = extract_sections(Path(sys.argv[1]) if len(sys.argv) > 1 else None)
    print(f"wrote {written} ({written.stat().st_size:,} bytes)")
