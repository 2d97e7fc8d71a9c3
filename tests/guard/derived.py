"""Sessions derived from the real pi fixture sessions for audit tests (fixtures stay unchanged)."""

from __future__ import annotations

import json
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "sessions"


def derived_session(tmp_path: Path, commands: list[str]) -> Path:
    """A real pi fixture session with extra bash calls appended (derived, never edited)."""
    first = sorted((FIXTURES / "pi").glob("*.jsonl"))[0]
    lines = first.read_text().splitlines()
    template = json.loads(next(line for line in lines if '"toolCall"' in line))
    extra = []
    parent = json.loads(lines[-1]).get("id")
    for number, command in enumerate(commands):
        row = json.loads(json.dumps(template))
        row["id"], row["parentId"], parent = f"cheat{number:03d}", parent, f"cheat{number:03d}"
        for block in row["message"]["content"]:
            if block.get("type") == "toolCall":
                block["name"], block["arguments"] = "bash", {"command": command}
        extra.append(json.dumps(row))
    session = tmp_path / "cheat.jsonl"
    session.write_text("\n".join([*lines, *extra]) + "\n")
    return session
