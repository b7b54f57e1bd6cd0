"""Makes the README's VS Code pictures from the screenshots of the last `make e2e` run (results/e2e/):
the editor part of the window, scaled down so the PNGs stay small.

    .venv/bin/python docs/images/crop_e2e.py
"""

from __future__ import annotations

from pathlib import Path

from PIL import Image

REPO = Path(__file__).resolve().parents[2]
RUN = REPO / "results" / "e2e"
# picture name: (screenshot step, crop box (left, top, right, bottom) of the 1400x900 window)
PICTURES = {
    "vscode-hover.png": ("hover", (348, 62, 1400, 580)),
    "vscode-novelty.png": ("novelty", (348, 300, 1400, 900)),
    "vscode-diagnostics.png": ("quick-fix", (348, 62, 1400, 900)),
}
WIDTH = 900


def main() -> None:
    shots = {p.stem.split("-", 1)[1]: p for p in RUN.glob("[0-9][0-9]-*.png")}
    for name, (step, box) in PICTURES.items():
        if step not in shots:
            raise SystemExit(f"no {step} screenshot in {RUN}: run `make e2e` first")
        img = Image.open(shots[step]).convert("RGB").crop(box)
        img = img.resize((WIDTH, round(img.height * WIDTH / img.width)), Image.LANCZOS)
        out = REPO / "docs" / "images" / name
        img.quantize(colors=256, method=Image.Quantize.FASTOCTREE).save(out, optimize=True)
        print(out, out.stat().st_size // 1024, "KB")


if __name__ == "__main__":
    main()
