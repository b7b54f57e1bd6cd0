"""Fixtures shared by the whole suite: paths to real data and a small real index.

The test index holds real shipped abstracts (COLING 2020, NAACL 2021, ICLR 2017, ACL 2021 and the
NeurIPS 2017 papers the example draft cites). It lives in the user cache so that repeated runs
reuse its embedding cache: a rebuild then only re-packs vectors (seconds, not minutes).
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
LATEX = SHARED / "data" / "latex"
EXAMPLES = REPO / "examples"
TEST_VENUES = {("COLING", 2020), ("NAACL", 2021), ("ICLR", 2017), ("ACL", 2021)}
EXTRA_TITLES = {"attention is all you need"}

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


@functools.lru_cache(maxsize=1)
def shipped_papers() -> tuple:
    """Every paper of the shipped default corpus, read once per test session (~158k papers: reading them
    costs half a minute, which a dozen test modules would otherwise pay each)."""
    from peerlint.index.ingest.load import default_corpus_path, load_papers

    return tuple(load_papers([default_corpus_path()], warn=lambda m: None))


def sample_papers():
    return [p for p in shipped_papers() if (p.venue, p.year) in TEST_VENUES or p.title.lower() in EXTRA_TITLES]


@pytest.fixture(scope="session")
def index_path() -> Path:
    """A real index of ~2,200 shipped abstracts, built (incrementally) once per session."""
    from peerlint.index.build import build_index
    from peerlint.locations import cache_root

    root = Path(os.environ.get("PEERLINT_TEST_INDEX", cache_root() / "test-index"))
    build_index(sample_papers(), root, sources=["tests/conftest.py:sample_papers"], show_progress=False)
    return root


@pytest.fixture(scope="session")
def vector_index(index_path):
    from peerlint.index.store import open_index

    return open_index(index_path)


def score_each(llm, engine, prompts, choices, system) -> tuple[list, list[int]]:
    """Each prompt's scores from `llm` in turn, and the prompt tokens `engine` reused from the call before."""
    scores, reused = [], []
    for prompt in prompts:
        before = engine.reused_tokens
        scores.append(llm.score(prompt, choices, system=system))
        reused.append(engine.reused_tokens - before)
    return scores, reused
