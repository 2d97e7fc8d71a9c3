"""``trajforge export atif``: sessions as ATIF trajectories (Agent Trajectory Interchange Format).

Follows the Harbor project's ATIF v1.4 RFC: a root object with ``schema_version``,
``session_id``, ``agent`` {name, version, model_name} and ``steps``. A user message is a
``user`` step; an assistant message opens an ``agent`` step; the tool calls that follow attach
to it as ``tool_calls`` {tool_call_id, function_name, arguments} and their results as
``observation.results`` {source_call_id, content}. Step ids count from 1. Events carry no
timestamps, so steps have none. Every text passes through the scrubber first.

So that ``trajforge reconstruct`` reads an export back to the same events (the ``atif`` format),
each step's ``extra.trajforge`` keeps the fields trajforge normalised for its calls and results
(``calls`` / ``results`` by tool call id: tool kind, path, content, edits, command, exit code,
error flag, ...), and the root ``extra.cwd`` the session's working directory (``extra.cut_offs``
and ``extra.steers``: the turns the harness recorded as cut off, and the messages delivered
while a turn still ran, by event index).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from trajforge import __version__
from trajforge.errors import FormatError
from trajforge.reconstruct.inputs import expand_paths
from trajforge.reconstruct.pipeline import all_formats, detect
from trajforge.records import Event, Session, Status
from trajforge.scrub import Scrubber

ATIF_VERSION = "ATIF-v1.4"
# Event fields the ATIF core already carries (or that locate the event in its source).
_CORE_FIELDS = frozenset({"kind", "source", "text", "tool", "call_id", "arguments"})


@dataclass(frozen=True)
class ExportOutcome:
    """What happened to one input path of a session export (ATIF, STS)."""

    path: str
    """Input path."""
    status: Status
    """accepted (written), error (unreadable)."""
    written: tuple[str, ...] = ()
    """Files written."""
    reason: str = ""
    """Why the input could not be read."""


class _Builder:
    def __init__(self, session: Session, scrub: Scrubber) -> None:
        self.session = session
        self.scrub = scrub
        self.steps: list[dict[str, Any]] = []
        self.by_call: dict[str, dict[str, Any]] = {}

    def _step(self, source: str, message: str) -> dict[str, Any]:
        step: dict[str, Any] = {
            "step_id": len(self.steps) + 1,
            "source": source,
            "message": self.scrub.text(message),
        }
        if source == "agent" and self.session.header.model:
            step["model_name"] = self.session.header.model
        self.steps.append(step)
        return step

    def _keep(self, step: dict[str, Any], part: str, call_id: str | None, event: Event) -> None:
        """Record the event's normalised fields under the step's ``extra.trajforge``: by call id,
        or (a result without its call: a harness's synthetic read) in order under ``unpaired``."""
        fields = event.model_dump(mode="json", exclude=set(_CORE_FIELDS), exclude_defaults=True)
        mine = step.setdefault("extra", {}).setdefault("trajforge", {})
        if call_id is None:
            fields.update(call_id=event.call_id, tool=event.tool)
            mine.setdefault("unpaired", []).append(self.scrub.value(fields))
        else:
            mine.setdefault(part, {})[call_id] = self.scrub.value(fields)

    def _agent_step(self) -> dict[str, Any]:
        last = self.steps[-1] if self.steps else None
        if last is not None and last["source"] == "agent" and "observation" not in last:
            return last
        return self._step("agent", "")

    def add(self, index: int, event: Event) -> None:
        if event.kind == "user":
            self._step("user", event.text)
        elif event.kind == "assistant":
            self._step("agent", event.text)
        elif event.kind == "tool_call":
            call_id = event.call_id or f"call-{index}"
            step = self._agent_step()
            step.setdefault("tool_calls", []).append(
                {
                    "tool_call_id": call_id,
                    "function_name": event.tool or event.tool_kind or "unknown",
                    "arguments": self.scrub.value(dict(event.arguments)),
                }
            )
            self.by_call[call_id] = step
            self._keep(step, "calls", call_id, event)
        else:
            self._result(index, event)

    def _result(self, index: int, event: Event) -> None:
        step = self.by_call.get(event.call_id or "")
        result: dict[str, Any] = {"content": self.scrub.text(event.text)}
        if step is None:
            step = self._agent_step()
            self._keep(step, "unpaired", None, event)
        else:
            result = {"source_call_id": event.call_id, **result}
            self._keep(step, "results", event.call_id or "", event)
        step.setdefault("observation", {"results": []})["results"].append(result)


def trajectory(session: Session, scrub: Scrubber) -> dict[str, Any]:
    """The ATIF document of one session."""
    header = session.header
    builder = _Builder(session, scrub)
    for index, event in enumerate(session.events):
        builder.add(index, event)
    agent: dict[str, Any] = {"name": header.harness, "version": header.harness_version or "unknown"}
    if header.model:
        agent["model_name"] = header.model
    extra: dict[str, Any] = {
        "exported_by": f"trajforge {__version__}",
        "source_path": header.source_path,
        "source_sha256": header.content_hash,
    }
    if header.started_at:
        extra["started_at"] = header.started_at
    if header.cwd:
        extra["cwd"] = scrub.text(header.cwd)
    extra.update(turn_marks(session, scrub))
    return {
        "schema_version": ATIF_VERSION,
        "session_id": header.session_id,
        "agent": agent,
        "steps": builder.steps,
        "final_metrics": {"total_steps": len(builder.steps)},
        "extra": extra,
    }


def turn_marks(session: Session, scrub: Scrubber) -> dict[str, Any]:
    """What triage joins turns by and the events do not carry, by event index: the turns the
    harness recorded as cut off, and the user events delivered while a turn still ran."""
    marks: dict[str, Any] = {}
    if session.cut_offs:
        marks["cut_offs"] = [
            {"after": c.after, "failure": scrub.text(c.failure)} for c in session.cut_offs
        ]
    if session.steers:
        marks["steers"] = list(session.steers)
    return marks


def file_name(session: Session, suffix: str) -> str:
    """``<harness>-<session id>`` with a file-safe id, then ``suffix``."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in session.header.session_id)
    return f"{session.header.harness}-{safe}{suffix}"


def _write(session: Session, target: Path, scrub: Scrubber) -> str:
    name = file_name(session, ".json")
    data = orjson.dumps(trajectory(session, scrub), option=orjson.OPT_INDENT_2)
    (target / name).write_bytes(data + b"\n")
    return name


def export(paths: Sequence[Path], target: Path) -> Iterator[ExportOutcome]:
    """Write one ATIF file per session found in ``paths``; one outcome per input."""
    return export_sessions(paths, target, _write)


def export_sessions(
    paths: Sequence[Path], target: Path, write: Callable[[Session, Path, Scrubber], str]
) -> Iterator[ExportOutcome]:
    """Every session found in ``paths`` through ``write`` (which returns the file it wrote in
    ``target``), texts scrubbed; one outcome per input, an unreadable one an error row."""
    target.mkdir(parents=True, exist_ok=True)
    inputs, missing = expand_paths(paths)
    for problem in missing:
        yield ExportOutcome(problem.split(":")[0], Status.ERROR, reason=problem)
    formats = all_formats()
    scrub = Scrubber()
    for path in inputs:
        try:
            fmt = detect(path, formats)
            written = [write(s, target, scrub) for s in fmt.parse(path) if isinstance(s, Session)]
            yield ExportOutcome(str(path), Status.ACCEPTED, tuple(written))
        except (FormatError, OSError, ValueError) as exc:
            yield ExportOutcome(str(path), Status.ERROR, reason=str(exc))
