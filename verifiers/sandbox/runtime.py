"""The task runtime: what verifiers need inside the sandbox, checked once before any task.

Hidden tests of Python tasks run ``python3 -m pytest`` with a JUnit report; data-analysis
oracles import polars. Both are dependencies of trajforge's base install, so on the ``local``
backend the interpreter trajforge runs from (exposed read-only wherever it lives) has them; the
``docker`` image bakes them in. When one is missing every task would "fail" for a reason that
has nothing to do with it, so :func:`check_runtime` stops the run first with one message
naming the missing piece and the fix.
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path

from trajforge.errors import TaskEnvironmentError
from trajforge.protocols import Limits, Sandbox
from trajforge.records import ANSWER_FAMILIES

PROBES: dict[str, str] = {
    "pytest": (
        "import pytest, subprocess, sys\n"
        "open('test_probe.py', 'w').write('def test_ok():\\n    assert True\\n')\n"
        "rc = subprocess.call([sys.executable, '-m', 'pytest', '-q', '-p', 'no:cacheprovider',"
        " '--junitxml=/tmp/probe.xml', 'test_probe.py'], stdout=subprocess.DEVNULL)\n"
        "assert rc == 0 and open('/tmp/probe.xml').read().count('<testcase') == 1, rc\n"
    ),
    "polars": "import polars\npolars.DataFrame({'a': [1]}).select(polars.col('a').sum())\n",
}
"""What each need must do inside the sandbox: pytest runs a test and writes its JUnit report;
polars imports and runs a query."""
PROBE_TIMEOUT_S = 120.0


def needs_of(families: Iterable[str]) -> tuple[str, ...]:
    """Runtime pieces the given task families need (code tasks: pytest; data: polars)."""
    found = set(families)
    needs = []
    if found - set(ANSWER_FAMILIES):
        needs.append("pytest")
    if "data" in found:
        needs.append("polars")
    return tuple(needs)


def _fix(backend: str, need: str) -> str:
    if backend == "docker":
        return "rebuild the sandbox image: trajforge sandbox build-image"
    return (
        f"install it into the interpreter trajforge runs from: {sys.executable} -m pip install "
        f"{need} (it is a dependency of trajforge; reinstall with pip install -e .)"
    )


def check_runtime(sandbox: Sandbox, backend: str, needs: Iterable[str]) -> None:
    """Run each probe in a throwaway session; TaskEnvironmentError naming what is missing."""
    wanted = [n for n in needs if n in PROBES]
    if not wanted:
        return
    with (
        tempfile.TemporaryDirectory(prefix="trajforge-runtime-") as tmp,
        sandbox.session(Path(tmp), Limits(timeout_s=PROBE_TIMEOUT_S)) as session,
    ):
        for need in wanted:
            result = session.run(["python3", "-c", PROBES[need]], timeout=PROBE_TIMEOUT_S)
            if result.exit_code == 0:
                continue
            lines = (result.stderr or result.stdout).strip().splitlines()
            detail = lines[-1] if lines else f"exit {result.exit_code}"
            raise TaskEnvironmentError(
                f"the {backend} sandbox cannot run {need} ({detail}), which task verifiers "
                f"need; no task was judged. Fix: {_fix(backend, need)}"
            )
