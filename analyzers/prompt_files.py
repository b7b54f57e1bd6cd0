"""Prompt templates as files (`analyzers/prompts/*.txt`), and clipping text to a prompt's budget.

Every LLM method (SchNovel, Between the Drafts, NOVA, RINoBench) reads its prompt here, so a
template's header always names the paper and section it follows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

PROMPTS = Path(__file__).resolve().parent / "prompts"


@dataclass(frozen=True)
class Prompt:
    """A template file: its header (the source it follows) and named sections ([system], [user], …)."""

    source: str
    sections: dict[str, str]

    def render(self, section: str, **values) -> str:
        return self.sections[section].format(**values)


@lru_cache(maxsize=None)
def load_prompt(name: str) -> Prompt:
    header, sections, current = [], {}, None
    for line in (PROMPTS / f"{name}.txt").read_text(encoding="utf-8").splitlines():
        match = re.fullmatch(r"\[([a-z_]+)\]", line.strip())
        if match:
            current = match.group(1)
            sections[current] = []
        elif current is None and line.startswith("#"):
            header.append(line.lstrip("# "))
        elif current is not None:
            sections[current].append(line)
    return Prompt(" ".join(header), {k: "\n".join(v).strip() for k, v in sections.items()})


def clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit].rsplit(" ", 1)[0] + " …"
