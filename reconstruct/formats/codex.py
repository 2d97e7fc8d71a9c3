"""Reader for OpenAI Codex CLI rollouts (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``).

Two eras (``codex-rs/protocol`` ``RolloutLine`` / ``RolloutItem``):

* envelope era: every line is ``{"timestamp", "type", "payload"}`` with ``type`` one of
  ``session_meta`` (id, cwd, cli_version, git{commit_hash, branch, repository_url},
  forked_from_id), ``turn_context`` (cwd, model), ``response_item`` (a Responses API item),
  ``event_msg`` (UI events) and ``compacted``;
* bare era: the first line is the meta object itself (``{"id", "timestamp", "instructions",
  "git"}``), then bare response items, with ``{"record_type": "state"}`` lines in between.

Response items: ``message`` (user / assistant / developer), ``reasoning`` (skipped),
``function_call`` + ``function_call_output`` (paired by ``call_id``), ``custom_tool_call`` +
``custom_tool_call_output`` (freeform ``apply_patch``) and ``local_shell_call``. Shell tools
(``shell`` with an argv, ``shell_command`` / ``exec_command`` with a string) become ``shell``
events, ``bash -lc "<script>"`` unwrapped; ``apply_patch`` in any of its spellings (its own
tool, ``["apply_patch", patch]`` or an ``apply_patch <<EOF`` heredoc) becomes a V4A ``patch``.

Tool output comes in three forms: a JSON string ``{"output", "metadata": {"exit_code"}}``,
text headed ``Exit code: N / Wall time: ... / Output:`` (or the unified-exec ``Process exited
with code N`` header), or plain text whose exit code is taken from the ``exec_command_end``
event when one was recorded and is otherwise unknown.

Codex reads files through the shell: a successful ``cat FILE`` or ``sed -n '1,Np' FILE`` is
followed by a read-like ``tool_result`` (call id ``<id>:read``) carrying the file text, partial
when the range or Codex's output truncation may have cut it, so replay learns the file.

Forks: ``codex fork`` writes a new rollout whose ``session_meta`` names ``forked_from_id``
and which starts with the copied parent history, so each file reads on its own; extra
``session_meta`` lines are counted as skipped. Backtracking inside a file is recorded as
``event_msg`` ``thread_rolled_back{num_turns}``: the last N user turns are dropped, exactly as
Codex rebuilds its history on resume, and what follows belongs to the continued path.
"""

from __future__ import annotations

import logging
import posixpath
import re
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from trajforge.errors import FormatError
from trajforge.reconstruct.inputs import file_hash, iter_json_lines
from trajforge.records import Event, GitInfo, ParseWarning, Session, SessionHeader, SourcePos

log = logging.getLogger(__name__)

