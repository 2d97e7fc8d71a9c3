"""``trajforge export harbor``: accepted tasks as Harbor task directories.

Each task becomes ``DIR/<task_id>/`` in the Harbor layout::

    instruction.md            what the agent is asked to do
    task.toml                 metadata and timeouts (version, [metadata], [verifier], [agent],
                              [environment])
    environment/Dockerfile    python image, WORKDIR /app, the starting workspace copied in
    environment/workspace/    the starting files
    solution/solve.sh         lays the oracle files over /app (qa: writes /app/answer.txt)
    tests/test.sh             copies the hidden tests in, runs the verifier, writes
                              /logs/verifier/reward.txt (1 pass, 0 fail)

The scripts honour ``TRAJFORGE_APP`` and ``TRAJFORGE_LOGS`` (defaults ``/app`` and
``/logs/verifier``) so they also run outside a Harbor container, e.g. in trajforge's sandbox.
"""

from __future__ import annotations

import base64
import json
import shlex
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from trajforge.splits.tasks import LoadedTask, PackedFile

BASE_IMAGE = "python:3.12-slim"
ANSWER_FILE = "answer.txt"

SOLVE = """#!/usr/bin/env bash
# Oracle solution exported by trajforge: lay the oracle files over the workspace.
set -euo pipefail
APP="${TRAJFORGE_APP:-/app}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$APP"
"""

TEST = """#!/usr/bin/env bash
# Verifier exported by trajforge: writes 1 (pass) or 0 (fail) to reward.txt.
set -uo pipefail
APP="${TRAJFORGE_APP:-/app}"
LOGS="${TRAJFORGE_LOGS:-/logs/verifier}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
mkdir -p "$LOGS"
cd "$APP"
if [ -d "$HERE/hidden" ]; then cp -R "$HERE/hidden/." "$APP/"; fi
"""

CHECK_ANSWER = '''"""Compare the agent's answer (argv[1]) with the expected one (argv[2])."""
import re
import sys


def numbers(text):
    return [float(n) for n in re.findall(r"-?\\d+(?:\\.\\d+)?", text.replace(",", ""))]


def norm(text):
    return " ".join(text.lower().split()).strip(" .")


given, expected = (open(p, encoding="utf-8").read() for p in sys.argv[1:3])
want = numbers(expected)
if want:
    have = numbers(given)
    ok = all(any(abs(w - h) <= 1e-6 * max(1.0, abs(w)) for h in have) for w in want)
else:
    ok = norm(expected) in norm(given)
sys.exit(0 if ok else 1)
'''


@dataclass(frozen=True)
class ExportOutcome:
    """What happened to one task."""

    task_id: str
    """Task id."""
    status: str
    """accepted (exported) or rejected (not exportable)."""
    reason: str = ""
    """Why it was not exported."""


def verifier_command(item: LoadedTask) -> str | None:
    """Shell command the exported test.sh runs, or None when the task has no runnable check."""
    verifier = item.task.verifier
    if verifier.command:
        return verifier.command
    if verifier.tests:
        return "python3 -m pytest -q -p no:cacheprovider " + shlex.join(verifier.tests)
    return None


def _write_files(root: Path, files: tuple[PackedFile, ...]) -> None:
    for f in files:
        target = root / f.path
        if not target.resolve().is_relative_to(root.resolve()):
            raise ValueError(f"refusing to write {f.path!r} outside {root}")
        target.parent.mkdir(parents=True, exist_ok=True)
        data = base64.b64decode(f.content) if f.encoding == "base64" else f.content.encode()
        target.write_bytes(data)


def _toml(item: LoadedTask) -> str:
    task = item.task
    tags = json.dumps(["trajforge", task.family, task.source.harness])
    return (
        'version = "1.0"\n\n[metadata]\nauthor_name = "trajforge"\n'
        f'difficulty = "unknown"\ncategory = {json.dumps(task.family)}\ntags = {tags}\n'
        f"trajforge_task_id = {json.dumps(task.id)}\n"
        f"source_harness = {json.dumps(task.source.harness)}\n"
        f"source_session = {json.dumps(task.source.session)}\n\n"
        "[verifier]\ntimeout_sec = 300.0\n\n[agent]\ntimeout_sec = 1800.0\n\n"
        "[environment]\nbuild_timeout_sec = 600.0\ncpus = 1\nmemory_mb = 2048\nstorage_mb = 4096\n"
    )


