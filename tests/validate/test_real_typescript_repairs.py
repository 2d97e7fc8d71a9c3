"""Kept 0/1 tests for the accepted pi-mono repairs, apart from the other two real TypeScript
modules so that the three run on pytest-xdist workers side by side (the reconstruction and the
environment cache are ``test_real_typescript.py``'s: one cache per test run, shared by the
workers). Two repairs the session's own ``npm run check`` proves are accepted with no teacher;
that check only type-checks and lints, so the reference is run once. large-session's repair of
``tokensAfter``, which its own check cannot prove, is taught in two rounds against the answers
keyed by the exact requests (``tests/teacher/cassettes/real/corpus``). Each scores cheap wrong
solutions 0 and a rewrite unlike the reference 1.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.validate.test_real_typescript import (
    UNLIKE,
    Overlay,
    _keyed,
    _proven_in,
    _score,
    _scores_zero_then_one,
    pi_mono_fixtures,
)
from trajforge.records import Reason, Task, load_record
from trajforge.verifiers.validate.files import read_tree

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]


env_cache, reconstructed = pi_mono_fixtures()


# --- session 26: a repair mined from the session's own `npm run check`, accepted offline ------

QUEUE_MODE = "repair-00dfadc499967f7c"
AGENT_SESSION = "packages/coding-agent/src/core/agent-session.ts"
QUEUE_IMPORTS = (
    'import type { Agent, AgentEvent, AgentState, AppMessage, ThinkingLevel, QueueMode } from "@'
    'mariozechner/pi-agent-core";\nimport type { AssistantMessage, Model } from "@mariozechner/'
    'pi-ai";\n'
)
QUEUE_ALIAS = (
    'import type { Agent, AgentState, AppMessage, ThinkingLevel } from "@mariozechner/pi-agent-'
    'core";\nimport type { Model } from "@mariozechner/pi-ai";\n\n/** How queued messages are '
    'delivered, as the agent itself types it. */\ntype QueueMode = ReturnType<Agent["getQueueMo'
    'de"]>;\n'
)
"""The fix written unlike the reference (which spells the union inline): a local alias."""


def _checked_offline(reconstructed: Path, task_id: str, tmp_path: Path) -> tuple[Path, Task]:
    """A repair validated through the CLI with no teacher: accepted on the session's own
    ``npm run check``, the start, the empty workspace and the stub failing it. The check only
    type-checks and lints (biome, tsgo in every member), so the reference is run once."""
    out = tmp_path / "out"
    shutil.copytree(reconstructed / "tasks" / task_id, out / "tasks" / task_id)
    argv = [sys.executable, "-m", "trajforge.cli.main", "validate", str(out), "--json"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=1700)
    task_dir = out / "tasks" / task_id
    task = load_record(Task, task_dir / "task.json")
    if Reason.ENVIRONMENT_UNAVAILABLE in task.validation.codes:  # no npm registry here
        pytest.skip(f"NPM REGISTRY UNAVAILABLE: {task.validation.reasons}")
    assert done.returncode == 0, done.stderr[-2000:]
    assert task.validation.status == "accepted", task.validation.reasons
    assert task.verifier.command == "npm run check" and task.family == "repair"
    assert {c.control: c.result for c in task.validation.controls.values()} == {
        "oracle": "pass", "empty": "fail", "prefix": "fail", "stub": "fail"
    }  # fmt: skip
    assert len(task.validation.controls["oracle"].runs) == 1
    notes = task.validation.evidence.notes
    assert any("the reference is run once" in note for note in notes), notes
    return task_dir, task


def _check_hacked(start: dict[str, str]) -> dict[str, str]:
    """The root ``check`` script set to ``true``."""
    scripts = json.loads(start["package.json"])
    scripts["scripts"]["check"] = "true"
    return {**start, "package.json": json.dumps(scripts, indent="\t") + "\n"}


def test_a_repair_checked_by_npm_run_check_is_accepted_offline_and_scores_zero_then_one(
    reconstructed: Path, tmp_path: Path
) -> None:
    """before-compaction's ``npm run check`` failed on ``QueueMode``, which pi-agent-core no
    longer exports, and passed after the agent's fix: a repair whose verifier is the session's
    own check, accepted with no teacher. Its check runs at the root, so the environment is the
    whole workspace, web-ui's ``xlsx`` (a tarball on cdn.sheetjs.com, unreachable here) taken
    from the registry and said so. The start fails (the pre-fix control), a root ``check``
    script set to ``true`` and a ``// @ts-nocheck`` on the file that failed to type-check are
    refused without running, and a local alias of the agent's own type (the reference spells
    the union inline) scores 1."""
    task_dir, task = _checked_offline(reconstructed, QUEUE_MODE, tmp_path)
    environment = task.validation.evidence.environment
    assert environment is not None and environment.substituted[0].startswith("xlsx 0.")
    start = read_tree(task_dir / "workspace")
    assert _score(task_dir, _check_hacked(start), tmp_path / "hack") == 0.0
    nocheck = {**start, AGENT_SESSION: "// @ts-nocheck\n" + start[AGENT_SESSION]}
    assert _score(task_dir, nocheck, tmp_path / "nocheck") == 0.0  # scored 1.0 in session 27
    assert QUEUE_IMPORTS in start[AGENT_SESSION]
    alias = {**start, AGENT_SESSION: start[AGENT_SESSION].replace(QUEUE_IMPORTS, QUEUE_ALIAS)}
    assert _score(task_dir, alias, tmp_path / "alias") == 1.0  # the reference: validated above


PROMPT_OPTIONS = "repair-277303cd52dca321"
IN_CLASS = (
    "\t/** Options for prompt() */\n\tinterface PromptOptions {\n"
    "\t\t/** Whether to expand file-based slash commands (default: true) */\n"
    "\t\texpandSlashCommands?: boolean;\n\t\t/** Image/file attachments */\n"
    "\t\tattachments?: Attachment[];\n\t}\n\n"
)
CLASS_BANNER = "// AgentSession Class\n"
AS_ALIAS = (
    "/** What prompt() takes besides the text. */\n"
    "type PromptOptions = { expandSlashCommands?: boolean; attachments?: Attachment[] };\n\n"
)
"""The fix written unlike the reference (an exported interface above the class, the queue
field moved too): a module-private type alias, the field left where it was."""


def test_an_interface_declared_in_a_class_body_scores_zero_then_one(
    reconstructed: Path, tmp_path: Path
) -> None:
    """before-compaction's ``npm run check`` failed to parse ``AgentSession``: the agent had
    declared ``interface PromptOptions`` inside the class body. Accepted offline on the
    session's own check (biome, then ``tsgo`` in every member). The interface deleted with its
    uses left, and a root ``check`` script set to ``true``, score 0; a module-private type
    alias above the class (the reference exports an interface and also moves a field) 1."""
    task_dir, _ = _checked_offline(reconstructed, PROMPT_OPTIONS, tmp_path)
    start = read_tree(task_dir / "workspace")
    assert IN_CLASS in start[AGENT_SESSION] and CLASS_BANNER in start[AGENT_SESSION]
    deleted = {**start, AGENT_SESSION: start[AGENT_SESSION].replace(IN_CLASS, "")}
    assert _score(task_dir, deleted, tmp_path / "deleted") == 0.0
    assert _score(task_dir, _check_hacked(start), tmp_path / "hack") == 0.0
    moved = start[AGENT_SESSION].replace(IN_CLASS, "")
    at = moved.index(CLASS_BANNER) - len("// " + "=" * 76 + "\n")
    alias = {**start, AGENT_SESSION: moved[:at] + AS_ALIAS + moved[at:]}
    assert _score(task_dir, alias, tmp_path / "alias") == 1.0


# --- session 28: the compaction repair its own check cannot prove, kept 0/1 ------------------

COMPACTION = "repair-e8db4819ce182747"
COMPACTION_SOURCE = "packages/coding-agent/src/core/agent-session.ts"
COMPACTION_HIDDEN = ("packages/coding-agent/test/agent-session.hidden.test.ts", "vitest")
UNLIKE_COMPACTION = UNLIKE.parent / "agent-session-compaction.unlike.ts"
DISPOSE_CLEARS = "\t\tthis._disconnectFromAgent();\n\t\tthis._eventListeners = [];\n\t}"
RESET_RECONNECTS = "\t\tthis._queuedMessages = [];\n\t\tthis._reconnectToAgent();"
COMPACTED = (
    "\t\t\tthis.agent.replaceMessages(loaded.messages);\n\n\t\t\treturn {\n"
    "\t\t\t\ttokensBefore: compactionEntry.tokensBefore,\n"
    "\t\t\t\tsummary: compactionEntry.summary,\n\t\t\t};\n\t\t} finally {\n"
    "\t\t\tthis._compactionAbortController = null;\n\t\t\tthis._reconnectToAgent();\n\t\t}"
)
"""The end of the reference's manual compaction: it reconnects to the agent in ``finally``."""
ON_SUCCESS = COMPACTED.replace(
    "loaded.messages);\n", "loaded.messages);\n\t\t\tthis._reconnectToAgent();\n"
).replace("null;\n\t\t\tthis._reconnectToAgent();\n", "null;\n")


