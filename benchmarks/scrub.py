"""Secret scrubbing throughput on ordinary code, beside a plain regex pass as the anchor.

    python benchmarks/scrub.py [--mb 2]

The anchor is one `re.finditer` pass for the literal ``hf_`` over the same text: the least any
scanner that looks at every character must pay.
"""

from __future__ import annotations

import argparse
import glob
import re
import sysconfig
import time

from trajforge.scrub import Scrubber


def corpus(limit: int) -> str:
    parts, size = [], 0
    for path in sorted(glob.glob(sysconfig.get_paths()["stdlib"] + "/**/*.py", recursive=True)):
        with open(path, encoding="utf-8", errors="replace") as fh:
            parts.append(fh.read())
        size += len(parts[-1])
        if size >= limit:
            break
    return "".join(parts)[:limit]


def best_of(fn, text: str, runs: int = 3) -> float:  # type: ignore[no-untyped-def]
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        fn(text)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mb", type=float, default=2.0)
    args = parser.parse_args()
    text = corpus(int(args.mb * 1e6))
    mb = len(text) / 1e6
    anchor = re.compile("hf_")
    raw = best_of(lambda t: sum(1 for _ in anchor.finditer(t)), text)
    scrubbed = best_of(Scrubber().text, text)
    print(f"{'pass':<28}{'MB/s':>10}")
    print(f"{'regex anchor (hf_)':<28}{mb / raw:>10.1f}")
    print(f"{'Scrubber.text':<28}{mb / scrubbed:>10.1f}")
    print(f"ratio scrub/anchor: {raw / scrubbed:.2f}  ({mb:.1f} MB of stdlib code)")


if __name__ == "__main__":
    main()
