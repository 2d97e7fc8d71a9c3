"""Test runners: which one a check runs, how it is made to write a per-test report, and how
the report is read.

:func:`runner_for` reads the check command and, for a package script (``npm test``, ``pnpm run
X``, ...), the nearest ``package.json`` (after the command's ``cd`` / ``--prefix``). The report
is asked for through ``PYTEST_ADDOPTS`` (pytest) or ``NODE_OPTIONS`` (node:test, however it is
started), or by flags at the end of the runner's arguments: directly (``npx vitest run``,
``pnpm exec jest``, ``yarn test``, ``bun run test``), after ``--`` for npm, or as ``pnpm run X
FLAGS`` (which pnpm 8-10 all forward; ``pnpm test -- FLAGS`` they do not agree on). Flags reach a
runner only where it ends its script: a script that runs more after it is judged by its exit
code. Node runs get ``--disable-wasm-trap-handler`` (Node >= 20.15): under the local sandbox's
address-space limit WebAssembly cannot reserve its guard pages, and vite loads wasm.
"""

from __future__ import annotations

import json
import posixpath
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import PurePosixPath
from typing import Literal

from trajforge.verifiers.validate.junit import (
    IDENTITIES,
    JUNIT_PATH,
    WORKSPACE,
    TestResult,
    parse_jest,
    parse_junit,
    parse_junit_tree,
    runs_pytest,
)

RunnerName = Literal["pytest", "vitest", "jest", "node-test", "mocha", "bun"]
NODE_BASE = "--disable-wasm-trap-handler"
_OPERATORS = ("&&", "||", ";", "|", "\n")
_MANAGERS = frozenset({"npm", "pnpm", "yarn", "bun"})
_WRAPPERS = frozenset({"env", "cross-env", "time", "nice", "nohup", "command", "exec", "timeout"})
_PREFIX_OPTS = {"npm": ("--prefix", "-C", "-w", "--workspace"), "pnpm": ("-C", "--dir")}
_VALUE_OPTS = {"--filter", "-F", "--loglevel"}  # options whose value is the next word
_RUN = {"run", "run-script", "rum", "urn"}
_TEST = {"test", "t", "tst"}
_NODE_VALUE_OPTS = {"--import", "-r", "--require", "--loader", "--experimental-loader"}
_DEPTH = 4


@dataclass(frozen=True)
class Invocation:
    """What to run so that the check writes its report."""

    command: str
    env: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Placement:
    """Where a flag-driven runner's flags go: the end of one segment of the check command."""

    segment: int
    """Index of the shell segment (split at ``&&``, ``||``, ``;``, ``|``) that runs it."""
    text: str
    """That segment as it runs (pnpm: rewritten to ``pnpm run SCRIPT ARGS``)."""
    dashdash: bool
    """npm: the flags go after a ``--`` (npm passes what follows to the script)."""

    def apply(self, command: str, flags: Sequence[str]) -> str:
        """``command`` with ``flags`` at the end of the runner's segment."""
        segments, seps = split_segments(command)
        old = segments[self.segment]
        lead, tail = old[: len(old) - len(old.lstrip())], old[len(old.rstrip()) :]
        words = [self.text, *(["--"] if self.dashdash else []), *map(shlex.quote, flags)]
        segments[self.segment] = lead + " ".join(words) + tail
        return "".join(s + sep for s, sep in zip(segments, [*seps, ""], strict=True))


