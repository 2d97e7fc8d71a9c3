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
``PiFormat.parse`` (JSON, sha256 content hash, conversation path, normalised Events). A third
pass, the records floor, loads every line, hashes the file and builds one bare Event (and its
SourcePos) per record the way the reader does (the hash on a thread while the lines are read,
Events from one template), with none of the reader's logic: the least a reader that must make
these records and this hash pays. Resident memory is sampled after every file.

``--stages`` times the reader's own steps on each source file instead (median of 30), beside
that file's raw pass: where the time over the floor goes.
"""

from __future__ import annotations

import argparse
import gc
import os
import resource
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import orjson
import psutil

from trajforge.reconstruct.formats import pi
from trajforge.reconstruct.formats.pi import PiFormat
from trajforge.reconstruct.formats.pi_records import EVENT_FIELDS, event, given, source_pos
from trajforge.reconstruct.inputs import gc_paused, sha256_soon
from trajforge.records import Event, Session

CORPUS = Path("/work/shared/corpus/pi-mono")
TARGET = 0.6
"""Issue 22: the pi reader at >= 0.6 of the raw rate."""
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


def read_floor(path: Path) -> int:
    """Load, hash (as the reader does: on a thread while it parses), and one bare Event per
    record built as the reader builds them: no reader logic."""
    events: list[Event] = []
    source, bare = str(path), given()
    with gc_paused():
        data = path.read_bytes()
        digest = sha256_soon(data)
        for number, line in enumerate(data.split(b"\n"), 1):
            if line and not line.isspace():
                orjson.loads(line)
                fields = EVENT_FIELDS.copy()
                fields["kind"], fields["arguments"] = "user", {}
                fields["source"] = source_pos(source, number)
                events.append(event(fields, bare))
        digest()
    return len(events)


def read_pi(fmt: PiFormat, path: Path) -> int:
    events = 0
    for item in fmt.parse(path):
        if not isinstance(item, Session) or item.warnings:
            raise SystemExit(f"{path}: unexpected warning {item}")
        events += len(item.events)
    return events


def run(files: list[Path]) -> tuple[list[float], list[int], list[int]]:
    """Raw, floor and pi passes interleaved file by file, so load from other processes hits
    them alike."""
    fmt, proc = PiFormat(), psutil.Process()
    passes = (read_raw, read_floor, lambda path: read_pi(fmt, path))
    seconds, counts, rss = [0.0] * len(passes), [0] * len(passes), [proc.memory_info().rss]
    for path in files:
        for i, read in enumerate(passes):
            start = time.perf_counter()
            counts[i] += read(path)
            seconds[i] += time.perf_counter() - start
        rss.append(proc.memory_info().rss)
    return seconds, counts, rss


def report(size: int, seconds: list[float], counts: list[int], rss: list[int]) -> None:
    raw_rate, floor_rate, pi_rate = (size / secs / MB for secs in seconds)
    print(f"{'pass':<32}{'MB':>8}{'seconds':>9}{'MB/s':>8}  items")
    for name, secs, rate, items in (
        ("orjson.loads per line", seconds[0], raw_rate, f"{counts[0]} records"),
        ("floor: + sha256 + bare Events", seconds[1], floor_rate, f"{counts[1]} events"),
        ("PiFormat.parse", seconds[2], pi_rate, f"{counts[2]} events"),
    ):
        print(f"{name:<32}{size / MB:>8.1f}{secs:>9.2f}{rate:>8.1f}  {items}")
    print(f"ratio pi / raw: {pi_rate / raw_rate:.2f} (target >= {TARGET}); ", end="")
    print(f"floor / raw: {floor_rate / raw_rate:.2f}; pi / floor: {pi_rate / floor_rate:.2f}")
    steps = [rss[min(len(rss) - 1, i * len(rss) // 10)] / MB for i in range(11)]
    print("RSS (MB) after 0%, 10%, ... 100% of the files: " + " ".join(f"{v:.0f}" for v in steps))
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"peak RSS of the process (ru_maxrss): {peak_kb / 1024:.0f} MiB")
    load = " ".join(f"{v:.2f}" for v in os.getloadavg())
    print(f"load average after the run (1, 5, 15 min; {os.cpu_count()} cores): {load}")


def stage_times(path: Path) -> dict[str, float]:
    """Seconds of each step of ``PiFormat.parse`` on one file, as the reader runs them (the
    one-pass reading of a file that is one chain), and of its JSON alone, apart."""
    source, blank = str(path), "0" * 64
    marks = [time.perf_counter()]
    with gc_paused():
        data = path.read_bytes()
        digest = sha256_soon(data)
        marks.append(time.perf_counter())
        sessions = pi._read_chain(data, source, lambda: blank)
        marks.append(time.perf_counter())
        digest()
        marks.append(time.perf_counter())
        del data
    gc.collect(0)  # what the collector's next young pass pays for the records that live on
    marks.append(time.perf_counter())
    if sessions is None:
        raise SystemExit(f"{path}: not read in one pass")
    del sessions
    marks.append(time.perf_counter())
    data = path.read_bytes()
    alone = time.perf_counter()
    for _ in pi._split_lines(data):
        pass
    marks.append(marks[-1] + time.perf_counter() - alone)
    names = ("read + hand the hash to its thread", "JSON + Events + Session (1 pass)")
    names += ("wait for the hash", "gc young pass", "free the Sessions")
    names += ("(apart) JSON alone, orjson per line",)
    return {n: b - a for n, a, b in zip(names, marks[:-1], marks[1:], strict=True)}


def report_stages(corpus: Path, repeats: int = 30) -> None:
    for name in SOURCES:
        path = corpus / name
        raw = sorted(_timed(read_raw, path) for _ in range(repeats))[repeats // 2]
        runs = [stage_times(path) for _ in range(repeats)]
        print(f"{name} ({path.stat().st_size / MB:.2f} MB): raw pass {raw * 1e3:.2f} ms")
        total = 0.0
        for stage in runs[0]:
            median = sorted(r[stage] for r in runs)[repeats // 2]
            total += 0.0 if stage.startswith("(apart)") else median
            print(f"  {stage:<36}{median * 1e3:>7.2f} ms  {median / raw:>5.2f} x raw")
        print(f"  {'sum':<36}{total * 1e3:>7.2f} ms  ratio raw / sum {raw / total:.2f}")


def _timed(read: Callable[[Path], int], path: Path) -> float:
    start = time.perf_counter()
    read(path)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--copies", type=int, default=100)
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--stages", action="store_true", help="time the reader's steps")
    args = parser.parse_args()
    missing = [n for n in SOURCES if not (args.corpus / n).is_file()]
    if missing:
        sys.exit(f"missing corpus files in {args.corpus}: {', '.join(missing)}")
    if args.stages:
        report_stages(args.corpus)
        return
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
