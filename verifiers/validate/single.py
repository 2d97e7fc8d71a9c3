"""Judge one task: every family through :data:`JUDGES`, one judge per family.

Code families (build / extend / repair): the context's teacher writes the hidden tests and
:func:`prove_code` — the control matrix — proves them; qa: the answer checker against the
answer key's (or the value's) controls; data: the stored queries re-run in the sandbox. Each
returns a :class:`~trajforge.records.Validation` with a :class:`~trajforge.records.Status` and
precise reasons; the stage (:mod:`.run`) adds the evidence every task carries (:func:`finish`).
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from trajforge import __version__
from trajforge.reconstruct.changed_files import is_test_file
from trajforge.records import (
    CODE_FAMILIES,
    Evidence,
    Family,
    Finding,
    Outcome,
    QaEvidence,
    Reason,
    Status,
    Task,
    Validation,
    finding,
)
from trajforge.taskdir import HIDDEN_DIR
from trajforge.verifiers.answer_facts import CHECKER_VERSION
from trajforge.verifiers.dataenv_validate import prove_data, prove_data_many
from trajforge.verifiers.environments import EnvironmentProblem, for_task, repo_reason
from trajforge.verifiers.teacher.mined import is_derived, weakening
from trajforge.verifiers.validate import qa
from trajforge.verifiers.validate.context import Context
from trajforge.verifiers.validate.derive import Strengthened
from trajforge.verifiers.validate.evidence import matrix_controls
from trajforge.verifiers.validate.files import cache_key, content_hash, read_tree
from trajforge.verifiers.validate.history import Episode, load_episode
from trajforge.verifiers.validate.inputs import static_inputs
from trajforge.verifiers.validate.instruction import REWRITE_VERSION
from trajforge.verifiers.validate.matrix import TaskFiles, run_matrix
from trajforge.verifiers.validate.qa_key import judge_keyed
from trajforge.verifiers.validate.unstated import unstated_interface

JUDGE_VERSION = 8
"""Bumped when the judging rules change (2: coding tasks with unrecovered files are rejected
as workspace_incomplete before any run; keyed qa; 3: typed evidence, every family through
:data:`JUDGES`, the teacher's name in every key; 4: keyed qa must fail a guess; 5: a shell
replay's oracle holds what the commands did, not an environment's built files; 6: hidden tests
faking the outside world with unstated names are rejected, a change that is only text gets
its literals emptied as mutants; 7: a module specifier is no string to empty; 8: a failure a
report gives no message keeps the runner's words; an own file that cannot load where files were
not recovered is workspace_incomplete): part of every validation cache key."""

Judge = Callable[[Path, Task, Context], tuple[Task, Validation]]
"""A family's judge: the task as validation leaves it (hidden tests, verifier) and its verdict."""


def folders(task: Task) -> list[str]:
    """Folders of the task whose files the evidence is tied to."""
    names = [task.workspace, HIDDEN_DIR, *task.probes]
    return names + ([task.oracle] if task.oracle else [])


def install_derived(task_dir: Path, done: Strengthened | None) -> str | None:
    """Write the derived test file into ``tests/`` (removing a stale one); its path or None."""
    target = task_dir / HIDDEN_DIR
    keep = done.derived.path if done is not None and done.content is not None else None
    for stale in [p for p in read_tree(target) if is_derived(p) and p != keep]:
        (target / stale).unlink()
    if keep is not None and done is not None and done.content is not None:
        (target / keep).parent.mkdir(parents=True, exist_ok=True)
        (target / keep).write_text(done.content, encoding="utf-8")
    return keep


def sync_tests(task_dir: Path, task: Task) -> Task:
    """The verifier's test list as ``tests/`` holds it after validation (derived tests in)."""
    if task.family not in CODE_FAMILIES or task.verifier.kind not in (
        "tests",
        "command",
    ):
        return task
    names = tuple(sorted(read_tree(task_dir / HIDDEN_DIR)))
    if names == task.verifier.tests:
        return task
    kind = "tests" if names else "command"
    verifier = task.verifier.model_copy(update={"kind": kind, "tests": names})
    return task.model_copy(update={"verifier": verifier})


def key_of(task_dir: Path, task: Task, ctx: Context) -> tuple[str, str]:
    """(cache key, files hash) of the task as it is on disk now."""
    files_hash = content_hash(task_dir, task, folders(task))
    settings = ctx.config.model_dump(mode="json")
    settings["instruction_rewrite"] = REWRITE_VERSION
    settings["answer_checker"] = CHECKER_VERSION
    settings["judge"] = JUDGE_VERSION
    settings["teacher"] = ctx.teacher.name
    return cache_key(files_hash, settings, ctx.backend), files_hash


def weakened_tests(files: TaskFiles, episode: Episode | None) -> list[str]:
    """Reasons why test files the agent wrote or changed cannot be trusted as a verifier."""
    changed = [
        p
        for p, text in files.oracle.items()
        if (p in files.hidden or is_test_file(p)) and files.workspace.get(p) != text
    ]
    found: list[str] = []
    for path in changed:
        earlier = [files.workspace[path]] if path in files.workspace else []
        if episode is not None:
            earlier += episode.versions(path)[:-1]
        found += weakening(path, files.oracle[path], earlier)
    return found