def _dockerfile(item: LoadedTask, command: str) -> str:
    lines = [f"FROM {BASE_IMAGE}", "WORKDIR /app"]
    if "pytest" in command:
        lines.append("RUN pip install --no-cache-dir pytest")
    if item.folders.get("workspace"):
        lines.append("COPY workspace/ /app/")
    return "\n".join(lines) + "\n"


def _solve(item: LoadedTask) -> str:
    if item.task.family == "qa":
        return SOLVE + f'cp "$HERE/{ANSWER_FILE}" "$APP/{ANSWER_FILE}"\n'
    start = {f.path for f in item.folders.get("workspace", ())}
    end = {f.path for f in item.folders.get("oracle", ())}
    script = SOLVE
    for gone in sorted(start - end):
        script += f"rm -f -- {shlex.quote(gone)}\n"
    return script + 'if [ -d "$HERE/oracle" ]; then cp -R "$HERE/oracle/." "$APP/"; fi\n'


def _test(item: LoadedTask, command: str) -> str:
    if item.task.family == "qa":
        check = f'python3 "$HERE/check_answer.py" "$APP/{ANSWER_FILE}" "$HERE/expected_answer.txt"'
    else:
        check = command
    return (
        TEST
        + f"( {check} )\n"
        + "if [ $? -eq 0 ]; then REWARD=1; else REWARD=0; fi\n"
        + 'echo "$REWARD" > "$LOGS/reward.txt"\n'
    )


def export_task(item: LoadedTask, dest: Path) -> None:
    """Write one Harbor task directory at ``dest`` (must not exist)."""
    task = item.task
    command = verifier_command(item) or ""
    dest.mkdir(parents=True)
    instruction = task.instruction.rstrip() + "\n"
    if task.family == "qa":
        instruction += f"\nWrite your final answer to /app/{ANSWER_FILE}.\n"
    (dest / "instruction.md").write_text(instruction)
    (dest / "task.toml").write_text(_toml(item))
    env = dest / "environment"
    env.mkdir()
    (env / "Dockerfile").write_text(_dockerfile(item, command))
    _write_files(env / "workspace", item.folders.get("workspace", ()))
    solution, tests = dest / "solution", dest / "tests"
    solution.mkdir()
    tests.mkdir()
    if task.family == "qa":
        (solution / ANSWER_FILE).write_text((task.answer or "") + "\n")
        (tests / "expected_answer.txt").write_text((task.answer or "") + "\n")
        (tests / "check_answer.py").write_text(CHECK_ANSWER)
    else:
        _write_files(solution / "oracle", item.folders.get("oracle", ()))
    _write_files(tests / "hidden", item.folders.get("tests", ()))
    for script, text in (
        (solution / "solve.sh", _solve(item)),
        (tests / "test.sh", _test(item, command)),
    ):
        script.write_text(text)
        script.chmod(0o755)


def export(items: Sequence[LoadedTask], target: Path) -> Iterator[ExportOutcome]:
    """Export accepted tasks into ``target``; one outcome per task."""
    target.mkdir(parents=True, exist_ok=True)
    for item in items:
        yield _export_one(item, target)


def _export_one(item: LoadedTask, target: Path) -> ExportOutcome:
    task_id = item.task.id
    if item.task.family != "qa" and verifier_command(item) is None:
        return ExportOutcome(task_id, "rejected", "no verifier command or hidden tests to run")
    if item.task.family == "qa" and not item.task.answer:
        return ExportOutcome(task_id, "rejected", "qa task without an expected answer")
    staging = Path(tempfile.mkdtemp(prefix=f".{task_id}.", dir=target))
    try:
        export_task(item, staging / "task")
        final = target / task_id
        if final.exists():
            shutil.rmtree(final)
        (staging / "task").rename(final)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return ExportOutcome(task_id, "accepted")