@dataclass(frozen=True)
class TestRunner:
    """One test runner: how it is made to write its report, and how the report is read."""

    __test__ = False  # not a pytest test class

    name: RunnerName
    report_path: str
    """The report file in the sandbox (under /tmp, cleared with each reset)."""
    flags: tuple[str, ...] = ()
    """Flags that make it write the report (``{report}``: :attr:`report_path`)."""
    bail: tuple[str, ...] = ()
    """Flags that stop it at the first failure (node:test has none; jest's exits unreported)."""
    env_var: str = ""
    """The variable the flags go in (``PYTEST_ADDOPTS``, ``NODE_OPTIONS``); else appended."""
    placement: Placement | None = None
    """Set by :func:`runner_for` for flag-driven runners."""

    def invocation(self, command: str, stop_early: bool = False) -> Invocation:
        """The check ``command`` (rewritten) and the environment that make it write the report;
        ``stop_early``: stop at the first failure where the runner can."""
        flags = [f.format(report=self.report_path) for f in self.flags]
        flags += self.bail if stop_early else ()
        env = {} if self.name == "pytest" else {"CI": "true"}
        if self.name not in ("pytest", "bun"):
            env["NODE_OPTIONS"] = NODE_BASE
        if self.env_var:
            env[self.env_var] = " ".join([*filter(None, [env.get(self.env_var)]), *flags])
        elif self.placement is not None:
            command = self.placement.apply(command, flags)
        return Invocation(command, env)

    def parse(self, report_text: str, root: str = WORKSPACE) -> tuple[TestResult, ...] | None:
        """Per-test results of the report (files named relative to ``root``); None: no report."""
        if self.name == "pytest":
            return parse_junit(report_text)
        if self.name == "jest":
            return parse_jest(report_text, root)
        return parse_junit_tree(report_text, IDENTITIES[self.name], root)


RUNNERS: dict[RunnerName, TestRunner] = {
    "pytest": TestRunner(
        "pytest",
        JUNIT_PATH,
        ("--junitxml={report}", "-p", "no:cacheprovider"),
        ("-x",),
        "PYTEST_ADDOPTS",
    ),
    "vitest": TestRunner(
        "vitest",
        "/tmp/trajforge-vitest.xml",
        ("--reporter=default", "--reporter=junit", "--outputFile={report}"),
        ("--bail=1",),
    ),
    "jest": TestRunner(
        "jest", "/tmp/trajforge-jest.json", ("--ci", "--json", "--outputFile={report}")
    ),
    "node-test": TestRunner(
        "node-test",
        "/tmp/trajforge-node-test.xml",
        (
            "--test-reporter=junit",
            "--test-reporter-destination={report}",
            "--test-reporter=spec",
            "--test-reporter-destination=stdout",
        ),
        env_var="NODE_OPTIONS",
    ),
    "mocha": TestRunner(
        "mocha",
        "/tmp/trajforge-mocha.xml",
        ("--reporter", "xunit", "--reporter-option", "output={report}"),
        ("--bail",),
    ),
    "bun": TestRunner(
        "bun",
        "/tmp/trajforge-bun.xml",
        ("--reporter=junit", "--reporter-outfile={report}"),
        ("--bail",),
    ),
}
"""Every runner (flags checked with vitest 3.2, jest 30, mocha 11, Node 20.20, bun 1.4)."""


# --- reading the command -----------------------------------------------------------------


def _split(text: str, seps: tuple[str, ...]) -> tuple[list[str], list[str]]:
    """``text`` split at the unquoted ``seps`` (first match wins): (parts, separators)."""
    parts, found, start, i, quote = [], [], 0, 0, ""
    while i < len(text):
        ch = text[i]
        if quote:
            quote = "" if ch == quote else quote
            i += 2 if ch == "\\" and quote == '"' else 1
            continue
        sep = next((s for s in seps if text.startswith(s, i)), None)
        if sep is not None:
            parts.append(text[start:i])
            found.append(sep)
            i = start = i + len(sep)
            continue
        quote = ch if ch in "'\"" else ""
        i += 2 if ch == "\\" else 1
    parts.append(text[start:])
    return parts, found


def split_segments(command: str) -> tuple[list[str], list[str]]:
    """(segments, operators) of a shell command line, split at unquoted ``&&`` ``||`` ``;``
    ``|`` and newlines; the two interleaved give the line back."""
    return _split(command, _OPERATORS)


def _words(segment: str) -> tuple[list[str], list[str]]:
    """(raw, values) of a segment's words: raw keeps quotes and globs for rewriting, values
    are what the shell passes (for reading)."""
    raw = [w for w in _split(segment, (" ", "\t"))[0] if w]
    values = []
    for word in raw:
        try:
            values.append("".join(shlex.split(word)))
        except ValueError:
            values.append(word)
    return raw, values


