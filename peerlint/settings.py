"""The user's settings and their defaults: what an editor sends and `peerlint check --settings` reads.

The dataclass lives in the bottom layer so that every layer, and every benchmark, can take one;
reading them from an editor's payload, validated one key at a time, is `server/config.py`.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Settings:
    index_path: str = ""  # empty: the default per-user index
    backend: str = "auto"
    model: str = ""  # empty: the backend's default; a packaged model's name (`peerlint models list`), a .gguf, or an Ollama model
    ollama_host: str = ""  # empty: $OLLAMA_HOST or http://127.0.0.1:11434
    target_venue: str = ""  # empty: guessed from \documentclass / \usepackage
    analyzers: tuple[str, ...] = ("prior-work",)
    close_prior_work_threshold: float = 0.90  # calibrated: docs/usage/diagnostics.md
    related_work_min_similarity: float = 0.65  # with related_work_k: chosen for precision (`bench related --precision`)
    related_work_k: int = 2
    hover_k: int = 5
    severity: dict[str, str] = field(default_factory=lambda: {
        "close-prior-work": "warning", "missing-related-work": "information", "weak-chunk": "information",
        "off-venue-style": "information", "novelty": "information"})
    debounce_ms: int = 300
    latex_commands: dict[str, str] = field(default_factory=dict)
    latex_environments: dict[str, str] = field(default_factory=dict)
    max_tokens: int = 200
    log_file: str = ""
    drafts_scorer: str = "auto"  # quality/venue-style: llm | embedding | ensemble; auto: what `bench drafts` chose
    weak_chunk_percentile: float = 0.10  # weak-chunk: below this percentile of the venue's reference texts
    weak_chunk_drop: float = 0.50  # ... or this share of the 1-10 scale below the draft's own median
    off_venue_percentile: float = 0.10  # off-venue-style: below this percentile of the venue's own papers
    suggestion_tokens: int = 80  # length limit of the LLM's one suggestion per flagged chunk
    max_suggestions: int = 2  # flagged chunks per analysis run that get an LLM suggestion (lowest rated first)
    search_mode: str = "hybrid"  # how every finding finds papers: dense | lexical | hybrid (docs/usage/index.md)
    query_embedding: str = "int8"  # the draft's paragraphs on int8 (~2x less CPU, no measured loss) or exact (docs/benchmarks/latency.md)
    published_before: str = "auto"  # ISO date or year: only papers published strictly before it are evidence;
    # "auto": the deadline of the past venue whose style the draft uses (`draft_date`); empty: all
    llm_timeout_s: int = 60  # the longest one LLM request may take before the LLM checks report it (once)
    extra_roots: tuple[str, ...] = ()  # folders outside the project that \input, .bib etc. may read (docs/usage/privacy.md)
    section_summaries: bool = True  # per-section quality / venue-style / reads-like lines (code lens, `check`)
    root_file: str = ""  # the root .tex to use where several roots include the edited file (absolute or workspace-relative)
    revision_base: str = "HEAD"  # revision-weaker: the git revision a draft is compared with (outside git: the text at open)

    def severity_of(self, code: str) -> str:
        return self.severity.get(code, "information")
