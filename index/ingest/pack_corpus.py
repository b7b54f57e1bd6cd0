"""Pack proceedings JSONL files into the one compressed corpus that peerlint ships.

    python -m peerlint.index.ingest.pack_corpus ../shared/data/proceedings index/data/proceedings.jsonl.xz

Every record is kept as it is, in file-name order then line order, minus the fields named by --drop
(by default the constant `source`). The output is compact JSON, one object a line, compressed with
xz preset 9; the same input gives the same bytes.
"""

from __future__ import annotations

import argparse
import json
import lzma
import sys
from pathlib import Path


def pack(src_dir: Path, out: Path, drop: tuple[str, ...] = ("source",)) -> int:
    """Write every record of src_dir/*.jsonl to `out`; returns the number of records."""
    files = sorted(src_dir.glob("*.jsonl"))
    if not files:
        raise SystemExit(f"{src_dir}: no *.jsonl files to pack; pass the proceedings directory")
    out.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    with lzma.open(out, "wt", encoding="utf-8", preset=9 | lzma.PRESET_EXTREME) as sink:
        for path in files:
            with path.open(encoding="utf-8") as source:
                for lineno, line in enumerate(source, 1):
                    if not line.strip():
                        continue
                    try:
                        record = json.loads(line)
                    except json.JSONDecodeError as err:
                        raise SystemExit(f"{path}:{lineno}: invalid JSON ({err.msg}); fix the source first") from None
                    for key in drop:
                        record.pop(key, None)
                    sink.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n")
                    count += 1
    return count


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m peerlint.index.ingest.pack_corpus", description=__doc__.splitlines()[0])
    parser.add_argument("src_dir", type=Path, help="directory of VENUE-YEAR.jsonl files")
    parser.add_argument("out", type=Path, help="output file, e.g. index/data/proceedings.jsonl.xz")
    parser.add_argument("--drop", nargs="*", default=["source"], help="fields to leave out (default: source)")
    args = parser.parse_args(argv)
    count = pack(args.src_dir, args.out, tuple(args.drop))
    print(f"{args.out}: {count} records, {args.out.stat().st_size / 1e6:.2f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
