"""Write candidates as task folders: ``OUT/tasks/<id>/{task.json, workspace/, oracle/, probes/}``.

Everything written passes through the scrubber first. Folders appear atomically (written under
a temporary name, then renamed), so an interrupted run never leaves half a task, and a task
whose id already exists is not written again.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from trajforge.reconstruct.environment import detect as detect_environment
from trajforge.reconstruct.families import Candidate
from trajforge.reconstruct.replay import Replay, Snapshot
from trajforge.records import (
    AnswerKey,
    Environment,
    FileReport,
    Provenance,
    RepoMatch,
    Session,
    Task,
    TaskSource,
    Verifier,
    VerifierKind,
    canonical_json,
    dump_record,
    sha256_hex,
)
from trajforge.scrub import Scrubber
from trajforge.taskdir import task_file

ID_CHARS = 16


def _hashes(files: dict[str, str]) -> dict[str, str]:
    return {path: sha256_hex(text.encode()) for path, text in sorted(files.items())}


def build_task(
    cand: Candidate,
    session: Session,
    state: Replay,
    scrub: Scrubber,
    config: dict[str, Any],
    repo: RepoMatch | None = None,
) -> tuple[Task, dict[str, dict[str, str]]]:
    """The Task record and the (scrubbed) file maps to write beside it."""
    folders: dict[str, dict[str, str]] = {"workspace": _scrub_files(cand.start, scrub)}
    if cand.end is not None:
        folders["oracle"] = _scrub_files(cand.end, scrub)
    for n, probe in enumerate(cand.probes):
        folders[f"probes/{n}"] = _scrub_files(probe, scrub)
    instruction = scrub.text(cand.instruction)
    answer = scrub.text(cand.answer) if cand.answer is not None else None
    command = scrub.text(cand.command) if cand.command else None
    kind: VerifierKind = "answer" if cand.family == "qa" else ("command" if command else "none")
    verifier = Verifier(kind=kind, command=command, tests=cand.tests)
    identity = {
        "source": [session.header.harness, session.header.session_id, cand.first, cand.last],
        "family": cand.family,
        "instruction": instruction,
        "answer": answer,
        "verifier": verifier.model_dump(mode="json"),
        "files": {name: _hashes(files) for name, files in folders.items()},
    }
    if cand.answer_key is not None:  # absent otherwise, so other tasks keep their ids
        # unset optional fields (a fact's ``denies``) left out: older keys keep their ids
        identity["answer_key"] = cand.answer_key.model_dump(mode="json", exclude_none=True)
    task_id = f"{cand.family}-{sha256_hex(canonical_json(identity))[:ID_CHARS]}"
    end = cand.end or cand.start
    unknown, touched = end.missing | cand.start.missing, _touched(state, cand)
    task = Task(
        id=task_id,
        family=cand.family,
        instruction=instruction,
        source=TaskSource(
            harness=session.header.harness,
            session=session.header.session_id,
            path=session.header.source_path,
            events=(cand.first, cand.last),
            repo=_scrub_repo(repo, scrub),
        ),
        oracle="oracle" if cand.end is not None else None,
        answer=answer,
        answer_key=_scrub_key(cand.answer_key, scrub),
        verifier=verifier,
        classification=cand.reasons,
        files=FileReport(
            recovered=tuple(sorted(end.files)),
            partial=tuple(sorted(end.partial | cand.start.partial)),
            missing=tuple(sorted(unknown & touched)),
            absent=tuple(sorted(unknown - touched)),
            shell_modified=tuple(sorted(_shell_paths(state, cand))),
            shell_commands=tuple(scrub.text(c) for c in cand.shell_commands),
            divergences=tuple(scrub.text(d) for d in state.divergences + state.violations),
        ),
        probes=tuple(f"probes/{n}" for n in range(len(cand.probes))),
        provenance=Provenance(config=config),
        environment=_environment(cand, session, folders),
    )
    return task, folders


def _environment(
    cand: Candidate, session: Session, folders: dict[str, dict[str, str]]
) -> Environment | None:
    """The coding task's dependencies, from its completed files and the session's commands."""
    if cand.family == "qa":
        return None
    setup = [
        e.command
        for e in session.events[: cand.last + 1]
        if e.kind == "tool_call" and e.tool_kind == "shell" and e.command
    ]
    start, done = folders["workspace"], folders.get("oracle", folders["workspace"])
    changed = sorted(p for p in {*start, *done} if start.get(p) != done.get(p))
    return detect_environment(done, cand.command, setup, changed)


def _scrub_repo(repo: RepoMatch | None, scrub: Scrubber) -> RepoMatch | None:
    """The match with its URL and detail through the scrubber (a URL can carry a token)."""
    if repo is None:
        return None
    url = scrub.text(repo.url) if repo.url else None
    return repo.model_copy(update={"url": url, "detail": scrub.text(repo.detail)})


def _scrub_key(key: AnswerKey | None, scrub: Scrubber) -> AnswerKey | None:
    """The key with every fact's text through the scrubber (a fact can be a secret's name)."""
    if key is None:
        return None
    facts = [
        f.model_copy(
            update={"value": scrub.text(f.value), "grounded_in": scrub.text(f.grounded_in)}
        )
        for f in (*key.required, *key.others)
    ]
    n = len(key.required)
    return key.model_copy(update={"required": tuple(facts[:n]), "others": tuple(facts[n:])})


def _scrub_files(snapshot: Snapshot, scrub: Scrubber) -> dict[str, str]:
    return {path: scrub.text(text) for path, text in snapshot.files.items()}


def _touched(state: Replay, cand: Candidate) -> set[str]:
    """Paths the episode read or changed (any version of theirs from within it)."""
    return {
        path
        for path, versions in state.history.items()
        if any(cand.first <= v.index <= cand.last for v in versions)
    }


def _shell_paths(state: Replay, cand: Candidate) -> set[str]:
    return {
        path
        for path, versions in state.history.items()
        if any(v.origin == "shell" and cand.first <= v.index <= cand.last for v in versions)
    }


def write_task(out: Path, task: Task, folders: dict[str, dict[str, str]]) -> bool:
    """Write the task folder atomically; False when a task with this id already exists."""
    tasks_dir = out / "tasks"
    tasks_dir.mkdir(parents=True, exist_ok=True)
    final = tasks_dir / task.id
    if final.exists():
        return False
    staging = Path(tempfile.mkdtemp(prefix=f".{task.id}.", dir=tasks_dir))
    try:
        for folder, files in folders.items():
            root = staging / folder
            root.mkdir(parents=True, exist_ok=True)
            for rel, text in files.items():
                _write_confined(root, rel, text)
        task_file(staging).write_text(dump_record(task) + "\n")
        os.rename(staging, final)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return True


def _write_confined(root: Path, rel: str, text: str) -> None:
    """Write ``root/rel``; refuse anything that would resolve outside ``root``."""
    target = root / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    resolved_root = root.resolve()
    if not target.parent.resolve().is_relative_to(resolved_root) or target.is_symlink():
        raise ValueError(f"refusing to write {rel!r} outside the task folder")
    target.write_text(text, encoding="utf-8", errors="surrogateescape")


def clean_staging(out: Path) -> int:
    """Remove staging folders left by an interrupted run; returns how many."""
    tasks_dir = out / "tasks"
    if not tasks_dir.is_dir():
        return 0
    stale = [p for p in tasks_dir.iterdir() if p.name.startswith(".") and p.is_dir()]
    for path in stale:
        shutil.rmtree(path, ignore_errors=True)
    return len(stale)
