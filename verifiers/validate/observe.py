"""Calls into the task's code and what the code does on them (Python tasks).

Inputs come from three places: the hidden tests (every call they make into a module-level
function of the task's changed files, recorded while the check runs on the oracle), the
instruction's examples and the session's own commands (``slugify("Hello, World!")`` written
out, read by :mod:`.inputs`). Observing a file set calls every input in one sandboxed process
(``_observe_runner.py``) and returns, per input, what came back or was raised, what was printed
and whether the arguments changed; on the oracle also which of its lines the calls executed.
"""

from __future__ import annotations

import ast
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import count
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from trajforge.verifiers.validate.files import layered

if TYPE_CHECKING:
    from trajforge.verifiers.validate.matrix import ControlRunner

log = logging.getLogger(__name__)

OBSERVE_RUNNER = Path(__file__).with_name("_observe_runner.py")
TOOL_DIR = ".trajforge-observe"
RECORD_OUT = "/tmp/trajforge-observe-record"
PER_CALL_S = 5.0
"""Wall-clock limit of one observed call (a mutant's endless loop ends there, as a timeout)."""
SITECUSTOMIZE = """import os

_plan = os.environ.get("TRAJFORGE_OBSERVE")
if _plan:
    try:
        import trajforge_observe

        trajforge_observe.install(_plan)
    except Exception:
        pass
"""

Source = Literal["mined", "instruction", "session"]
Observation = dict[str, Any]
"""One input's outcome as the runner wrote it (status, type, repr, value, stdout, …)."""
_RESULT_IDS = count(1)


@dataclass(frozen=True)
class CallInput:
    """One call of a module-level function with literal arguments."""

    file: str
    """Workspace path of the file defining the function."""
    function: str
    """Function name."""
    args: str
    """repr of the positional arguments (a tuple)."""
    kwargs: str
    """repr of the keyword arguments (a dict)."""
    source: Source
    """Where the call came from."""
    origin: str
    """The test that made it, ``instruction``, or the session command that contains it."""
    module: str | None = None
    """Module the call reaches the function through, when known."""

    @property
    def key(self) -> tuple[str, str, str, str]:
        """Identity of the call (the same call from two sources is one input)."""
        return (self.file, self.function, self.args, self.kwargs)

    def text(self) -> str:
        """The call as code: ``top_words('y x y x z', 1)``."""
        parts = [repr(a) for a in ast.literal_eval(self.args)]
        parts += [f"{k}={v!r}" for k, v in ast.literal_eval(self.kwargs).items()]
        return f"{self.function}({', '.join(parts)})"


@dataclass
class Observed:
    """What one file set did on every input."""

    results: dict[int, Observation] = field(default_factory=dict)
    """Input index → observation."""
    lines: set[tuple[str, int]] = field(default_factory=set)
    """(path, line) of the target files the calls executed (traced runs only)."""


def _runner_text() -> str:
    return OBSERVE_RUNNER.read_text(encoding="utf-8")


def _root(runner: ControlRunner) -> str:
    return runner.box.run(["pwd"], timeout=30).stdout.strip()


def record(
    runner: ControlRunner, files: dict[str, str], targets: Sequence[str], timeout: float
) -> tuple[list[CallInput], list[str]]:
    """Calls the check makes into ``targets`` on ``files`` (oracle + hidden tests), and the
    workspace folders its Python processes had on ``sys.path``."""
    runner.reset(files)
    root = _root(runner)
    plan = {"root": root, "targets": list(targets), "out": RECORD_OUT}
    tools = {
        f"{TOOL_DIR}/trajforge_observe.py": _runner_text(),
        f"{TOOL_DIR}/sitecustomize.py": SITECUSTOMIZE,
        f"{TOOL_DIR}/record.json": json.dumps(plan),
    }
    runner.reset(layered(files, tools))
    runner.box.run(["rm", "-rf", RECORD_OUT], timeout=30)
    env = {
        "PYTHONPATH": f"{root}/{TOOL_DIR}",
        "TRAJFORGE_OBSERVE": f"{root}/{TOOL_DIR}/record.json",
    }
    runner.box.run(runner.command, timeout=timeout, env=env)
    argv = ["python3", f"{TOOL_DIR}/trajforge_observe.py", "collect", RECORD_OUT]
    fetched = runner.box.run(argv, timeout=60)
    try:
        doc = json.loads(fetched.stdout)
    except json.JSONDecodeError:
        log.info("recording calls failed: %s", fetched.stderr[-300:])
        return [], []
    calls = [
        CallInput(
            c["file"], c["function"], c["args"], c["kwargs"], "mined", c["origin"], c["module"]
        )
        for c in doc["calls"]
    ]
    return calls, list(doc["paths"])


def observe(
    runner: ControlRunner,
    files: dict[str, str],
    inputs: Sequence[CallInput],
    where: tuple[str, Sequence[str], Sequence[str]],
    trace: bool = False,
) -> Observed | None:
    """Every input called on ``files``; None when the runner itself failed.

    ``where``: (cwd the check runs in, workspace folders on its ``sys.path``, target files).
    """
    cwd, paths, targets = where
    results = f"/tmp/trajforge-observe-{next(_RESULT_IDS)}.json"
    fields = ("file", "function", "args", "kwargs", "module")
    items = [{"id": str(n), **{f: getattr(i, f) for f in fields}} for n, i in enumerate(inputs)]
    plan = {
        "cwd": cwd,
        "paths": list(paths),
        "targets": list(targets),
        "inputs": items,
        "trace": trace,
        "timeout": PER_CALL_S,
        "results": results,
    }
    tools = {
        f"{TOOL_DIR}/trajforge_observe.py": _runner_text(),
        f"{TOOL_DIR}/observe.json": json.dumps(plan),
    }
    runner.reset(layered(files, tools))
    argv = ["python3", f"{TOOL_DIR}/trajforge_observe.py", "observe", f"{TOOL_DIR}/observe.json"]
    ran = runner.box.run(argv, timeout=PER_CALL_S * len(items) + 30)
    fetched = runner.box.run(["cat", results], timeout=30)
    try:
        doc = json.loads(fetched.stdout)
    except json.JSONDecodeError:
        log.info("observing failed (exit %s): %s", ran.exit_code, ran.stderr[-300:])
        return None
    found = {int(k): v for k, v in doc["results"].items()}
    return Observed(found, {(p, int(n)) for p, n in doc["lines"]})
