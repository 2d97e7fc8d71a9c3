"""``trajforge export harbor``: accepted tasks as Harbor task directories (task schema 1.3).

Each task becomes ``DIR/<task_id>/``::

    instruction.md            the task, plus what is graded (the files in /app; for qa and
                              data tasks the answer written to /app/answer.txt)
    task.toml                 [task], [metadata], [verifier] (environment_mode = "separate"),
                              [agent] (user "agent"), [environment]; artifacts = ["/app"]
    environment/Dockerfile    the agent's image: pinned python, pinned pytest / polars, a
                              non-root user ``agent`` owning /app, the starting workspace
    solution/solve.sh         the oracle: lays the oracle's files over /app, removing only
                              the files the session removed; qa: the answer; data: runs the
                              stored polars query and writes its answer
    tests/Dockerfile          the verifier's image (separate mode builds it from tests/ and
                              copies tests/ to /tests): pinned python and what test.sh needs
    tests/test.sh             build / extend / repair: hidden tests and the check's own files
                              (tests/hidden/: the oracle's tests, runner configuration and
                              start-up files) over /app, the environment's compile steps,
                              the task's check, reward 1 if it passes; qa / data: the answer
                              checker of ``trajforge verify`` (vendored in tests/checker/) on
                              /app/answer.txt against tests/expected_answer.txt; reward in
                              /logs/verifier/reward.txt

The scripts honour ``TRAJFORGE_APP`` and ``TRAJFORGE_LOGS`` (defaults ``/app`` and
``/logs/verifier``) so they also run outside a container, in trajforge's local sandbox.
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
from string import Template

from trajforge.records import ANSWER_FAMILIES, Status
from trajforge.splits.harbor_env import (
    checker_files,
    checker_requirements,
    pins,
)
from trajforge.splits.tasks import LoadedTask, PackedFile
from trajforge.verifiers.environments.dockerfile import dockerfile_lines
from trajforge.verifiers.validate.qa import expected_answer
from trajforge.verifiers.validate.runner_files import (
    CONFIG_NAMES,
    CONFIG_STEMS,
    STARTUP_NAMES,
    is_fixture,
    runner_kind,
)

SCHEMA_VERSION = "1.3"
BASE_IMAGE = "python:3.12.8-slim"
"""Pinned by tag; Harbor's lint would also like a digest, which cannot be looked up offline."""
AGENT_USER = "agent"
ANSWER_FILE = "answer.txt"
TEMPLATES = Path(__file__).with_name("templates")
QUERY = ".trajforge-oracle-query.py"

SOLVE_HEAD = """#!/usr/bin/env bash
# Oracle solution exported by trajforge.
set -euo pipefail
APP="${TRAJFORGE_APP:-/app}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$APP"
"""


@dataclass(frozen=True)
class ExportOutcome:
    """What happened to one task."""

    task_id: str
    """Task id."""
    status: Status
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


def removed_files(item: LoadedTask) -> list[str]:
    """Files the session removed: in the starting workspace, not in the oracle. Only build /
    extend / repair oracles are the whole final workspace; a data task's oracle is its query."""
    if item.task.family in ANSWER_FAMILIES:
        return []
    start = {f.path for f in item.folders.get("workspace", ())}
    return sorted(start - {f.path for f in item.folders.get("oracle", ())})


def _write_files(root: Path, files: Sequence[PackedFile]) -> None:
    for f in files:
        target = root / f.path
        if not target.resolve().is_relative_to(root.resolve()):
            raise ValueError(f"refusing to write {f.path!r} outside {root}")
        target.parent.mkdir(parents=True, exist_ok=True)
        data = base64.b64decode(f.content) if f.encoding == "base64" else f.content.encode()
        target.write_bytes(data)


def _toml(item: LoadedTask) -> str:
    task = item.task
    keywords = json.dumps(["trajforge", task.family, task.source.harness])
    description = json.dumps(f"{task.family} task from a {task.source.harness} session")
    return (
        f'schema_version = "{SCHEMA_VERSION}"\nartifacts = ["/app"]\n\n'
        f'[task]\nname = "trajforge/{task.id}"\ndescription = {description}\n'
        f"keywords = {keywords}\n\n"
        f"[metadata]\ncategory = {json.dumps(task.family)}\n"
        f"trajforge_task_id = {json.dumps(task.id)}\n"
        f"source_harness = {json.dumps(task.source.harness)}\n"
        f"source_session = {json.dumps(task.source.session)}\n\n"
        '[verifier]\ntimeout_sec = 300.0\nenvironment_mode = "separate"\n\n'
        "[verifier.environment]\nbuild_timeout_sec = 600.0\ncpus = 1\nmemory_mb = 2048\n\n"
        f'[agent]\ntimeout_sec = 1800.0\nuser = "{AGENT_USER}"\n\n'
        "[environment]\nbuild_timeout_sec = 600.0\ncpus = 1\nmemory_mb = 2048\nstorage_mb = 4096\n"
    )


