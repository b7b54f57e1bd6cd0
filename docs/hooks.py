"""MkDocs hook: the pages are written for GitHub too, where a `|` inside code in a table must be
written `\\|`; Python-Markdown already keeps a pipe inside backticks in its cell, and would show the
backslash. So, on table lines only, `\\|` inside a code span becomes `|` before the page is rendered."""

import re

CODE = re.compile(r"`[^`\n]*`")


def on_page_markdown(markdown: str, **_) -> str:
    lines = markdown.split("\n")
    for i, line in enumerate(lines):
        if line.startswith("|") and "\\|" in line:
            lines[i] = CODE.sub(lambda m: m.group(0).replace("\\|", "|"), line)
    return "\n".join(lines)
