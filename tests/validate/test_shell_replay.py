"""A fix made with `sed -i` (content unknown to replay) is reproduced by re-running the command."""

from __future__ import annotations

import json
from pathlib import Path

from trajforge.reconstruct import pipeline
from trajforge.verifiers.validate import run
from trajforge.verifiers.validate.matrix import shell_oracle

from .conftest import FIXTURES, local_context, tasks_of

SED_FIX = "sed -i '4s/return high/return low/' calc.py"


def _sed_session(tmp_path: Path) -> Path:
    """The real pi repair session with its edit tool call replaced by an equivalent `sed -i`."""
    lines = []
    for line in (FIXTURES / "pi" / "repair.jsonl").read_text().splitlines():
        record = json.loads(line)
        message = record.get("message", {})
        for block in message.get("content", []) if isinstance(message.get("content"), list) else []:
            if block.get("type") == "toolCall" and block.get("name") == "edit":
                block["name"], block["arguments"] = "bash", {"command": SED_FIX}
        if message.get("role") == "toolResult" and message.get("toolName") == "edit":
            message["toolName"] = "bash"
            message["content"] = [{"type": "text", "text": "(no output)"}]
        lines.append(json.dumps(record))
    path = tmp_path / "sed-repair.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_shell_made_fix_is_replayed_and_accepted(tmp_path: Path) -> None:
    out = tmp_path / "out"
    pipeline.run([_sed_session(tmp_path)], out)
    repair = next(t for t in tasks_of(out).values() if t.family == "repair")
    assert repair.files.shell_modified == ("calc.py",)
    assert repair.files.shell_commands == (SED_FIX,)
    assert not (out / "tasks" / repair.id / "oracle" / "calc.py").exists()  # unknown to replay
    rows = {r.id: r for r in run.run(out, local_context())}
    task = tasks_of(out)[repair.id]
    assert rows[repair.id].status == "accepted", task.validation.reasons
    replayed = task.validation.evidence.shell_replayed
    assert [r.command for r in replayed] == [SED_FIX] and replayed[0].exit_code == 0


def test_what_the_environment_built_is_no_change_of_the_episode() -> None:
    """pi-mono's "copy the tui components to modes/interactive" extend: its `cp` commands were
    re-run in a sandbox whose environment had built every package's dist/ (npm workspaces), and
    the whole sandbox became the oracle: its 20 mutants fell in packages/ai/dist/*.js and
    packages/tui/dist/*.js. Only what the commands did is the episode's."""
    workspace = {"src/a.ts": "a\n", "src/old.ts": "old\n", "src/keep.ts": "keep\n"}
    built = {"packages/ai/dist/index.js": "export const x = 1;\n"}
    before = {**workspace, **built}
    after = {
        "src/a.ts": "a\n",
        "src/keep.ts": "keep\n",
        "src/copy/a.ts": "a\n",  # cp src/a.ts src/copy/
        **built,  # rm src/old.ts; dist untouched
    }
    oracle = {"src/keep.ts": "keep, as replay knows it\n"}
    assert shell_oracle(workspace, before, after, oracle) == {
        "src/a.ts": "a\n",
        "src/copy/a.ts": "a\n",
        "src/keep.ts": "keep, as replay knows it\n",
    }
    rebuilt = {**after, "packages/ai/dist/index.js": "export const x = 2;\n"}  # a command's
    assert "packages/ai/dist/index.js" in shell_oracle(workspace, before, rebuilt, oracle)


def test_a_changed_file_the_reference_cannot_load_gets_no_mutants(tmp_path: Path) -> None:
    """A changed module whose top-level relative import names a module the reference lacks
    (pi-mono's moved ``tui-renderer.ts`` importing ``../changelog.js``) cannot be loaded by any
    test that passes: its mutants could only survive, so none is made there, and it is said."""
    out = tmp_path / "out"
    pipeline.run([FIXTURES / "pi" / "repair.jsonl"], out)
    repair = next(t for t in tasks_of(out).values() if t.family == "repair")
    stale = "from .gone import thing\n\n\ndef bump(a):\n    return thing(a) + 1\n"
    (out / "tasks" / repair.id / "oracle" / "stale.py").write_text(stale)
    rows = {r.id: r for r in run.run(out, local_context())}
    task = tasks_of(out)[repair.id]
    assert rows[repair.id].status == "accepted", task.validation.reasons
    assert task.validation.mutants and all(m.path != "stale.py" for m in task.validation.mutants)
    notes = task.validation.evidence.notes
    assert (
        "no mutants in stale.py: the reference cannot load it (it imports .gone, which the "
        "workspace lacks)" in notes
    ), notes