@dataclass(frozen=True)
class _Call:
    """What one segment runs."""

    kind: Literal["cd", "script", "bin", "other"]
    argv: tuple[str, ...] = ()
    """bin: the program and its arguments; script: the script's name and its arguments."""
    manager: str = ""
    prefix: str = ""
    """cd: the folder; otherwise the ``--prefix`` / ``-C`` / ``--cwd`` folder, if any."""
    at: int = 0
    """Index of the script's name (or the program) among the segment's words."""
    maybe_bin: bool = False
    """``pnpm X`` / ``yarn X`` / ``bun run X``: a script if the package has one, else a program."""
    forwards: bool = True
    """Words appended to the segment reach the script (npm: only after a ``--``)."""


def _call(values: list[str], i: int = 0) -> _Call:
    while i < len(values) and "=" in values[i] and not values[i].startswith("-"):
        i += 1  # FOO=bar assignments
    if i >= len(values):
        return _Call("other")
    head = PurePosixPath(values[i]).name
    if head in _WRAPPERS:  # env, cross-env, time, nice, timeout DURATION: what they run
        i += 1
        while head == "timeout" and i < len(values) and values[i].startswith("-"):
            i += 2 if values[i] in ("-s", "-k", "--signal", "--kill-after") else 1
        return _call(values, i + 1 if head == "timeout" else i)
    if head == "cd":
        return _Call("cd", prefix=values[i + 1] if i + 1 < len(values) else "")
    if head in _MANAGERS:
        return _manager_call(head, values, i)
    if head in ("npx", "bunx"):
        j = i + 1
        while j < len(values) and values[j].startswith("-"):
            j += 2 if values[j] in ("-p", "--package") else 1
        return _Call("bin", tuple(values[j:]), at=j) if j < len(values) else _Call("other")
    return _Call("bin", tuple(values[i:]), at=i)


def _manager_call(manager: str, values: list[str], start: int) -> _Call:
    i, prefix = start + 1, ""
    while i < len(values) and values[i].startswith("-") and values[i] != "--":
        opt, eq, val = values[i].partition("=")
        if opt in (*_PREFIX_OPTS.get(manager, ()), "--cwd") and (eq or i + 1 < len(values)):
            prefix, i = (val, i + 1) if eq else (values[i + 1], i + 2)
            continue
        i += 2 if opt in _VALUE_OPTS and not eq else 1
    sub, rest = (values[i], values[i + 1 :]) if i < len(values) else ("", [])
    if manager == "bun" and sub == "test":
        return _Call("bin", ("bun", *values[i:]), manager, prefix, i)
    if sub in ("exec", "x", "dlx") and rest:
        skip = 1 if rest[0] == "--" else 0
        return _Call("bin", tuple(rest[skip:]), manager, prefix, i + 1 + skip)
    forwards = manager in ("yarn", "bun") or (manager == "pnpm" and sub in _RUN)
    if sub in _TEST:
        forwards = forwards or "--" in rest
        return _Call("script", ("test", *rest), manager, prefix, i, forwards=forwards)
    if sub in _RUN and rest:
        forwards = forwards or "--" in rest[1:]
        return _Call("script", tuple(rest), manager, prefix, i + 1, manager != "npm", forwards)
    if sub and manager != "npm" and not sub.startswith("-"):
        return _Call("script", (sub, *rest), manager, prefix, i, True, forwards)
    return _Call("other")


# --- finding the runner ------------------------------------------------------------------


def _join(cwd: str, folder: str) -> str:
    """``folder`` (a ``cd`` / ``--prefix`` argument) from ``cwd``, relative to the workspace."""
    if folder == WORKSPACE or folder.startswith(WORKSPACE + "/"):
        cwd, folder = "", folder[len(WORKSPACE) :].lstrip("/")
    if folder.startswith(("/", "~", "$", "-")):
        return cwd
    joined = posixpath.normpath(posixpath.join(cwd, folder)) if folder else cwd
    return "" if joined == "." or joined.startswith("..") else joined


def _package(files: Mapping[str, str], cwd: str) -> tuple[str, dict[str, object]]:
    """(folder, contents) of the package.json nearest ``cwd`` (the root's, failing that)."""
    folder = cwd
    while True:
        path = posixpath.join(folder, "package.json") if folder else "package.json"
        if path in files:
            try:
                data = json.loads(files[path])
            except ValueError:
                data = {}
            return folder, data if isinstance(data, dict) else {}
        if not folder:
            return "", {}
        folder = posixpath.dirname(folder)


