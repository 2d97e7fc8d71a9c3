"""Reading sessions back from the Hub's parquet, beside reading the same sessions' raw files.

    python benchmarks/hub_parquet.py [--copies N] [--json]

The pi-mono sessions in ``../shared/corpus/pi-mono`` (3.3 MB, 2 sessions) are copied ``N`` times
(default 20: ~66 MB, 40 sessions) and converted as the Hub converts a dataset — ``datasets``'
json builder, a row per line (``parse_agent_traces=False``), then ``to_parquet``; the
conversion is not timed. Timed, each three times (median):

- anchor: parsing the raw files with the pi reader (what a local dump costs);
- read-back: :func:`~trajforge.reconstruct.hub_parquet.sessions_from_parquet` writing the session
  files, then parsing them with the same reader.

Also printed: the peak RSS of a fresh process running the read-back alone, beside what its
imports take (it hands on 256 rows at a time; pyarrow still decodes a row group whole, so
the peak follows the row-group size more than the dump's), beside the parquet's size.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from trajforge.reconstruct.formats.pi import PiFormat
from trajforge.reconstruct.hub_parquet import sessions_from_parquet

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "pi-mono"


def _parse(files: list[Path]) -> int:
    fmt = PiFormat()
    return sum(1 for f in files for item in fmt.parse(f) if not hasattr(item, "message"))


def _median(work: object, runs: int = 3) -> float:
    times = []
    for _ in range(runs):
        began = time.perf_counter()
        work()  # type: ignore[operator]
        times.append(time.perf_counter() - began)
    return statistics.median(times)


_ALONE = """
import sys
from pathlib import Path
from trajforge.reconstruct.hub_parquet import sessions_from_parquet


def peak():  # VmHWM: this process's own high-water mark (ru_maxrss survives exec on Linux)
    status = Path("/proc/self/status").read_text().splitlines()
    return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))


before = peak()
sessions_from_parquet([Path(sys.argv[1])], Path(sys.argv[2]))
print(before, peak())
"""


def _read_back_rss_kb(parquet: Path, out: Path) -> tuple[int, int]:
    """Peak RSS (KiB) of a fresh process after its imports and after
    :func:`sessions_from_parquet` alone."""
    done = subprocess.run(
        [sys.executable, "-c", _ALONE, str(parquet), str(out)],
        capture_output=True,
        text=True,
        check=True,
    )
    before, after = (int(v) for v in done.stdout.split())
    return before, after


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--copies", type=int, default=20)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if not CORPUS.is_dir():
        print(f"no corpus at {CORPUS}", file=sys.stderr)
        return 2
    import datasets

    datasets.disable_progress_bars()

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        raw = []
        for n in range(args.copies):
            for source in sorted(CORPUS.glob("*.jsonl")):
                target = root / "raw" / f"{n:03d}-{source.name}"
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source, target)
                raw.append(target)
        table = datasets.load_dataset(
            "json",
            data_files=[str(f) for f in raw],
            split="train",
            cache_dir=str(root / "cache"),
            parse_agent_traces=False,
        )
        parquet = root / "0000.parquet"
        table.to_parquet(str(parquet))
        anchor = _median(lambda: _parse(raw))

        def read_back() -> None:
            out = root / "back"
            shutil.rmtree(out, ignore_errors=True)
            written = sessions_from_parquet([parquet], out)
            _parse([Path(f.path) for f in written.files])

        back = _median(read_back)
        imported, peak = _read_back_rss_kb(parquet, root / "alone")
        result = {
            "sessions": len(raw),
            "raw_mb": round(sum(f.stat().st_size for f in raw) / 2**20, 1),
            "parquet_mb": round(parquet.stat().st_size / 2**20, 1),
            "anchor_parse_raw_s": round(anchor, 2),
            "read_back_and_parse_s": round(back, 2),
            "read_back_process_peak_rss_mb": round(peak / 1024, 1),
            "of_which_imports_mb": round(imported / 1024, 1),
        }
    if args.json:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            print(f"{key:32} {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