def _load_files(
    task_dir: Path, task: Task, hidden: dict[str, str], episode: Episode | None
) -> TaskFiles:
    probes = [read_tree(task_dir / p) for p in task.probes]
    oracle = read_tree(task_dir / task.oracle) if task.oracle else {}
    workspace = read_tree(task_dir / task.workspace)
    files = TaskFiles(task, workspace, oracle, hidden, probes)
    changed = {
        p: t
        for p, t in oracle.items()
        if p.endswith(".py") and workspace.get(p) != t and not files.is_test(p)
    }
    commands = episode.shell_commands() if episode is not None else []
    files.inputs = static_inputs(task.request or task.instruction, commands, changed)
    return files


def _rejected(found: Finding, history: str = "") -> Validation:
    return Validation(status=Status.REJECTED, findings=(found,), evidence=Evidence(history=history))


def precheck(task: Task) -> Finding | None:
    """Why the task is rejected before anything runs (no repository, commit not told, files
    missing), or None. The teacher is asked only about tasks that pass it."""
    blocked = repo_reason(task)  # --repos: repository not found / commit not told
    if blocked is not None:
        return blocked
    missing = [p for p in _needed_missing(task) if p not in task.files.shell_modified]
    if task.family != "qa" and missing:  # shell-changed files are re-made by replaying them
        found = task.source.repo is not None and task.source.repo.status == "found"
        fix = (
            "its repository was found: they were changed in ways replay cannot follow (a shell "
            "command with unknown effects, or uncommitted work it never read whole)"
            if found
            else "give the session's repository: trajforge reconstruct --repos DIR"
        )
        return finding(
            Reason.WORKSPACE_INCOMPLETE,
            f"{Reason.WORKSPACE_INCOMPLETE}: {len(missing)} files the session touched could not "
            f"be recovered (e.g. {missing[0]}); its oracle was not run — {fix}",
        )
    return None


def _needed_missing(task: Task) -> list[str]:
    """The missing files a task's check could need: a test file the session changed beyond
    recovery is not, when the check runs only named tests (its own, or the teacher's hidden
    ones) that do not include it; it is left out of the task as the session left it unknown."""
    verifier = task.verifier
    if verifier.kind == "command":  # a suite: which tests it runs is the runner's to say
        return list(task.files.unknown)
    named = set(verifier.tests)
    return [p for p in task.files.missing if not is_test_file(p) or p in named]


def _precheck(task: Task) -> Validation | None:
    """A rejection before anything runs: no verifier, no repository, files missing."""
    blocked = precheck(task)  # first: without its workspace no verifier could run at all
    if blocked is not None:
        return _rejected(blocked)
    if task.verifier.kind == "none":
        text = "no verifier: no passing check was recorded in the episode"
        return _rejected(finding(Reason.NO_VERIFIER, text))
    return None


def _history(episode: Episode | None) -> str:
    return "session history read" if episode else "session file unavailable: static checks"


def prove_code(task_dir: Path, task: Task, hidden: Mapping[str, str], ctx: Context) -> Validation:
    """The control matrix's verdict on a code task with ``hidden`` tests (may raise on
    sandbox failure; the caller records it)."""
    early = _precheck(task)
    if early is not None:
        return early
    episode = load_episode(task, ctx.base_dirs)
    history = _history(episode)
    files = _load_files(task_dir, task, dict(hidden), episode)
    weak = weakened_tests(files, episode)
    if weak:
        text = "weakened test, never used as a verifier: {}"
        weak_found = tuple(finding(Reason.WEAKENED_TEST, text.format(w)) for w in weak)
        return Validation(
            status=Status.REJECTED, findings=weak_found, evidence=Evidence(history=history)
        )
    request = task.request or task.instruction
    unstated = unstated_interface(hidden, files.workspace, files.oracle, request)
    if unstated is not None:  # before anything runs: the teacher hears which names
        return _rejected(unstated, history)
    command = task.verifier.command or ""
    try:  # the task's dependencies and toolchain, built once per hash, mounted read-only
        prepared = for_task(task_dir, task, ctx.sandbox)
    except EnvironmentProblem as exc:
        return _rejected(finding(exc.reason, str(exc)), history)
    with tempfile.TemporaryDirectory(prefix="trajforge-validate-") as scratch:
        result = run_matrix(prepared.sandbox, files, command, ctx.config, Path(scratch))
    validation = matrix_controls(result, files, ctx.config)
    derived = install_derived(task_dir, result.strengthened)
    evidence = validation.evidence.model_copy(
        update={
            "environment": prepared.evidence,
            "history": history,
            "command": command,
            "hidden_tests": tuple(sorted({*hidden, *([derived] if derived else [])})),
        }
    )
    return validation.model_copy(update={"evidence": evidence})


