"""Ingest benchmark: the pi reader against a bare ``orjson.loads``-per-line pass.

    python benchmarks/ingest.py [--copies 100] [--corpus /work/shared/corpus/pi-mono]

The two real pi-mono sessions are written ``--copies`` times each as separate files (200 files,
about 334 MB, by default) into a temporary folder: a dump is a folder of session files (pi's
own ``sessions/`` tree, pi-share-hf Hub datasets), so per-file work (open, sha256 content
hash, header, tree walk) is part of what is measured, and memory must stay flat from one file
to the next. A single concatenated stream would hide the per-file cost and turn the test into
one 334 MB session.

Both passes read the same files from the page cache (a warm-up read comes first), file by file
in turn so that load from other processes hits both alike. The raw pass reads a file and calls
``orjson.loads`` on every line, the floor for any JSONL reader; the pi pass runs
``PiFormat.parse`` (JSON, sha256 content hash, conversation path, normalised Events).
Resident memory is sampled after every file.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

import orjson
import psutil

from trajforge.reconstruct.formats.pi import PiFormat
from trajforge.records import Session

CORPUS = Path("/work/shared/corpus/pi-mono")
SOURCES = ("large-session.jsonl", "before-compaction.jsonl")
MB = 1e6


def make_dump(corpus: Path, copies: int, dest: Path) -> list[Path]:
    files = []
    for name in SOURCES:
        data = (corpus / name).read_bytes()
        for i in range(copies):
            path = dest / f"{i:03d}-{name}"
            path.write_bytes(data)
            files.append(path)
    return files


def read_raw(path: Path) -> int:
    """The floor: read the file and ``orjson.loads`` every non-blank line."""
    records = 0
    for line in path.read_bytes().splitlines():
        if line.strip():
            orjson.loads(line)
            records += 1
    return records


def read_pi(fmt: PiFormat, path: Path) -> int:
    events = 0
    for item in fmt.parse(path):
        if not isinstance(item, Session) or item.warnings:
            raise SystemExit(f"{path}: unexpected warning {item}")
        events += len(item.events)
    return events


def run(files: list[Path]) -> tuple[list[float], list[int], list[int]]:
    """Raw and pi passes interleaved file by file, so load from other processes hits both."""
    fmt, proc = PiFormat(), psutil.Process()
    seconds, counts, rss = [0.0, 0.0], [0, 0], [proc.memory_info().rss]
    for path in files:
        start = time.perf_counter()
        counts[0] += read_raw(path)
        middle = time.perf_counter()
        counts[1] += read_pi(fmt, path)
        seconds[0] += middle - start
        seconds[1] += time.perf_counter() - middle
        rss.append(proc.memory_info().rss)
    return seconds, counts, rss


def report(size: int, seconds: list[float], counts: list[int], rss: list[int]) -> None:
    raw_rate, pi_rate = size / seconds[0] / MB, size / seconds[1] / MB
    print(f"{'pass':<24}{'MB':>8}{'seconds':>9}{'MB/s':>8}  items")
    for name, secs, rate, items in (
        ("orjson.loads per line", seconds[0], raw_rate, f"{counts[0]} records"),
        ("PiFormat.parse", seconds[1], pi_rate, f"{counts[1]} events"),
    ):
        print(f"{name:<24}{size / MB:>8.1f}{secs:>9.2f}{rate:>8.1f}  {items}")
    print(f"ratio pi / raw: {pi_rate / raw_rate:.2f} (target >= 0.5)")
    steps = [rss[min(len(rss) - 1, i * len(rss) // 10)] / MB for i in range(11)]
    print("RSS (MB) after 0%, 10%, ... 100% of the files: " + " ".join(f"{v:.0f}" for v in steps))
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"peak RSS of the process (ru_maxrss): {peak_kb / 1024:.0f} MiB")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--copies", type=int, default=100)
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    args = parser.parse_args()
    missing = [n for n in SOURCES if not (args.corpus / n).is_file()]
    if missing:
        sys.exit(f"missing corpus files in {args.corpus}: {', '.join(missing)}")
    tmp = Path(tempfile.mkdtemp(prefix="trajforge-ingest-"))
    try:
        files = make_dump(args.corpus, args.copies, tmp)
        size = sum(p.stat().st_size for p in files)
        for path in files:  # warm the page cache for both passes
            path.read_bytes()
        print(f"{len(files)} files, {size / MB:.1f} MB in {tmp}")
        report(size, *run(files))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