def _section(package: Mapping[str, object], key: str) -> dict[str, str]:
    value = package.get(key)
    return {k: v for k, v in value.items() if isinstance(v, str)} if isinstance(value, dict) else {}


def _node_test(args: tuple[str, ...]) -> bool:
    """``--test`` among the options of ``node`` / ``tsx`` (before the first file)."""
    i = 0
    while i < len(args) and args[i].startswith("-"):
        if args[i] == "--test":
            return True
        i += 2 if args[i] in _NODE_VALUE_OPTS else 1
    return False


def _program(argv: tuple[str, ...], package: Mapping[str, object]) -> RunnerName | None:
    """The runner a program invocation is."""
    name = PurePosixPath(argv[0]).name if argv else ""
    if name in ("vitest", "jest", "mocha", "_mocha"):
        return "mocha" if name == "_mocha" else name  # type: ignore[return-value]
    if name == "bun" and argv[1:2] == ("test",):
        return "bun"
    if name in ("node", "tsx") and _node_test(argv[1:]):
        return "node-test"
    deps = {**_section(package, "dependencies"), **_section(package, "devDependencies")}
    if name in ("react-scripts", "craco") and argv[1:2] == ("test",) and "react-scripts" in deps:
        return "jest"  # Create React App's jest, which takes jest's flags
    return None


def _resolve(
    call: _Call, files: Mapping[str, str], cwd: str, depth: int
) -> tuple[RunnerName, bool] | None:
    """(runner, whether words appended to the call reach it) of one segment's call."""
    folder, package = _package(files, cwd)
    if call.kind == "bin":
        name = _program(call.argv, package)
        return (name, True) if name else None
    if call.kind != "script" or depth >= _DEPTH:
        return None
    script = _section(package, "scripts").get(call.argv[0])
    if script is None:
        return _resolve(replace(call, kind="bin"), files, cwd, depth) if call.maybe_bin else None
    inner = _find(script, files, folder, depth + 1)
    if len(inner) != 1:
        return None
    name, segment, reaches = inner[0]
    return name, reaches and segment == len(split_segments(script)[0]) - 1


Found = tuple[RunnerName, int, bool]
"""(runner, index of the segment running it, whether words appended to that segment reach it)."""


def _find(command: str, files: Mapping[str, str], cwd: str, depth: int) -> list[Found]:
    """The segments of ``command`` that run a test runner."""
    found: list[Found] = []
    for n, segment in enumerate(split_segments(command)[0]):
        call = _call(_words(segment)[1])
        if call.kind == "cd":
            cwd = _join(cwd, call.prefix)
            continue
        hit = _resolve(call, files, _join(cwd, call.prefix), depth)
        if hit is not None:
            found.append((hit[0], n, hit[1] and (depth == 0 or call.forwards)))
    return found


def _placement(index: int, segment: str) -> Placement:
    """Where the flags go in the segment that runs the runner."""
    raw, values = _words(segment)
    call = _call(values)
    text = " ".join(raw)
    if call.kind == "script" and call.manager == "npm":
        return Placement(index, text, "--" not in call.argv[1:])
    if call.kind == "script" and call.manager == "pnpm":
        head = raw[: call.at] if values[call.at - 1] in _RUN else [*raw[: call.at], "run"]
        rest = raw[call.at + 1 :]
        rest = rest[1:] if rest[:1] == ["--"] else rest
        text = " ".join([*head, shlex.quote(call.argv[0]), *rest])
    return Placement(index, text, False)


def runner_for(command: str, files: Mapping[str, str]) -> TestRunner | None:
    """The runner ``command`` runs in the workspace ``files`` (path → text), ready to give its
    :meth:`~TestRunner.invocation`; None when it runs none (or none its flags can reach, or
    several): the check is then judged by its exit code alone."""
    if runs_pytest(command):
        return RUNNERS["pytest"]
    found = _find(command, files, "", 0)
    if len(found) != 1:
        return None
    name, index, reaches = found[0]
    if name == "node-test" or not reaches:
        return RUNNERS["node-test"] if name == "node-test" else None
    segment = split_segments(command)[0][index]
    return replace(RUNNERS[name], placement=_placement(index, segment))
