"""A fix made with `sed -i` (content unknown to replay) is reproduced by re-running the command."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from trajforge.reconstruct import pipeline
from trajforge.verifiers.validate import run
from trajforge.verifiers.validate.config import ValidateConfig
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


@pytest.mark.slow
def test_a_check_slower_than_the_limit_is_timed_on_the_reference_and_given_room(
    tmp_path: Path,
) -> None:
    """A repository-wide check can take longer than ``timeout_s`` (pi-mono's ``npm run check``:
    about a minute here, past the default 60 s): the reference's run that timed out is tried
    once with five times the limit, and every later run — the controls, the mutants, verify's —
    is given twice what it took, which the evidence records and a note says. A check that ends
    past even that stays a timeout."""
    from tests.sandbox.conftest import load_backend
    from trajforge.verifiers.validate.config import ValidateConfig
    from trajforge.verifiers.validate.files import read_tree, write_tree
    from trajforge.verifiers.validate.verify import verify_files

    out = tmp_path / "out"
    pipeline.run([FIXTURES / "pi" / "repair.jsonl"], out)
    repair = next(t for t in tasks_of(out).values() if t.family == "repair")
    slow = "import time\n\n\ndef pytest_sessionstart(session):\n    time.sleep(2.5)\n"
    for folder in ("workspace", "oracle"):  # the project's own, unchanged by the fix
        (out / "tasks" / repair.id / folder / "conftest.py").write_text(slow)
    config = ValidateConfig(max_mutants=4, timeout_s=2.0)
    rows = {r.id: r for r in run.run(out, local_context(config))}
    task = tasks_of(out)[repair.id]
    assert rows[repair.id].status == "accepted", task.validation.reasons
    limit = task.validation.evidence.timeout_s
    assert limit is not None and 5.0 <= limit <= 60.0, limit
    assert any(n.endswith(f"every run of it (and verify's) is given {limit:.0f} s")
               for n in task.validation.evidence.notes), task.validation.evidence.notes  # fmt: skip
    task_dir = out / "tasks" / repair.id
    solved = write_tree(tmp_path / "solved", read_tree(task_dir / "oracle"))
    assert verify_files(task_dir, task, solved, load_backend("local"), whole=True).reward == 1.0
    again = tmp_path / "again"
    pipeline.run([FIXTURES / "pi" / "repair.jsonl"], again)
    for folder in ("workspace", "oracle"):
        (again / "tasks" / repair.id / folder / "conftest.py").write_text(slow.replace("2.5", "12"))
    rows = {r.id: r for r in run.run(again, local_context(config))}
    task = tasks_of(again)[repair.id]
    assert rows[repair.id].status == "timeout", task.validation.reasons
    assert "the check ran past 10 s on the reference too" in task.validation.evidence.notes


@pytest.mark.slow
def test_a_control_that_times_out_once_is_run_again_with_room(tmp_path: Path) -> None:
    """A loaded machine can slow a must-fail control past the limit (pi-mono's start control
    under a full suite beside it): a timeout decides nothing, so the control is run once more
    with twice the limit. Here the starting workspace's first run sleeps past the limit and
    its second fails as the bug makes it: the pre-fix control fails, the task is accepted (it
    was ``verdict_unknown``)."""
    out = tmp_path / "out"
    pipeline.run([FIXTURES / "pi" / "repair.jsonl"], out)
    repair = next(t for t in tasks_of(out).values() if t.family == "repair")
    marker = "/tmp/trajforge-slept-once"  # the sandbox session's own /tmp, shared by its runs
    once = (
        "import os\nimport time\n\n\ndef pytest_sessionstart(session):\n"
        f"    if not os.path.exists({marker!r}):\n"
        f"        open({marker!r}, 'w').close()\n        time.sleep(6)\n"
    )
    (out / "tasks" / repair.id / "workspace" / "conftest.py").write_text(once)
    rows = {
        r.id: r for r in run.run(out, local_context(ValidateConfig(max_mutants=2, timeout_s=4.0)))
    }
    task = tasks_of(out)[repair.id]
    assert rows[repair.id].status == "accepted", task.validation.reasons
    assert task.validation.controls["prefix"].result == "fail"


@pytest.mark.slow
def test_mutants_are_given_twice_the_reference_s_time(tmp_path: Path) -> None:
    """pi-mono's ``npm run check`` took 17 s on the reference and its mutants were given
    ``mutant_timeout_s`` (20 s): under load they ran past it and counted as unknown. Every
    mutant is now given twice the reference's slowest run where that is more. Here the
    project's conftest sleeps 2.5 s when the fixed module is the reference's and 4 s when it is
    anything else: with a 4 s limit every mutant timed out; now each is judged."""
    from trajforge.verifiers.validate.files import read_tree

    out = tmp_path / "out"
    pipeline.run([FIXTURES / "pi" / "repair.jsonl"], out)
    repair = next(t for t in tasks_of(out).values() if t.family == "repair")
    task_dir = out / "tasks" / repair.id
    start, oracle = read_tree(task_dir / "workspace"), read_tree(task_dir / "oracle")
    (fixed,) = [p for p, text in oracle.items() if p.endswith(".py") and start.get(p) != text]
    digest = hashlib.sha256(oracle[fixed].encode()).hexdigest()
    slow = (
        "import hashlib\nimport pathlib\nimport time\n\n\ndef pytest_sessionstart(session):\n"
        f"    text = pathlib.Path({fixed!r}).read_bytes()\n"
        f"    time.sleep(2.5 if hashlib.sha256(text).hexdigest() == {digest!r} else 4.0)\n"
    )
    for folder in ("workspace", "oracle"):  # the project's own, unchanged by the fix
        (task_dir / folder / "conftest.py").write_text(slow)
    config = ValidateConfig(max_mutants=3, mutant_timeout_s=4.0, batch_mutants=False)
    rows = {r.id: r for r in run.run(out, local_context(config))}
    task = tasks_of(out)[repair.id]
    assert rows[repair.id].status == "accepted", task.validation.reasons
    summary = task.validation.evidence.mutant_summary
    assert summary is not None and summary.unknown == 0 and summary.killed >= 1, summary
