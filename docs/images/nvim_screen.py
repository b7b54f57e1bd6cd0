"""Makes docs/images/neovim-hover.png: a real Neovim 0.11 with clients/neovim on a copy of examples/,
run in tmux; the screen is read with `tmux capture-pane -e` and drawn with Pillow, colours included.

    .venv/bin/python docs/images/nvim_screen.py [--index DIR] [--out FILE.png]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

REPO = Path(__file__).resolve().parents[2]
FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf"
BOLD = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono-Bold.ttf"
SGR = re.compile(r"\x1b\[([\d;]*)m")
FG, BG = (224, 226, 234), (20, 22, 27)
COLS, ROWS = 120, 34


def tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], check=True, capture_output=True, text=True).stdout


def capture(index: Path, work: Path) -> str:
    """Opens draft.tex, waits for peerlint's sign on line 158, shows its hover (K); the screen as ANSI."""
    paper = work / "paper"
    shutil.copytree(REPO / "examples", paper)
    env = {"HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", "PEERLINT_CACHE_DIR": str(work / "cache"),
           "XDG_CONFIG_HOME": str(work / "c"), "XDG_DATA_HOME": str(work / "d"), "XDG_STATE_HOME": str(work / "s"),
           "XDG_CACHE_HOME": str(work / "k"), "TERM": "xterm-256color",
           "PEERLINT_NVIM_CMD": json.dumps([str(REPO / ".venv" / "bin" / "peerlint"), "serve"]),
           "PEERLINT_NVIM_SETTINGS": json.dumps({"indexPath": str(index)})}
    nvim = [str(REPO / ".venv" / "bin" / "nvim"), "--clean", "-u", str(REPO / "clients/neovim/tests/minimal_init.lua"),
            "-c", "set termguicolors number signcolumn=yes", "draft.tex"]
    session = f"peerlint-shot-{os.getpid()}"
    tmux("new-session", "-d", "-s", session, "-x", str(COLS), "-y", str(ROWS), "-c", str(paper),
         "env", *[f"{k}={v}" for k, v in env.items()], *nvim)
    try:
        tmux("send-keys", "-t", session, "158G", "zt")
        end = time.time() + 120
        while not tmux("capture-pane", "-p", "-t", session).startswith("W 158"):
            if time.time() > end:
                raise SystemExit("no close-prior-work sign on line 158 after 120 s")
            time.sleep(0.5)
            tmux("send-keys", "-t", session, "zt")
        tmux("send-keys", "-t", session, "K")
        time.sleep(2)
        return tmux("capture-pane", "-p", "-e", "-t", session)
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)


def render(ansi: str, out: Path) -> None:
    """Each cell drawn with its SGR colours (truecolor, bold, underline), as the terminal showed it."""
    font, bold = ImageFont.truetype(FONT, 15), ImageFont.truetype(BOLD, 15)
    cw, ch = int(font.getlength("M")), 19
    img = Image.new("RGB", (COLS * cw + 16, ROWS * ch + 16), BG)
    draw = ImageDraw.Draw(img)
    for y, line in enumerate(ansi.splitlines()[:ROWS]):
        fg, bg, is_bold, under, x = FG, BG, False, False, 0
        for i, part in enumerate(SGR.split(line)):
            if i % 2:
                codes = [int(c) for c in part.split(";") if c] or [0]
                j = 0
                while j < len(codes):
                    c = codes[j]
                    if c == 0:
                        fg, bg, is_bold, under = FG, BG, False, False
                    elif c == 1:
                        is_bold = True
                    elif c in (4, 21):
                        under = True
                    elif c in (22, 24):
                        is_bold, under = (False, under) if c == 22 else (is_bold, False)
                    elif c in (38, 48) and codes[j + 1:j + 2] == [2]:
                        rgb = tuple(codes[j + 2:j + 5])
                        fg, bg = (rgb, bg) if c == 38 else (fg, rgb)
                        j += 4
                    elif c == 39:
                        fg = FG
                    elif c == 49:
                        bg = BG
                    j += 1
                continue
            for char in part:
                if x >= COLS:
                    break
                px, py = 8 + x * cw, 8 + y * ch
                draw.rectangle([px, py, px + cw, py + ch], fill=bg)
                draw.text((px, py + 1), char, font=bold if is_bold else font, fill=fg)
                if under:
                    draw.line([px, py + ch - 3, px + cw, py + ch - 3], fill=fg)
                x += 1
    img.save(out, optimize=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", type=Path, default=Path.home() / ".cache" / "peerlint-e2e" / "index")
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "images" / "neovim-hover.png")
    args = parser.parse_args()
    if shutil.which("tmux") is None:
        sys.exit("tmux is needed: apt-get install tmux")
    with tempfile.TemporaryDirectory() as work:
        render(capture(args.index, Path(work)), args.out)
    print(args.out)


if __name__ == "__main__":
    main()
