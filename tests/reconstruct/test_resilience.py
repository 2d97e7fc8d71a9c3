"""One bad input or candidate never stops `trajforge reconstruct`: the rest is written.

The sessions are pi v3 files shaped like the committed pi fixtures (tests/fixtures/sessions/pi,
written by the real pi): a header, then ``message`` entries chained by ``parentId``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from trajforge.reconstruct import pipeline
from trajforge.records import Task, load_record

GOOD = Path(__file__).parents[1] / "fixtures" / "sessions" / "pi" / "build.jsonl"


def _pi_session(path: Path, request: str, steps: list[tuple[str, dict[str, Any], str]]) -> Path:
    """A pi session: the request, then one tool call + result per step, then a final answer."""
    lines: list[dict[str, Any]] = [
        {
            "type": "session",
            "version": 3,
            "id": path.stem,
            "timestamp": "2026-01-01T00:00:00.000Z",
            "cwd": "/home/dev/project",
        }
    ]

    def add(message: dict[str, Any]) -> None:
        parent = lines[-1].get("id") if len(lines) > 1 else None
        entry_id = f"{len(lines):08x}"
        stamp = "2026-01-01T00:00:01.000Z"
        lines.append(
            {
                "type": "message",
                "id": entry_id,
                "parentId": parent,
                "timestamp": stamp,
                "message": message,
            }
        )

    add({"role": "user", "content": [{"type": "text", "text": request}]})
    for n, (tool, args, output) in enumerate(steps):
        call = {"type": "toolCall", "id": f"call_{n}", "name": tool, "arguments": args}
        add({"role": "assistant", "content": [call]})
        result = [{"type": "text", "text": output}]
        add(
            {
                "role": "toolResult",
                "toolCallId": f"call_{n}",
                "toolName": tool,
                "content": result,
                "isError": False,
            }
        )
    add({"role": "assistant", "content": [{"type": "text", "text": "Done: the module is added."}]})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "trajforge.cli.main", *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def _tasks(out: Path) -> list[Task]:
    return [load_record(Task, p) for p in sorted((out / "tasks").glob("*/task.json"))]


def test_a_path_read_as_a_file_and_written_as_a_directory_is_a_divergence(tmp_path: Path) -> None:
    """`pkg` read as a file, later `pkg/x.py` written: this crashed emit.py with
    IsADirectoryError and lost every other input's tasks."""
    bad = _pi_session(
        tmp_path / "pkg-conflict.jsonl",
        "Add pkg/x.py with double(n) returning 2 * n.",
        [
            ("read", {"path": "pkg"}, "print('old pkg script')\n"),
            ("write", {"path": "pkg/x.py", "content": "def double(n):\n    return 2 * n\n"}, "ok"),
        ],
    )
    out = tmp_path / "out"
    summary = pipeline.run([bad, GOOD], out)
    assert summary.failed_candidates == []
    assert [i.error for i in summary.inputs] == [None, None]
    by_file = {Path(t.source.path).name: t for t in _tasks(out)}
    assert set(by_file) == {"pkg-conflict.jsonl", "build.jsonl"}
    conflict = by_file["pkg-conflict.jsonl"]
    assert conflict.files.recovered == ("pkg/x.py",)
    assert any("pkg is both a file and a directory" in d for d in conflict.files.divergences)
    oracle = out / "tasks" / conflict.id / "oracle"
    assert (oracle / "pkg" / "x.py").read_text().startswith("def double")
    assert summary.divergences >= 1


def test_an_unwritable_candidate_is_a_reported_row_and_the_rest_is_written(
    tmp_path: Path,
) -> None:
    """A file name the filesystem refuses (over 255 bytes) makes that task unwritable; the other
    input's tasks are still written, the failed one is reported with file and reason, exit 1."""
    long_name = "m" * 300 + ".py"
    bad = _pi_session(
        tmp_path / "long-name.jsonl",
        f"Create {long_name} with a constant ANSWER = 42.",
        [("write", {"path": long_name, "content": "ANSWER = 42\n"}, "ok")],
    )
    out = tmp_path / "out"
    done = _cli("reconstruct", str(bad), str(GOOD), "-o", str(out), "--json")
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    summary = json.loads(done.stdout)
    (failed,) = summary["failed_candidates"]
    assert failed["file"] == str(bad) and failed["stage"] == "write"
    assert "File name too long" in failed["reason"] and failed["task_id"]
    written = {Path(t.source.path).name for t in _tasks(out)}
    assert written == {"build.jsonl"}
    assert summary["written"] == len(_tasks(out)) >= 1
    assert not [p for p in (out / "tasks").iterdir() if p.name.startswith(".")]  # no staging
    human = _cli("reconstruct", str(bad), str(GOOD), "-o", str(tmp_path / "again"))
    assert human.returncode == 1 and "failed candidate (write)" in human.stderr
    assert "long-name.jsonl" in human.stderr