def _pip(packages: Sequence[str]) -> list[str]:
    found = pins(packages)
    return [f"RUN pip install --no-cache-dir {' '.join(found)}"] if found else []


def _runtime(item: LoadedTask, command: str) -> list[str]:
    """Packages the task's own code and check need at run time."""
    if item.task.family == "data":
        return ["polars"]
    return ["pytest"] if "pytest" in command else []


def _dockerfile(item: LoadedTask, command: str) -> str:
    env = dockerfile_lines(item.task.environment)  # the task's dependencies, as validated
    lines = [f"FROM {BASE_IMAGE}", *env.toolchain, *_pip(_runtime(item, command))]
    lines += [f"RUN useradd --create-home --shell /bin/bash {AGENT_USER}", "WORKDIR /app"]
    if item.folders.get("workspace"):
        lines.append(f"COPY --chown={AGENT_USER}:{AGENT_USER} workspace/ /app/")
    lines += env.install
    lines.append(f"RUN chown {AGENT_USER}:{AGENT_USER} /app")
    return "\n".join(lines) + "\n"


def _verifier_dockerfile(item: LoadedTask, command: str) -> str:
    answered = item.task.family in ANSWER_FAMILIES
    needs = checker_requirements() if answered else _runtime(item, command)
    env = dockerfile_lines(item.task.environment)
    python = [line for line in env.install if line.startswith(("RUN pip ", "ENV PYTHONPATH"))]
    lines = [f"FROM {BASE_IMAGE}", *env.toolchain, *_pip(needs), *python]
    lines += ["COPY . /tests/", "WORKDIR /app"]
    return "\n".join(lines) + "\n"


def _solve(item: LoadedTask) -> str:
    family = item.task.family
    if family == "qa":
        return SOLVE_HEAD + f'cp "$HERE/{ANSWER_FILE}" "$APP/{ANSWER_FILE}"\n'
    if family == "data":
        return SOLVE_HEAD + (
            f'cp "$HERE/oracle/query.py" "$APP/{QUERY}"\n'
            f'python3 "$APP/{QUERY}" > "$APP/{ANSWER_FILE}"\n'
            f'rm -f -- "$APP/{QUERY}"\n'
        )
    script = SOLVE_HEAD
    for gone in removed_files(item):
        script += f"rm -f -- {shlex.quote(gone)}\n"
    return script + 'if [ -d "$HERE/oracle" ]; then cp -R "$HERE/oracle/." "$APP/"; fi\n'


def _test(item: LoadedTask, command: str) -> str:
    if item.task.family in ANSWER_FAMILIES:
        text = (TEMPLATES / "harbor_test_answer.sh").read_text()
        return Template(text).safe_substitute(answer_file=ANSWER_FILE)
    text = (TEMPLATES / "harbor_test_code.sh").read_text()
    return Template(text).safe_substitute(command=command, foreign=_foreign_configs())


def _foreign_configs() -> str:
    """``find`` tests for the runner configuration and start-up files test.sh removes from
    /app before laying the task's own over it (a solution's new ``vitest.config.ts`` with
    ``passWithNoTests`` or ``conftest.py`` hook is not the check's); manifests are kept."""
    manifests = {"package.json", "pyproject.toml", "setup.cfg", "Cargo.toml", "tox.ini"}
    names = sorted((CONFIG_NAMES - manifests) | STARTUP_NAMES) + [f"{s}*" for s in CONFIG_STEMS]
    return " -o ".join(f"-name {shlex.quote(n)}" for n in names)


def _check_files(item: LoadedTask, command: str) -> list[PackedFile]:
    """The oracle's files that are the check's own — its tests, start-up files and runner
    configuration (``vitest.config.ts``, ``package.json``, ``conftest.py``, the scripts the
    command names), and the documentation, configuration and data the reference left as the
    start had it (a theme's JSON): test.sh lays them over /app with the hidden tests, as
    ``verify`` takes them from the task, so a solution cannot decide its own reward through
    them."""
    start = {f.path: f.content for f in item.folders.get("workspace", ())}
    return [
        f
        for f in item.folders.get("oracle", ())
        if (kind := runner_kind(f.path, command)) != "source"
        or is_fixture(f.path, kind, start.get(f.path), f.content)
    ]


