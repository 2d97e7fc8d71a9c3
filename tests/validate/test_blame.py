"""An oracle run that fails is blamed on the environment or on the oracle, from the runner's
own output; the rejection says which and keeps the output's last lines."""

from __future__ import annotations

import pytest

from trajforge.records import Reason
from trajforge.verifiers.validate.blame import blame
from trajforge.verifiers.validate.junit import RunOutcome
from trajforge.verifiers.validate.junit import TestResult as Case
from trajforge.verifiers.validate.rules import judge_oracle

# Output tails as real checks print them (the first is from pi-mono's own session, where a
# file the agent moved was still imported by its old relative path: the oracle's fault).
TAILS = {
    "src/core/tools/find.ts(8,28): error TS2307: Cannot find module '../shell.js' or its "
    "corresponding type declarations.": Reason.ORACLE_FAILS,
    "src/main.ts(3,21): error TS2307: Cannot find module '@mariozechner/pi-tui' or its "
    "corresponding type declarations.": Reason.ENVIRONMENT_BUILD_FAILED,
    'Error: Failed to resolve import "@mariozechner/pi-ai" from "src/agent.ts". Does the file '
    "exist?": Reason.ENVIRONMENT_BUILD_FAILED,
    "Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'elysia' imported from "
    "/workspace/core/src/index.ts": Reason.ENVIRONMENT_BUILD_FAILED,
    "sh: 1: biome: not found": Reason.ENVIRONMENT_UNAVAILABLE,
    "bash: bun: command not found": Reason.ENVIRONMENT_UNAVAILABLE,
    'npm error Missing script: "check"': Reason.ENVIRONMENT_UNAVAILABLE,
    # node --import tsx --test under the local sandbox's address-space limit (dark-factory core)
    "#\n# Fatal process OOM in Failed to reserve virtual memory for CodeRange\n#": (
        Reason.ENVIRONMENT_UNAVAILABLE
    ),
    # trl's tests importing a CUDA build of torch under the sandbox's 2048 MB address space
    "ImportError while loading conftest '/workspace/tests/conftest.py'.\ntests/conftest.py:20: "
    "in <module>\n    import torch\nE   ImportError: libtorch_cpu.so: failed to map segment "
    "from shared object": Reason.ENVIRONMENT_UNAVAILABLE,
    "src/theme.ts:12:3 lint/style/useConst  FIXABLE  ━━━━━━━\n  × This let declares a "
    "variable that is only assigned once.\nFound 1 error.": Reason.ORACLE_FAILS,
    "FAIL  test/theme.test.ts > theme > loads\nAssertionError: expected 'red' to be 'blue'": (
        Reason.ORACLE_FAILS
    ),
}


@pytest.mark.parametrize("tail", sorted(TAILS))
def test_blame_tells_environment_from_oracle(tail: str) -> None:
    assert blame(tail) == TAILS[tail]


def _failed(detail: str) -> RunOutcome:
    test = Case(name="npm run check", outcome="fail", message="exit 1")
    return RunOutcome(status="fail", exit_code=1, tests=(test,), detail=detail)


def test_a_failing_check_keeps_its_output_and_says_whose_fault() -> None:
    tail = "sh: 1: tsgo: not found"
    found, _, ok = judge_oracle([_failed(tail)], missing=0)
    assert not ok and found[-1].reason == Reason.ENVIRONMENT_UNAVAILABLE
    assert found[-1].detail.startswith("environment_unavailable: oracle run fails: `npm run check`")
    assert found[-1].detail.endswith(tail)
    own = "src/a.ts(1,7): error TS2322: Type 'string' is not assignable to type 'number'."
    found, _, _ = judge_oracle([_failed(own)], missing=0)
    assert found[-1].reason == Reason.ORACLE_FAILS and own in found[-1].detail
    assert found[-1].detail.startswith("oracle fails: `npm run check` exits 1; output ends:")


def test_an_own_file_that_cannot_load_in_an_incomplete_workspace_is_workspace_incomplete() -> None:
    """pi-mono's file-move task (`tools -> core/tools`, …): 41 files its shell moves changed
    could not be recovered, and vitest could not load `./storage.js`. That is the workspace's
    loss, not an oracle that fails (and no teacher round can fix it); with every file
    recovered the same output is the oracle's."""
    tail = (
        "FAIL  test/compaction.hidden.test.ts [ test/compaction.hidden.test.ts ]\n"
        "Error: Cannot find module './storage.js' imported from "
        "'/workspace/packages/coding-agent/src/core/oauth/anthropic.ts'"
    )
    assert blame(tail, missing=41) == Reason.WORKSPACE_INCOMPLETE
    assert blame(tail) == Reason.ORACLE_FAILS
    assert blame("sh: 1: tsgo: not found", missing=3) == (Reason.ENVIRONMENT_UNAVAILABLE)
    found, _, _ = judge_oracle([_failed(tail)], missing=41)
    assert found[-1].reason == Reason.WORKSPACE_INCOMPLETE
    assert "41 files the session touched could not be recovered" in found[-1].detail
