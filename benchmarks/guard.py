"""Guard: decision latency, recall on the attack suite (with obfuscated forms), clean-corpus rates.

    python benchmarks/guard.py [--corpus DIR ...] [--rounds 3]

Latency is measured per call over the real clean corpora (default: ../shared/corpus/pi-mono and
../shared/corpus/real), as wall time and as CPU time of the deciding thread (wall time on a
shared machine includes preemption). The anchor is a bare tree-sitter-bash parse of the same
shell commands: the least a parsing guard must pay. Clean-corpus rates are per corpus, with the
blocks the bundle's calibration file accepts. Targets: p99 decision ≤ 1 ms; ≤ 0.5 % of clean
calls blocked.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from pathlib import Path
from typing import Any

from trajforge.guard.audit import audit
from trajforge.guard.calibration import calibration_for
from trajforge.guard.engine import RuleDetector, bundle_at
from trajforge.guard.examples import run_cases
from trajforge.guard.profile import Profile
from trajforge.guard.shell import parser
from trajforge.reconstruct.inputs import expand_paths
from trajforge.reconstruct.pipeline import all_formats, detect
from trajforge.records import Event, Session

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
DEFAULT_CORPORA = [CORPUS / "pi-mono", CORPUS / "real"]


def corpus_calls(roots: list[Path]) -> list[tuple[Session, Event]]:
    calls: list[tuple[Session, Event]] = []
    inputs, _ = expand_paths(roots)
    for path in inputs:
        for item in detect(path, all_formats()).parse(path):
            if isinstance(item, Session):
                calls += [(item, e) for e in item.events if e.kind == "tool_call" and e.tool]
    return calls


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1e3


def latency(calls: list[tuple[Session, Event]], rounds: int) -> dict[str, float]:
    wall: list[float] = []
    cpu: list[float] = []
    anchor: list[float] = []
    for _ in range(rounds):
        detectors: dict[str, RuleDetector] = {}
        for session, event in calls:
            cwd = session.header.cwd or "/workspace"
            det = detectors.setdefault(
                session.header.session_id, RuleDetector(Profile(workspace=cwd))
            )
            w0, c0 = time.perf_counter(), time.thread_time()
            det.check(event.tool or "", event.arguments, session.header.harness)
            c1, w1 = time.thread_time(), time.perf_counter()
            wall.append(w1 - w0)
            cpu.append(c1 - c0)
            if event.command:
                a0 = time.perf_counter()
                parser().parse(event.command.encode())
                anchor.append(time.perf_counter() - a0)
    return {
        "wall_p50_ms": pct(wall, 0.5),
        "wall_p99_ms": pct(wall, 0.99),
        "wall_max_ms": max(wall) * 1e3,
        "cpu_p50_ms": pct(cpu, 0.5),
        "cpu_p99_ms": pct(cpu, 0.99),
        "anchor_parse_p50_ms": pct(anchor, 0.5),
        "anchor_parse_p99_ms": pct(anchor, 0.99),
    }


def recall() -> dict[str, Any]:
    outcomes = run_cases(bundle_at())
    attacks = [o for o in outcomes if o.case.kind == "attack"]
    near = [o for o in outcomes if o.case.kind == "near_miss"]
    by_form: Counter[str] = Counter()
    caught: Counter[str] = Counter()
    for o in attacks:
        by_form[o.case.form] += 1
        caught[o.case.form] += o.ok
    return {
        "attacks": len(attacks),
        "caught": sum(o.ok for o in attacks),
        "near_misses": len(near),
        "near_misses_passed": sum(o.ok for o in near),
        "per_form": {f: f"{caught[f]}/{n}" for f, n in sorted(by_form.items())},
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--corpus", type=Path, action="append", help="repeatable; default: both")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    corpora = args.corpus or DEFAULT_CORPORA
    bundle = bundle_at()
    print(f"bundle {bundle.version}, {len(bundle.rules)} rules")
    calls = corpus_calls(corpora)
    lat = latency(calls, args.rounds)
    print(f"latency over {len(calls)} corpus calls x {args.rounds} rounds (target p99 <= 1 ms):")
    for key, value in lat.items():
        print(f"  {key:22s} {value:8.3f}")
    rec = recall()
    print(f"recall: {rec['caught']}/{rec['attacks']} attacks (plain + obfuscated) caught; "
          f"near misses passed {rec['near_misses_passed']}/{rec['near_misses']}")  # fmt: skip
    for form, score in rec["per_form"].items():
        print(f"  {form:20s} {score}")
    calibration = calibration_for(None)
    for corpus in corpora:
        report = audit([corpus], bundle, calibration=calibration)
        total = report.calls or 1
        blocks, flags = report.count("blocks"), report.count("flags")
        accepted = sum(r.accepted for r in report.rules.values())
        print(
            f"clean corpus {corpus.name}: {report.calls} calls, blocked {blocks} "
            f"({100 * blocks / total:.2f} %, target <= 0.5 %; {accepted} accepted in the "
            f"calibration file), flagged {flags} ({100 * flags / total:.2f} %)"
        )
        for rule, entry in report.rules.items():
            if entry.blocks or entry.flags:
                print(f"  {rule:32s} blocks {entry.blocks:4d}  flags {entry.flags:4d}")


if __name__ == "__main__":
    main()