def _after_builds(item: LoadedTask, command: str) -> str:
    """The check after the environment's compile steps (workspace members other members import
    built), each from the app folder, as validation runs them; a failed build fails the check."""
    env = item.task.environment
    steps = [step for recipe in (env.recipes if env else ()) for step in recipe.builds]
    if not steps or not command:
        return command
    return " && ".join([*(f'(cd "$APP" && {step})' for step in steps), f"({command})"])


def _instruction(item: LoadedTask, command: str) -> str:
    text = item.task.instruction.rstrip() + "\n\n"
    if item.task.family in ANSWER_FAMILIES:
        return text + (
            f"Write your final answer, and only the answer, to /app/{ANSWER_FILE}: that file is "
            "what is graded.\n"
        )
    return text + (
        f"Work in /app. When you finish, the files in /app are graded: hidden tests are added "
        f"and `{command}` must pass there.\n"
    )


def export_task(item: LoadedTask, dest: Path) -> None:
    """Write one Harbor task directory at ``dest`` (must not exist)."""
    task = item.task
    command = verifier_command(item) or ""
    dest.mkdir(parents=True)
    (dest / "instruction.md").write_text(_instruction(item, command))
    (dest / "task.toml").write_text(_toml(item))
    env, solution, tests = dest / "environment", dest / "solution", dest / "tests"
    for folder in (env, solution, tests):
        folder.mkdir()
    (env / "Dockerfile").write_text(_dockerfile(item, command))
    (tests / "Dockerfile").write_text(_verifier_dockerfile(item, command))
    _write_files(env / "workspace", item.folders.get("workspace", ()))
    if task.family == "qa":
        solved = task.answer if task.answer_key is not None else expected_answer(task)
        (solution / ANSWER_FILE).write_text((solved or "") + "\n")
    if task.family in ANSWER_FAMILIES and task.answer_key is not None:
        (tests / "expected_key.json").write_text(task.answer_key.model_dump_json(indent=2) + "\n")
    elif task.family in ANSWER_FAMILIES:
        (tests / "expected_answer.txt").write_text(expected_answer(task) + "\n")
    if task.family in ANSWER_FAMILIES:
        (tests / "grade_answer.py").write_text((TEMPLATES / "harbor_grade_answer.py").read_text())
        for rel, text in checker_files().items():
            (tests / "checker" / rel).parent.mkdir(parents=True, exist_ok=True)
            (tests / "checker" / rel).write_text(text)
    if task.family != "qa":
        _write_files(solution / "oracle", item.folders.get("oracle", ()))
    if task.family not in ANSWER_FAMILIES:
        _write_files(
            tests / "hidden", [*_check_files(item, command), *item.folders.get("tests", ())]
        )
    for script, text in (
        (solution / "solve.sh", _solve(item)),
        (tests / "test.sh", _test(item, _after_builds(item, command))),
    ):
        script.write_text(text)
        script.chmod(0o755)


def export(items: Sequence[LoadedTask], target: Path) -> Iterator[ExportOutcome]:
    """Export accepted tasks into ``target``; one outcome per task."""
    target.mkdir(parents=True, exist_ok=True)
    for item in items:
        yield _export_one(item, target)


def _export_one(item: LoadedTask, target: Path) -> ExportOutcome:
    task = item.task
    if task.family not in ANSWER_FAMILIES and verifier_command(item) is None:
        return ExportOutcome(task.id, Status.REJECTED, "no verifier command or hidden tests to run")
    if task.family in ANSWER_FAMILIES and not expected_answer(task):
        return ExportOutcome(
            task.id, Status.REJECTED, f"{task.family} task without an expected answer"
        )
    if task.family == "data" and not any(
        f.path == "query.py" for f in item.folders.get("oracle", ())
    ):
        return ExportOutcome(task.id, Status.REJECTED, "data task without its oracle query.py")
    staging = Path(tempfile.mkdtemp(prefix=f".{task.id}.", dir=target))
    try:
        export_task(item, staging / "task")
        final = target / task.id
        if final.exists():
            shutil.rmtree(final)
        (staging / "task").rename(final)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return ExportOutcome(task.id, Status.ACCEPTED)
