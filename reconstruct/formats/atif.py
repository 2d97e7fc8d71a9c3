"""ATIF trajectories (Agent Trajectory Interchange Format, Harbor's RFC 0001, v1.0–v1.7).

A trajectory is one JSON object: ``schema_version`` ("ATIF-v1.N"), ``session_id`` (optional since
v1.7), ``agent`` {name, version, model_name}, ``steps`` [{step_id, source: system | user | agent,
message (text, or content parts since v1.6), tool_calls [{tool_call_id, function_name,
arguments}], observation {results [{source_call_id, content}]}}] and ``extra``. Harbor writes one
per file (``agent/trajectory.json``); a JSON list or JSON lines of them are read too. The
session's harness is the agent's name (trajforge's own export keeps the original harness there,
and its cwd in ``extra.cwd``). Events are positioned by step id. Embedded
``subagent_trajectories`` are counted, not read: their work is the delegated part of this run.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from trajforge.errors import FormatError
from trajforge.reconstruct.formats.atif_tools import (
    EventLog,
    cut_offs_of,
    outcome_fields,
    steers_of,
)
from trajforge.reconstruct.formats.hermes_tools import message_text  # same content parts
from trajforge.reconstruct.inputs import json_line, read_all
from trajforge.records import Event, ParseWarning, Session, SessionHeader, sha256_hex

# An unescaped "schema_version": "ATIF-v…" key: inside another format's JSON strings the quotes
# are escaped, so a session that merely talks about ATIF does not match.
SCHEMA = re.compile(rb'"schema_version"\s*:\s*"ATIF-v\d')
Json = dict[str, Any]


class _Builder(EventLog):
    def __init__(self, file: str, harness: str) -> None:
        super().__init__(file)
        self.harness = harness

    def step(self, step: Any, index: int) -> None:
        if not isinstance(step, dict):
            self.warn(index, f"step {index}: not an object")
            return
        line = step["step_id"] if isinstance(step.get("step_id"), int) else index
        source, text = step.get("source"), message_text(step.get("message"))
        if source == "user":
            self.add(line, kind="user", text=text)
            return
        if source != "agent":
            self.skipped[f"{source}_step"] += 1
            return
        if text.strip():
            self.add(line, kind="assistant", text=text)
        known = _trajforge(step)
        for call in step.get("tool_calls") or []:
            self._call(call, line, _dict(known.get("calls")))
        observation = step.get("observation")
        results = observation.get("results") if isinstance(observation, dict) else None
        unpaired = iter(known.get("unpaired") or ())
        for result in results if isinstance(results, list) else []:
            self._result(result, line, _dict(known.get("results")), unpaired)

    def _call(self, call: Any, line: int, known: Json) -> None:
        name = call.get("function_name") if isinstance(call, dict) else None
        call_id = call.get("tool_call_id") if isinstance(call, dict) else None
        args = call.get("arguments") if isinstance(call, dict) else None
        if isinstance(args, str):
            try:
                args = orjson.loads(args)
            except orjson.JSONDecodeError:
                args = None
        if not isinstance(name, str) or not isinstance(call_id, str) or not isinstance(args, dict):
            self.skipped["unreadable_tool_call"] += 1
            self.warn(line, f"step {line}: unreadable tool call")
            return
        self.add_call(line, name, call_id, args, known.get(call_id), f"step {line}: ")

    def _result(self, result: Any, line: int, known: Json, unpaired: Iterator[Any]) -> None:
        call_id = result.get("source_call_id") if isinstance(result, dict) else None
        call = self.calls.get(call_id) if isinstance(call_id, str) else None
        text = message_text(result.get("content")) if isinstance(result, dict) else ""
        if call is None and call_id is None:
            own = next(unpaired, None)  # a result trajforge exported without its call
            if isinstance(own, dict) and isinstance(own.get("call_id"), str):
                self.add_known(line, own, {}, kind="tool_result", text=text)
                return
        if call is None:
            self.skipped["observation_without_call"] += 1
            return
        self.add_known(
            line,
            known.get(call.call_id or ""),
            _result_fields(call, text, result.get("extra"), self.harness),
            kind="tool_result",
            tool=call.tool,
            call_id=call.call_id,
            text=text,
        )


def _dict(value: Any) -> Json:
    return value if isinstance(value, dict) else {}


def _trajforge(step: Json) -> Json:
    """What trajforge's own export recorded about the step's calls and results."""
    extra = step.get("extra")
    mine = extra.get("trajforge") if isinstance(extra, dict) else None
    return mine if isinstance(mine, dict) else {}


def _result_fields(call: Event, text: str, extra: Any, harness: str) -> Json:
    """A result told from its text (and a v1.7 result ``extra`` with exit_code / is_error)."""
    extra = extra if isinstance(extra, dict) else {}
    error = extra.get("is_error") is True
    return outcome_fields(call, text, harness, error, extra.get("exit_code"))


def _header(doc: Json, file: str, raw: bytes) -> SessionHeader:
    agent, extra = _dict(doc.get("agent")), _dict(doc.get("extra"))
    steps = doc.get("steps") or [{}]
    first = steps[0] if isinstance(steps[0], dict) else {}
    digest = sha256_hex(raw)
    sid = doc.get("session_id") or doc.get("trajectory_id")

    def text(value: Any) -> str | None:
        return value if isinstance(value, str) and value else None

    return SessionHeader(
        harness=text(agent.get("name")) or "atif",
        session_id=text(sid) or digest[:16],
        source_path=file,
        content_hash=digest,
        harness_version=text(agent.get("version")),
        model=text(agent.get("model_name")),
        cwd=text(extra.get("cwd")),
        started_at=text(extra.get("started_at")) or text(first.get("timestamp")),
    )


def trajectory_session(doc: Any, file: str, line: int, raw: bytes) -> Session | ParseWarning:
    """One ATIF trajectory object → a Session; not a trajectory → a warning at ``line``."""
    if not isinstance(doc, dict) or not isinstance(doc.get("steps"), list):
        return ParseWarning(file=file, line=line, message="not an ATIF trajectory (no steps list)")
    header = _header(doc, file, raw)
    build = _Builder(file, header.harness)
    for index, step in enumerate(doc["steps"], start=1):
        build.step(step, index)
    subagents = doc.get("subagent_trajectories")
    if isinstance(subagents, list) and subagents:
        build.skipped["subagent_trajectory"] += len(subagents)
    extra = _dict(doc.get("extra"))
    return Session(
        header=header,
        events=tuple(build.events),
        warnings=tuple(build.warnings),
        skipped=dict(build.skipped),
        cut_offs=cut_offs_of(extra, len(build.events)),
        steers=steers_of(extra, len(build.events)),
    )


class AtifFormat:
    """ATIF trajectory files: one JSON document, a JSON list of them, or JSON lines."""

    name = "atif"

    def sniff(self, path: Path, head: bytes) -> bool:
        start = head.lstrip(b"\xef\xbb\xbf \t\r\n")[:1]
        return start in (b"{", b"[") and bool(SCHEMA.search(head))

    def parse(self, path: Path) -> Iterator[Session | ParseWarning]:
        raw = read_all(path)
        file = str(path)
        try:
            data = orjson.loads(raw)
        except orjson.JSONDecodeError:
            yield from _lines(raw, file)
            return
        if isinstance(data, list):
            for index, item in enumerate(data, start=1):
                yield trajectory_session(item, file, index, orjson.dumps(item))
        elif isinstance(data, dict) and "steps" in data:
            yield trajectory_session(data, file, 1, raw)
        else:
            raise FormatError(f"{path}: JSON document is not an ATIF trajectory (no 'steps')")


def _lines(raw: bytes, file: str) -> Iterator[Session | ParseWarning]:
    """JSON lines, one trajectory each; a file with no readable line is not ATIF at all."""
    found = 0
    for lineno, line in enumerate(raw.split(b"\n"), start=1):
        if not line.strip():
            continue
        value, problem = json_line(line)
        if problem is not None:  # damaged, or read with raw control characters
            yield ParseWarning(file=file, line=lineno, message=problem)
        if value is not None or problem is None:
            item = trajectory_session(value, file, lineno, line)
            found += isinstance(item, Session)
            yield item
    if not found:
        raise FormatError(f"{file}: no readable ATIF trajectory in it")