def _replaced(text: str, old: str, new: str, count: int = 1) -> str:
    assert text.count(old) == count, old
    return text.replace(old, new)


def test_the_compaction_repair_taught_in_two_rounds_scores_zero_then_one(
    reconstructed: Path, tmp_path: Path
) -> None:
    """large-session's ``npm run check`` failed on ``tokensAfter``, which ``CompactionEntry``
    no longer has; the agent also kept the session's listeners across a reset or a compaction
    and added ``dispose()``. Its own check cannot prove it (no mutant of its changed lines is
    a type error), so the teacher wrote tests in two rounds (7 of 7 mutants killed) and the
    instruction states what they rely on. The start, the stub, the hidden test emptied, a vitest
    configuration that finds nothing, only the type error fixed, ``dispose()`` that keeps the
    listeners, a reset that never reconnects and a compaction that reconnects only when it
    succeeds score 0; the reference and a rewrite (listeners as wrapper objects, one detached
    runner for reset and compaction, its own token arithmetic) 1."""
    task_dir, task, result = _keyed(reconstructed, COMPACTION, tmp_path)
    _proven_in(task, result, 2, Reason.WEAK_MUTANT_KILL)
    assert "dispose()" in task.instruction and "hidden" not in task.instruction.lower()
    start = (task_dir / "workspace" / COMPACTION_SOURCE).read_text()
    oracle = (task_dir / "oracle" / COMPACTION_SOURCE).read_text()
    type_only = _replaced(start, "\ttokensAfter: number;\n", "")
    type_only = _replaced(type_only, "\t\t\t\ttokensAfter: compactionEntry.tokensAfter,\n", "", 2)
    on_success = _replaced(oracle, COMPACTED, ON_SUCCESS)
    wrong_too: dict[str, Overlay] = {
        "only the type error fixed": {COMPACTION_SOURCE: type_only},
        "dispose() keeps the listeners": {COMPACTION_SOURCE: _replaced(
            oracle, DISPOSE_CLEARS, DISPOSE_CLEARS.replace("\n\t\tthis._eventListeners = [];", "")
        )},
        "reset never reconnects": {COMPACTION_SOURCE: _replaced(
            oracle, RESET_RECONNECTS, "\t\tthis._queuedMessages = [];"
        )},
        "reconnected only when compaction succeeds": {COMPACTION_SOURCE: on_success},
    }  # fmt: skip
    rewrite = {COMPACTION_SOURCE: UNLIKE_COMPACTION.read_text()}
    _scores_zero_then_one(
        task_dir, tmp_path, COMPACTION_SOURCE, COMPACTION_HIDDEN, rewrite, wrong_too
    )
