"""Build synthetic sessions event by event for replay and family tests."""

from __future__ import annotations

from trajforge.records import Edit, Event, SourcePos


class Script:
    """Append events the way a harness would record them, with paired call ids."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self._n = 0

    def _pos(self) -> SourcePos:
        return SourcePos(file="synthetic.jsonl", line=len(self.events) + 1)

    def user(self, text: str) -> Script:
        self.events.append(Event(kind="user", text=text, source=self._pos()))
        return self

    def say(self, text: str) -> Script:
        self.events.append(Event(kind="assistant", text=text, source=self._pos()))
        return self

    def _call(self, kind: str, tool: str, **fields: object) -> str:
        self._n += 1
        call_id = f"c{self._n}"
        self.events.append(
            Event(
                kind="tool_call",
                tool=tool,
                tool_kind=kind,
                call_id=call_id,  # type: ignore[arg-type]
                source=self._pos(),
                **fields,
            )  # type: ignore[arg-type]
        )
        return call_id

    def _result(self, call_id: str, kind: str, **fields: object) -> None:
        self.events.append(
            Event(
                kind="tool_result",
                call_id=call_id,
                tool_kind=kind,  # type: ignore[arg-type]
                source=self._pos(),
                **fields,
            )  # type: ignore[arg-type]
        )

    def read(self, path: str, content: str, partial: bool = False) -> Script:
        cid = self._call("read", "read", path=path)
        self._result(cid, "read", text=content, content=content, partial=partial)
        return self

    def write(self, path: str, content: str, error: bool = False) -> Script:
        cid = self._call("write", "write", path=path, content=content)
        self._result(cid, "write", text="ok", is_error=error)
        return self

    def edit(self, path: str, old: str, new: str, error: bool = False) -> Script:
        cid = self._call("edit", "edit", path=path, edits=(Edit(old=old, new=new),))
        self._result(cid, "edit", text="ok", is_error=error)
        return self

    def unrun_edit(self, path: str, old: str, new: str) -> Script:
        """An edit call the turn was cut off before it ran: no result (pi's aborted message)."""
        self._call("edit", "edit", path=path, edits=(Edit(old=old, new=new),))
        return self

    def patch(self, text: str) -> Script:
        cid = self._call("patch", "apply_patch", patch=text, patch_format="v4a")
        self._result(cid, "patch", text="ok")
        return self

    def shell(
        self, command: str, exit_code: int | None, output: str = "", cwd: str | None = None
    ) -> Script:
        cid = self._call("shell", "bash", command=command, **({"cwd": cwd} if cwd else {}))
        self._result(cid, "shell", text=output, exit_code=exit_code, is_error=exit_code != 0)
        return self

    def tool(self, tool: str, output: str = "", **arguments: object) -> Script:
        """A call of a harness tool replay does not model (Task, webfetch, todowrite)."""
        cid = self._call("other", tool, arguments=arguments)
        self._result(cid, "other", text=output)
        return self
