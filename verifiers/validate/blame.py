"""Whose fault a failing oracle run is: the task's environment, or the oracle itself.

A check that fails on the completed workspace is no verifier either way, but a person (and the
funnel) must know which: a program or package the check needs that the environment lacks, or a
workspace package that needs a build step first, is the environment's (``environment_*``); a
failing test or a type error in the task's own code is the oracle's (``oracle_fails``). This
reads the runner's own output (its last lines), never a reason trajforge wrote.
"""

from __future__ import annotations

import re

from trajforge.records import Reason

TOOLCHAIN = re.compile(
    r"command not found|: not found$|^sh: \d+: \S+: not found|spawn \S+ ENOENT|"
    r"No such file or directory.*(?:node|npx|bun|python3?|cargo|go)\b|"
    r"npm (?:ERR!|error) (?:could not determine executable|missing script)|Missing script:|"
    r"Fatal process OOM in Failed to reserve virtual memory|Cannot allocate Wasm memory|"
    r"failed to map segment from shared object",
    re.MULTILINE,
)
"""A program, or the script the check names, is not there; or the runtime cannot start within
the sandbox's limits (V8 reserves more address space than the local sandbox's RLIMIT_AS
allows: Node with the tsx loader there — the docker backend caps memory, not address space;
a CUDA build of torch cannot map its libraries under it: trl's tests, raise ``memory_mb``)."""
DEPENDENCY = re.compile(
    r"Cannot find (?:module|package) '(?![./])[^']+'|"
    r"ERR_MODULE_NOT_FOUND.*Cannot find package|"
    r"error TS2307: Cannot find module '(?![./])[^']+'|"
    r"Cannot find type definition file for|"
    r"ModuleNotFoundError: No module named|"
    r"Failed to (?:resolve|load) (?:import|url) \"(?![./])[^\"]+\"",
    re.MULTILINE,
)
"""A package (not one of the task's own files: those are relative) cannot be loaded: not
installed, or a workspace package whose built output (``dist/``) does not exist yet."""


TELLING = re.compile(
    r"error TS\d+|\bError\b|\bERR_|\bFAIL\b|✖|×|Traceback|AssertionError|"
    r"not found|Cannot find|No such file|Missing script",
)
"""Lines of a failed run's output that say why (kept, with the output's last lines)."""
MAX_TELLING = 8


def telling_lines(output: str) -> list[str]:
    """The first distinct lines of ``output`` that say why a run failed (environment problems
    first, then errors), at most :data:`MAX_TELLING`."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    first = [line for line in lines if TOOLCHAIN.search(line) or DEPENDENCY.search(line)]
    found = list(dict.fromkeys([*first, *(line for line in lines if TELLING.search(line))]))
    return [line[:300] for line in found[:MAX_TELLING]]


OWN_FILE = re.compile(
    r"Cannot find module '\.{1,2}/[^']+'|"
    r"Failed to (?:resolve|load) (?:import|url) \"?\.{1,2}/|"
    r"No such file or directory",
)
"""One of the task's own files (a relative import) cannot be loaded."""


def blame(tail: str, missing: int = 0) -> Reason:
    """The closed reason of an oracle run that failed with this output tail; ``missing``: how
    many files the session touched replay could not recover (a load of one of the task's own
    files then fails because the workspace is incomplete, not the oracle)."""
    if TOOLCHAIN.search(tail):
        return Reason.ENVIRONMENT_UNAVAILABLE
    if missing and OWN_FILE.search(tail):
        return Reason.WORKSPACE_INCOMPLETE
    if DEPENDENCY.search(tail):
        return Reason.ENVIRONMENT_BUILD_FAILED
    return Reason.ORACLE_FAILS