HARNESS = "codex"
ENVELOPE_TYPES = frozenset(
    {"session_meta", "response_item", "event_msg", "turn_context", "compacted"}
)
ITEM_TYPES = frozenset(
    {
        "message",
        "function_call",
        "function_call_output",
        "reasoning",
        "local_shell_call",
        "custom_tool_call",
        "custom_tool_call_output",
        "web_search_call",
        "compaction",
    }
)
SHELL_TOOLS = frozenset({"shell", "container.exec", "local_shell"})
STRING_SHELL_TOOLS = {"shell_command": "command", "exec_command": "cmd"}
CONTEXT_PREFIXES = (
    "<environment_context>",
    "<user_instructions>",
    "# AGENTS.md instructions",
    "<permissions instructions>",
    "<user_shell_command>",
)
EXIT_HEADER_RE = re.compile(
    r"\AExit code: (-?\d+)\nWall time: [^\n]*\n(?:Total output lines: \d+\n)?Output:\n?(.*)\Z",
    re.DOTALL,
)
UNIFIED_RE = re.compile(
    r"\A(?:[A-Z][^\n]*\n)*?Process exited with code (-?\d+)\n"
    r"(?:[A-Z][^\n]*\n)*?Output:\n?(.*)\Z",
    re.DOTALL,
)
HEREDOC_RE = re.compile(r"\A\s*(?:cd\s+\S+\s*&&\s*)?(?:apply_patch|applypatch)\b")
PATCH_RE = re.compile(r"\*\*\* Begin Patch\n.*?\*\*\* End Patch", re.DOTALL)
SED_RANGE_RE = re.compile(r"\A(\d+),(\d+)p\Z")
OMITTED_RE = re.compile(r"\[\.\.\. omitted \d+ of \d+ lines \.\.\.\]")
CWD_RE = re.compile(r"<cwd>([^<]+)</cwd>")
SESSION_ID_RE = re.compile(r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\Z")

Row = tuple[int, str, dict[str, Any]]


class CodexFormat:
    """Codex CLI rollout files, envelope and bare eras."""

    name = "codex"

    def sniff(self, path: Path, head: bytes) -> bool:
        """True when one of the first complete lines is a rollout line of either era."""
        for raw in head.split(b"\n")[:20]:
            try:
                record = orjson.loads(raw)
            except orjson.JSONDecodeError:
                continue
            if isinstance(record, dict) and _sniffable(record):
                return True
        return False

    def parse(self, path: Path) -> Iterator[Session | ParseWarning]:
        """The rollout as one Session; unusable lines become warnings."""
        source = str(path)
        rows: list[Row] = []
        warnings: list[ParseWarning] = []
        for line, value, error in iter_json_lines(path):
            kind = _classify(value, first=not rows) if isinstance(value, dict) else None
            if error is not None:
                warnings.append(ParseWarning(file=source, line=line, message=error))
            elif kind is None:
                message = "JSON record is not a Codex rollout line"
                warnings.append(ParseWarning(file=source, line=line, message=message))
            elif isinstance(value, dict):
                rows.append((line, kind, _payload(value, kind)))
        if not rows and not warnings:
            yield ParseWarning(file=source, line=1, message="empty file: no Codex rollout lines")
            return
        if not rows:
            first = warnings[0]
            raise FormatError(f"{path}: not a Codex rollout (line {first.line}: {first.message})")
        yield _build_session(path, rows, warnings)


def _classify(record: dict[str, Any], first: bool) -> str | None:
    """Row kind of a line: an envelope type, ``bare_meta``, ``state`` or ``response_item``."""
    kind = record.get("type")
    if isinstance(record.get("payload"), dict) and isinstance(kind, str):
        return kind if kind in ENVELOPE_TYPES or "timestamp" in record else None
    if "record_type" in record:
        return "state"
    if (
        kind is None
        and isinstance(record.get("id"), str)
        and "timestamp" in record
        and ("instructions" in record or "git" in record or first)
    ):
        return "bare_meta"
    if kind in ITEM_TYPES and (
        "role" in record or "call_id" in record or "summary" in record or "action" in record
    ):
        return "response_item"
    return None


def _sniffable(record: dict[str, Any]) -> bool:
    """A line only Codex writes: a known envelope, a bare meta line or a bare response item."""
    kind = _classify(record, first=False)
    if kind == "state":
        return record.get("record_type") == "state"
    return kind in ENVELOPE_TYPES or kind in ("bare_meta", "response_item")


def _payload(record: dict[str, Any], kind: str) -> dict[str, Any]:
    envelope = isinstance(record.get("payload"), dict) and kind not in ("bare_meta", "state")
    payload: dict[str, Any] = record["payload"] if envelope else record
    return payload


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _count(counts: dict[str, int], key: str) -> None:
    counts[key] = counts.get(key, 0) + 1


def _exec_ends(rows: list[Row]) -> dict[str, tuple[int | None, bool | None]]:
    """call_id → (exit code, success) from ``exec_command_end`` / ``patch_apply_end`` events."""
    ends: dict[str, tuple[int | None, bool | None]] = {}
    for _, kind, payload in rows:
        call_id = _str(payload.get("call_id"))
        if kind != "event_msg" or call_id is None:
            continue
        if payload.get("type") == "exec_command_end":
            ends[call_id] = (_int(payload.get("exit_code")), None)
        elif payload.get("type") == "patch_apply_end":
            ends[call_id] = (None, bool(payload.get("success")))
    return ends


def _build_session(path: Path, rows: list[Row], warnings: list[ParseWarning]) -> Session:
    builder = _EventBuilder(str(path), warnings, _exec_ends(rows))
    for line, kind, payload in rows:
        builder.row(line, kind, payload)
    meta = builder.meta
    digest = file_hash(path)
    git = meta.get("git")
    match = SESSION_ID_RE.search(path.name.removesuffix(".gz").removesuffix(".jsonl"))
    header = SessionHeader(
        harness=HARNESS,
        session_id=_str(meta.get("id")) or (match.group(1) if match else digest[:16]),
        source_path=str(path),
        content_hash=digest,
        harness_version=_str(meta.get("cli_version")),
        model=builder.model,
        cwd=_str(meta.get("cwd")) or builder.cwd,
        git=GitInfo(
            repository_url=_str(git.get("repository_url")),
            branch=_str(git.get("branch")),
            commit=_str(git.get("commit_hash")),
        )
        if isinstance(git, dict)
        else None,
        started_at=_str(meta.get("timestamp")) or builder.first_timestamp,
    )
    return Session.model_construct(
        header=header,
        events=tuple(builder.events),
        warnings=tuple(warnings),
        skipped=builder.skipped,
    )


def _text(content: object) -> str:
    blocks = content if isinstance(content, list) else [{"text": content}]
    return "\n".join(
        str(b["text"]) for b in blocks if isinstance(b, dict) and isinstance(b.get("text"), str)
    )


def _patch_fields(patch: str) -> dict[str, Any]:
    match = PATCH_RE.search(patch)
    text = match.group(0) + "\n" if match else patch
    return {"tool_kind": "patch", "patch": text, "patch_format": "v4a" if match else None}


def _shell_fields(command: str, cwd: str | None) -> dict[str, Any]:
    """A shell command, or the V4A patch when the command is an ``apply_patch`` heredoc."""
    if HEREDOC_RE.match(command) and "*** Begin Patch" in command:
        return {**_patch_fields(command), "cwd": cwd}
    return {"tool_kind": "shell", "command": command, "cwd": cwd}


def _argv_fields(argv: list[str], cwd: str | None) -> dict[str, Any]:
    if len(argv) >= 2 and argv[0] in ("apply_patch", "applypatch"):
        return {**_patch_fields(argv[1]), "cwd": cwd}
    shell = argv[0].rsplit("/", 1)[-1] if argv else ""
    if len(argv) == 3 and shell in ("bash", "sh", "zsh") and argv[1] in ("-lc", "-c"):
        return _shell_fields(argv[2], cwd)
    return _shell_fields(shlex.join(argv), cwd)


def call_fields(name: str, args: dict[str, Any]) -> dict[str, Any]:
    """Normalised fields of a Codex tool call (kind, command / patch, cwd)."""
    cwd = _str(args.get("workdir"))
    if name in SHELL_TOOLS:
        command = args.get("command")
        if isinstance(command, list) and all(isinstance(a, str) for a in command):
            return _argv_fields(command, cwd)
        if isinstance(command, str):
            return _shell_fields(command, cwd)
    if name in STRING_SHELL_TOOLS and isinstance(args.get(STRING_SHELL_TOOLS[name]), str):
        return _shell_fields(args[STRING_SHELL_TOOLS[name]], cwd)
    if name == "apply_patch":
        patch = args.get("input", args.get("patch"))
        if isinstance(patch, str):
            return _patch_fields(patch)
    return {"tool_kind": "other"}


def parse_output(raw: object) -> tuple[str, int | None, bool | None]:
    """(text, exit code, success) of a tool output in any of its recorded forms."""
    success: bool | None = None
    if isinstance(raw, dict):
        success = raw["success"] if isinstance(raw.get("success"), bool) else None
        raw = raw.get("content", raw.get("output", ""))
    text = _text(raw)
    if text.startswith("{"):
        try:
            value = orjson.loads(text)
        except orjson.JSONDecodeError:
            value = None
        if isinstance(value, dict) and isinstance(value.get("output"), str):
            meta = value.get("metadata")
            exit_code = _int(meta.get("exit_code")) if isinstance(meta, dict) else None
            return value["output"], exit_code, success
    for regex in (EXIT_HEADER_RE, UNIFIED_RE):
        match = regex.match(text)
        if match:
            return match.group(2), int(match.group(1)), success
    return text, None, success


def shell_read(command: str | None, cwd: str | None, output: str) -> dict[str, Any] | None:
    """``path`` / ``content`` / ``partial`` when ``command`` printed one whole or ranged file."""
    try:
        argv = shlex.split(command or "")
    except ValueError:
        return None
    if len(argv) == 2 and argv[0] == "cat":
        path, partial = argv[1], False
    elif len(argv) == 4 and argv[:2] == ["sed", "-n"] and SED_RANGE_RE.match(argv[2]):
        first, last = argv[2][:-1].split(",")
        path, partial = argv[3], first != "1" or len(output.splitlines()) >= int(last)
    else:
        return None
    if path.startswith("-") or any(c in path for c in "*?[$~"):
        return None
    if cwd and not path.startswith("/"):
        path = posixpath.join(cwd, path)
    return {
        "path": path,
        "content": output,
        "partial": partial or OMITTED_RE.search(output) is not None,
    }


class _EventBuilder:
    """Turns rollout rows into Events along the surviving history."""

    def __init__(
        self,
        source: str,
        warnings: list[ParseWarning],
        ends: dict[str, tuple[int | None, bool | None]],
    ) -> None:
        self.source = source
        self.warnings = warnings
        self.ends = ends
        self.events: list[Event] = []
        self.skipped: dict[str, int] = {}
        self.meta: dict[str, Any] = {}
        self.model: str | None = None
        self.cwd: str | None = None
        self.first_timestamp: str | None = None
        self.calls: dict[str, Event] = {}

    def emit(self, line: int, **fields: Any) -> None:
        self.events.append(Event(source=SourcePos(file=self.source, line=line), **fields))

    def row(self, line: int, kind: str, payload: dict[str, Any]) -> None:
        if self.first_timestamp is None:
            self.first_timestamp = _str(payload.get("timestamp"))
        if kind in ("session_meta", "bare_meta"):
            if self.meta:
                _count(self.skipped, "session_meta:extra")  # a fork's copied parent meta
            else:
                self.meta = payload.get("meta", payload) if kind == "session_meta" else payload
        elif kind == "turn_context":
            self.model = self.model or _str(payload.get("model"))
            self.cwd = self.cwd or _str(payload.get("cwd"))
            _count(self.skipped, kind)
        elif kind == "response_item":
            self.item(line, payload)
        elif kind == "event_msg" and payload.get("type") == "thread_rolled_back":
            self.roll_back(line, _int(payload.get("num_turns")) or 0)
        elif kind == "event_msg":
            _count(self.skipped, f"event_msg:{payload.get('type')}")
        else:
            _count(self.skipped, kind)

    def item(self, line: int, item: dict[str, Any]) -> None:
        kind = item.get("type")
        if kind == "message":
            self.message(line, item)
        elif kind == "function_call":
            self.function_call(line, item)
        elif kind == "custom_tool_call":
            name = _str(item.get("name")) or "unknown"
            args = {"input": item.get("input")}
            self.call(line, name, _str(item.get("call_id")), args, call_fields(name, args))
        elif kind == "local_shell_call":
            self.local_shell_call(line, item)
        elif kind in ("function_call_output", "custom_tool_call_output"):
            self.output(line, item)
        else:
            _count(self.skipped, f"response_item:{kind}")

    def message(self, line: int, item: dict[str, Any]) -> None:
        role = item.get("role")
        text = _text(item.get("content"))
        if role == "user" and text.lstrip().startswith(CONTEXT_PREFIXES):
            match = CWD_RE.search(text)
            self.cwd = self.cwd or (match.group(1).strip() if match else None)
            _count(self.skipped, "message:context")
        elif role in ("user", "assistant") and text.strip():
            self.emit(line, kind=role, text=text)
        else:
            _count(self.skipped, f"message:{role}")

    def function_call(self, line: int, item: dict[str, Any]) -> None:
        name = _str(item.get("name")) or "unknown"
        raw = item.get("arguments")
        args: Any = raw
        if isinstance(raw, str):
            try:
                args = orjson.loads(raw) if raw.strip() else {}
            except orjson.JSONDecodeError:
                self.warn(line, f"arguments of {name!r} call are not JSON; kept raw")
                args = {"raw": raw}
        if not isinstance(args, dict):
            args = {"raw": raw}
        self.call(line, name, _str(item.get("call_id")), args, call_fields(name, args))

    def local_shell_call(self, line: int, item: dict[str, Any]) -> None:
        raw = item.get("action")
        action: dict[str, Any] = raw if isinstance(raw, dict) else {}
        argv = action.get("command")
        fields: dict[str, Any] = {"tool_kind": "other"}
        if isinstance(argv, list) and all(isinstance(a, str) for a in argv):
            fields = _argv_fields(argv, _str(action.get("working_directory")))
        call_id = _str(item.get("call_id")) or _str(item.get("id"))
        self.call(line, "local_shell", call_id, action, fields)

    def call(
        self,
        line: int,
        name: str,
        call_id: str | None,
        args: dict[str, Any],
        fields: dict[str, Any],
    ) -> None:
        call_id = call_id or f"line{line}"
        self.emit(line, kind="tool_call", tool=name, call_id=call_id, arguments=args, **fields)
        self.calls[call_id] = self.events[-1]

    def output(self, line: int, item: dict[str, Any]) -> None:
        call_id = _str(item.get("call_id"))
        if call_id is None or call_id not in self.calls:
            self.warn(line, f"tool output for unknown call_id {call_id!r}")
        call = self.calls.get(call_id or "")
        name, tool_kind = (call.tool, call.tool_kind) if call else (None, "other")
        text, exit_code, success = parse_output(item.get("output"))
        end_exit, end_success = self.ends.get(call_id or "", (None, None))
        exit_code = exit_code if exit_code is not None else end_exit
        success = success if success is not None else end_success
        failed = (exit_code is not None and exit_code != 0) or success is False
        if tool_kind == "patch" and text.startswith("apply_patch verification failed"):
            failed = True
        self.emit(
            line,
            kind="tool_result",
            tool=name,
            tool_kind=tool_kind,
            call_id=call_id,
            text=text,
            exit_code=exit_code,
            is_error=failed,
        )
        read = shell_read(call.command, call.cwd, text) if call and exit_code == 0 else None
        if read is not None and not failed:
            self.emit(
                line,
                kind="tool_result",
                tool=name,
                tool_kind="read",
                call_id=f"{call_id}:read",
                **read,
            )

    def roll_back(self, line: int, turns: int) -> None:
        """Drop the last ``turns`` user turns, as Codex does when it rebuilds history."""
        users = [i for i, e in enumerate(self.events) if e.kind == "user"]
        if turns <= 0:
            return
        cut = users[-turns] if len(users) >= turns else (users[0] if users else len(self.events))
        dropped = len(self.events) - cut
        if dropped:
            self.skipped["rolled_back"] = self.skipped.get("rolled_back", 0) + dropped
            log.debug(
                "%s:%d: rollback of %d turns drops %d events", self.source, line, turns, dropped
            )
        del self.events[cut:]

    def warn(self, line: int, message: str) -> None:
        self.warnings.append(ParseWarning(file=self.source, line=line, message=message))