def judge_code(task_dir: Path, task: Task, ctx: Context) -> tuple[Task, Validation]:
    """build / extend / repair: the teacher writes the hidden tests, the matrix proves them."""

    blocked = precheck(task)  # nothing to ask the teacher about a task that cannot stand
    if blocked is not None:
        return task, _rejected(blocked)
    if ctx.teacher.writes_tests:  # nor about one whose environment cannot be had
        try:  # built once per hash: prove reuses it
            for_task(task_dir, task, ctx.sandbox)
        except EnvironmentProblem as exc:
            return task, _rejected(finding(exc.reason, str(exc)))

    def prove(candidate: Task, hidden: Mapping[str, str]) -> Validation:
        return prove_code(task_dir, candidate, hidden, ctx)

    task, validation = ctx.teacher.hidden_tests(task_dir, task, prove)
    return sync_tests(task_dir, task), validation


def judge_qa(task_dir: Path, task: Task, ctx: Context) -> tuple[Task, Validation]:
    """qa: the answer checker against the answer key's (or the value's) controls."""
    early = _precheck(task)
    if early is not None:
        return task, early
    episode = load_episode(task, ctx.base_dirs)
    return task, _judge_qa(task_dir, task, episode, ctx, _history(episode))


def judge_data(task_dir: Path, task: Task, ctx: Context) -> tuple[Task, Validation]:
    """data: the stored polars queries re-run in the sandbox, the checker on their outputs."""
    return task, prove_data(task_dir, task, ctx.sandbox, ctx.config)


def judge_data_batch(items: Sequence[tuple[Path, Task]], ctx: Context) -> list[Validation]:
    """Many data tasks' verdicts from one sandbox run of all their queries (each verdict is
    what :func:`judge_data` gives the task alone)."""
    return prove_data_many(items, ctx.sandbox, ctx.config)


JUDGES: dict[Family, Judge] = {
    "build": judge_code,
    "extend": judge_code,
    "repair": judge_code,
    "qa": judge_qa,
    "data": judge_data,
}
"""Every family's judge: validation runs each task through the one for its family."""

BatchJudge = Callable[[Sequence[tuple[Path, Task]], Context], list[Validation]]
BATCHED: dict[Family, BatchJudge] = {"data": judge_data_batch}
"""Families judged many tasks at a time when validated in this process (data: one Python
start and one polars import per batch instead of per task); the same verdicts as JUDGES."""


def _judge_qa(
    task_dir: Path, task: Task, episode: Episode | None, ctx: Context, history: str
) -> Validation:
    if task.answer_key is not None:  # reconstructed: grounded facts, whatever else is missing
        earlier = episode.assistant_texts()[:-1] if episode is not None else []
        keyed = judge_keyed(task_dir, task, earlier, ctx.sandbox, ctx.config)
        evidence = keyed.evidence.model_copy(update={"history": history})
        return keyed.model_copy(update={"evidence": evidence})
    missing = len(task.files.missing)
    if missing:
        return _rejected(
            finding(
                Reason.WORKSPACE_INCOMPLETE,
                f"{Reason.WORKSPACE_INCOMPLETE}: {missing} files the session touched could not "
                "be recovered",
            )
        )
    expected = qa.expected_answer(task)
    if not expected:
        return _rejected(
            finding(Reason.NO_VERIFIER, "no verifier: the final message holds no answer")
        )
    controls = qa.answer_controls(expected, episode, ctx.config.seed)
    rerun = qa.reproduce(ctx.sandbox, task_dir / task.workspace, expected, episode, ctx.config)
    rejections = qa.qa_rejections(controls, rerun)
    evidence = QaEvidence(expected=expected, reproduced=tuple(rerun), history=history)
    if rejections:
        return Validation(
            status=Status.REJECTED, findings=tuple(rejections), controls=controls, evidence=evidence
        )
    wrong = sum(1 for c in controls.values() if c.expect == Outcome.FAIL)
    texts = [f"answer checker accepts {expected!r} and rejects all {wrong} wrong answers"]
    if rerun:
        texts.append(f"answer reproduced by `{rerun[0].command}` in the sandbox")
    proven = tuple(finding(Reason.PROVEN, t) for t in texts)
    return Validation(status=Status.ACCEPTED, findings=proven, controls=controls, evidence=evidence)


def finish(
    validation: Validation, task: Task, key: str, files_hash: str, ctx: Context, started: float
) -> Validation:
    """Add the evidence every task carries: hashes, settings, backend, image, timing."""
    common: dict[str, object] = {
        "cache_key": key,
        "files_sha256": files_hash,
        "config": ctx.config.model_dump(mode="json"),
        "backend": ctx.backend,
        "image": ctx.image,
        "trajforge_version": __version__,
        "wall_s": round(time.monotonic() - started, 3),
        "teacher": ctx.teacher.name,
    }
    evidence = validation.evidence.model_validate({**validation.evidence.model_dump(), **common})
    return validation.model_copy(update={"evidence": evidence})
