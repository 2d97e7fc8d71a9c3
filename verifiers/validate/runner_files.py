"""What a solution may not bring to its own check: the check's files come from the task.

A check runs the solution's code inside the test runner's process and reads the runner's
configuration from the workspace, so a solution could otherwise decide its own reward: its own
version of the task's tests (same names, empty bodies), a ``conftest.py`` hook that marks
failures passed, ``addopts`` that deselect them, a ``sitecustomize`` or a module shadowing
``pytest``, an npm ``test`` script that exits 0, a module that ends the process as it loads
(``tests/validate/test_solution_hacks.py`` tries each against accepted tasks). At the reward
boundary (``verify``, training, eval):

- **tests** (test files, the hidden tests) are the task's — hidden, else the oracle's, else
  the workspace's; the solution's versions are set aside and listed;
- **start-up files** (``sitecustomize.py``, ``*.pth``, ``pytest.py``, ``_pytest/``, ...) are
  never the solution's;
- **runner configuration** (``conftest.py``, ``pytest.ini``, ``pyproject.toml``,
  ``package.json``, ``jest.config.*``, ``Makefile``, the scripts the check command names) is
  the solution's, but where it differs from both the task's start and its oracle it must not
  newly reach into the runner (the check scores 0 without running, and says what it found);
- **source files** likewise must not newly reach into the runner: ``_pytest``, ``PYTEST_*``,
  the JUnit report, ``TestReport``, hook names, the JS runners' marks (``process.env.VITEST``,
  ``JEST_WORKER_ID``), exiting the process at import;
- **documentation, configuration and data** that is not the runner's (``theme.json``, a
  fixture ``.csv``, ``README.md``) and that the reference left as the start had it is the
  task's: the solution's version is set aside (a file the reference changed stays the
  solution's, as does a new one);
- where the check runs a **type checker or linter** (``npm run check`` → ``tsgo``), a comment
  that silences it (``// @ts-nocheck``) is tampering, and its settings files (``tsconfig.json``,
  ``eslint.config.js``, new ones too) are the task's unless the reference changed them;
- **caches** (``__pycache__``, ``.pytest_cache``, ``node_modules``, ...) are left out.
"""

from __future__ import annotations

import functools
import re
import shlex
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Literal

import orjson

from trajforge.reconstruct.changed_files import is_source, is_test_file

RunnerKind = Literal["test", "startup", "config", "script", "source"]
STARTUP_PACKAGES = frozenset({"pytest", "_pytest", "pluggy"})
"""Top-level modules that shadow the runner's own (``python -m`` puts the workspace first on
``sys.path``): ``pytest.py`` or ``pytest/...`` at the root. (``py.py`` too, pytest's shim of
the old ``py`` library; a ``py/`` folder is a common home for a project's Python code.)"""
STARTUP_NAMES = frozenset(
    {"sitecustomize.py", "usercustomize.py", "py.py", *(f"{n}.py" for n in STARTUP_PACKAGES)}
)
CONFIG_NAMES = frozenset(
    {
        "conftest.py", "pytest.ini", ".pytest.ini", "tox.ini", "setup.cfg", "pyproject.toml",
        "package.json", ".mocharc.js", ".mocharc.cjs", ".mocharc.json", ".mocharc.yml",
        ".babelrc", "karma.conf.js", "Cargo.toml",
    }
)  # fmt: skip
CONFIG_STEMS = ("jest.config.", "vitest.config.", "vite.config.", "babel.config.")
SCRIPT_NAMES = frozenset({"Makefile", "makefile", "GNUmakefile"})
"""Read as the check's program when it is ``make ...``: any change is the check's own."""
REACHES = re.compile(
    r"\b_pytest\b|\bPYTEST_[A-Z_]+|junit|\bTestReport\b|\bhookimpl\b|\btrajforge\b"
    r"|\bpytest_(?:runtest|collect|sessionfinish|report|terminal|configure|pyfunc|make)\w*"
    r"|(?m:^(?:os\._exit|sys\.exit|exit|quit|process\.(?:exit|reallyExit|abort))\s*\("
    r"|^raise\s+SystemExit\b)",
    re.IGNORECASE,
)
"""What a file has no reason to say unless it tampers with the check: the runner's internals,
its environment and report, or ending the process as the module loads (an exit at top level;
one in a function or under ``if __name__ == "__main__":`` is indented, as a CLI's is)."""
JS_RUNNER = re.compile(
    r"\bprocess\.env\.(?:VITEST\w*|JEST_WORKER_ID|NODE_TEST_CONTEXT)\b"
    r"|\bprocess\.env\[[\"'](?:VITEST\w*|JEST_WORKER_ID|NODE_TEST_CONTEXT)[\"']\]"
    r"|\bimport\.meta\.vitest\b|\b__vitest_\w+|\bBun\.jest\b"
)
"""The JS test runners' own marks, read by code that behaves otherwise under test (vitest's
``VITEST`` / ``VITEST_WORKER_ID``, jest's ``JEST_WORKER_ID``, ``node --test``'s
``NODE_TEST_CONTEXT``, vitest's in-source ``import.meta.vitest`` and its worker globals): the
``PYTEST_*`` of :data:`REACHES` for TypeScript and JavaScript (case-sensitive: ``vitest`` alone
is a package name)."""
CONFIG_KEYS = re.compile(
    r"(?m)^\s*(?:addopts|python_files|python_classes|python_functions|testpaths|norecursedirs"
    r"|required_plugins)\s*[=:]|^\s*(?:harness|test)\s*=\s*false\b|(?<![\w-])-p\s+[\w:.-]+"
    r"|--deselect|--ignore\b"
)
"""Settings that change which tests run or how (pytest ``addopts``, Cargo ``test = false``)."""
KEYED_CONFIG = frozenset(
    {"pytest.ini", ".pytest.ini", "tox.ini", "setup.cfg", "pyproject.toml", "Cargo.toml"}
)
"""The configuration files :data:`CONFIG_KEYS` is read in."""
CHECKERS = re.compile(
    r"(?<![\w-])(?:tsc|tsgo|vue-tsc|svelte-check|biome|eslint|oxlint|mypy|pyright|basedpyright"
    r"|ruff|flake8|pylint)(?![\w-])"
)
"""Type checkers and linters: a check that runs one (itself or through the scripts it names)
reads what suppresses their findings."""
SUPPRESSIONS = re.compile(
    r"@ts-(?:nocheck|ignore|expect-error)\b|\b(?:eslint|oxlint)-disable|\bbiome-ignore\b"
    r"|#\s*type:\s*ignore|#\s*(?:ruff:\s*)?noqa\b|#\s*mypy:\s*ignore-errors"
    r"|#\s*(?:pyright|pylint):\s*(?:ignore|disable|basic)|\bdeno-lint-ignore"
)
"""Comments that silence a type checker or linter (``// @ts-nocheck``, ``# type: ignore``)."""
CHECKER_CONFIG = re.compile(
    r"^(?:tsconfig(?:\.[\w-]+)?\.json|jsconfig\.json|biome\.jsonc?|\.eslintrc(?:\.\w+)?"
    r"|eslint\.config\.\w+|\.oxlintrc\.json|\.?mypy\.ini|\.?ruff\.toml|pyrightconfig\.json"
    r"|\.flake8|\.pylintrc|deno\.jsonc?)$"
)
"""What a type checker or linter reads its settings from (one in a sub-folder applies there)."""
NODE_TEST_KEYS = ("pretest", "test", "posttest")
CACHE_PARTS = frozenset(
    {"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", "node_modules", ".git"}
)
"""What running the code leaves behind (pytest's rewritten ``.pyc`` files name ``_pytest``):
never the solution's; the check makes its own, the task's environment supplies packages."""


@dataclass(frozen=True)
class TaskView:
    """The file sets of a task the check's files come from."""

    start: Mapping[str, str]
    """The starting workspace."""
    oracle: Mapping[str, str]
    """The oracle's files (empty for a task without one)."""
    hidden: Mapping[str, str]
    """The hidden tests laid over every run."""
    command: str
    """The check command (scripts it names are the check's own)."""

    @functools.cached_property
    def checked(self) -> bool:
        """The check runs a type checker or linter, itself or through the scripts it names."""
        manifests = [*_manifests(self.start), *_manifests(self.oracle)]
        bodies = [body for _, body in _check_scripts(self.command, manifests)]
        return any(CHECKERS.search(text) for text in (self.command, *bodies))


@dataclass(frozen=True)
class Screened:
    """A solution laid over its task, as its check may run it."""

    files: dict[str, str]
    """The workspace the check runs on."""
    set_aside: tuple[str, ...]
    """Solution files that are tests, start-up files or fixtures the reference left alone and
    differ from the task's: the task's version ran (or none, where the task has none)."""
    tampering: tuple[str, ...]
    """``path: what it says`` for each solution file that newly reaches into the runner: the
    check must not run."""


def runner_kind(path: str, command: str) -> RunnerKind:
    """What ``path`` is to the check."""
    parts = PurePosixPath(path).parts or (path,)
    name = parts[-1]
    if is_test_file(path):
        return "test"
    top = name if len(parts) == 1 else parts[0]
    if name in STARTUP_NAMES or name.endswith(".pth") or top in STARTUP_PACKAGES:
        return "startup"
    if name in SCRIPT_NAMES or path in _command_files(command):
        return "script"
    if name in CONFIG_NAMES or name.startswith(CONFIG_STEMS):
        return "config"
    return "source"


def screen(task: TaskView, solution: Mapping[str, str], whole: bool = False) -> Screened:
    """``solution`` over the task's start, with the task's tests and start-up files on top.
    ``whole``: the solution is the entire final workspace (a rollout's), so a file of the
    start it lacks was deleted — unless the file is the task's (a test, a start-up file, a
    fixture the reference left alone), which a solution cannot take away."""
    owned = {**task.start, **task.oracle, **task.hidden}
    files = dict(task.start)
    for path in [p for p in task.start if whole and p not in solution]:
        if not _tasks_own(task, path, runner_kind(path, task.command)):
            del files[path]
    set_aside, tampering = [], []
    for path, text in sorted(solution.items()):
        if _cache(path):
            continue
        kind = "test" if path in task.hidden else runner_kind(path, task.command)
        if _tasks_own(task, path, kind):
            if owned.get(path) != text:
                set_aside.append(path)
            continue
        files[path] = text
        before = [t for t in (task.start.get(path), task.oracle.get(path)) if t is not None]
        if text in before:
            continue
        if said := _tampers(kind, path, text, before, task.command, task.checked):
            tampering.append(f"{path}: {said}")
    for path, text in owned.items():
        if path in task.hidden or runner_kind(path, task.command) in ("test", "startup"):
            files[path] = text
    return Screened(files, tuple(set_aside), tuple(tampering))


def _tasks_own(task: TaskView, path: str, kind: RunnerKind) -> bool:
    """A test, a start-up file or a fixture the reference left alone: what the task, not the
    solution, decides (laid from the task, never taken away)."""
    start, oracle = task.start.get(path), task.oracle.get(path)
    if task.checked and CHECKER_CONFIG.match(PurePosixPath(path).name) and start == oracle:
        return True  # a checker's settings the reference left alone (or never had)
    return kind in ("test", "startup") or is_fixture(path, kind, start, oracle)


def is_fixture(path: str, kind: RunnerKind, start: str | None, oracle: str | None) -> bool:
    """Documentation, configuration or data (what triage calls no coding work, not the
    runner's own configuration: ``kind`` is ``source``) that the reference left as the start
    had it (``start``, ``oracle``: its texts there, None where absent): the task's. A solution
    that recolours a theme file its task says to leave alone, to pass tests that read the
    colour through it, is judged on its code. Harbor's test.sh lays the same files."""
    return kind == "source" and not is_source(path) and start is not None and start == oracle


def _tampers(
    kind: RunnerKind, path: str, text: str, before: list[str], command: str, checked: bool
) -> str | None:
    """What a changed file newly says that reaches into the check (None: nothing); where the
    check runs a type checker or linter (``checked``), also a comment that silences it."""
    if kind == "script":
        return "the check's own script changed"
    if checked and (silenced := _silences(text, before)):
        return f"silences the type checker or linter ({silenced})"
    name = PurePosixPath(path).name
    keyed = kind == "config" and name in KEYED_CONFIG
    said = _found(REACHES, text) | _found(JS_RUNNER, text)
    said |= _found(CONFIG_KEYS, text) if keyed else set()
    for old in before:
        said -= _found(REACHES, old) | _found(JS_RUNNER, old) | _found(CONFIG_KEYS, old)
    if name == "package.json":
        olds = before or ["{}"]  # a new package.json: against one without scripts
        names = _scripts_run(command, before)
        changed = [k for k in names if all(_script(text, k) != _script(o, k) for o in olds)]
        if changed:  # ``npm test`` / ``npm run check``: the scripts the check runs
            tests = all(k in NODE_TEST_KEYS for k in changed)
            said.add('the "test" scripts' if tests else f'the "{changed[0]}" script')
    return ", ".join(sorted(said)) or None


_RUNS_SCRIPT = re.compile(
    r"\b(?:(?:npm|pnpm|yarn|bun)\s+(?:run(?:-script)?\s+)?(?:--?[\w-]+(?:=\S+)?\s+)*"
    r"(?P<name>[\w:.@/-]+))"
)
"""A script run by name: ``npm run check``, ``pnpm run lint``, ``yarn typecheck``."""


_SEGMENT = re.compile(r"&&|\|\||[;|\n]")
_ASSIGNMENT = re.compile(r"^[A-Za-z_]\w*=")
_RUNS_BY_NAME = frozenset({"npm", "pnpm", "yarn", "bun"})


def only_checks(command: str, files: Mapping[str, str]) -> bool:
    """Every program the check runs, itself or through the package.json scripts it names (in
    any of ``files``' manifests), is a type checker or linter (``npm run check`` → ``biome
    check . && tsgo --noEmit``): it reads the files and runs none of them, so it answers the
    same on the same files. Scripts run by name are followed and ``cd`` is allowed; anything
    else (a test runner, ``node``, ``make``, ``npm install``) is not a checker."""
    named = _check_scripts(command, _manifests(files))
    scripts, bodies = frozenset(n for n, _ in named), [b for _, b in named]
    return all(
        _checker_words(_words(part), scripts)
        for text in (command, *bodies)
        for part in _SEGMENT.split(text)
    )


def _manifests(files: Mapping[str, str]) -> list[str]:
    """The texts of ``files``' package.json manifests."""
    return [text for path, text in files.items() if PurePosixPath(path).name == "package.json"]


def _check_scripts(command: str, manifests: list[str]) -> list[tuple[str, str]]:
    """Each package.json script the check runs by name (and those they run), with its body, in
    every one of ``manifests`` that has it (``npm run check`` → the root's and each member's
    ``check``)."""
    names = _scripts_run(command, manifests, tests=False)
    return [(n, b) for t in manifests for n in names if isinstance(b := _script(t, n), str)]


def _words(part: str) -> list[str] | None:
    """A simple command's words, its leading variable assignments left out (None: unparsable)."""
    try:
        words = shlex.split(part)
    except ValueError:
        return None
    while words and _ASSIGNMENT.match(words[0]):
        words = words[1:]
    return words


def _checker_words(words: list[str] | None, scripts: frozenset[str]) -> bool:
    """One simple command runs a checker (also through ``npx``, ``pnpm exec``, ``python -m``),
    changes folder, or runs a script by name (``scripts``: those with a body, read on their
    own)."""
    if words is None:
        return False
    if not words:
        return True
    program, args = PurePosixPath(words[0]).name, words[1:]
    if program in ("npx", "bunx"):
        return _checker_words([a for a in args if not a.startswith("-")][:1], scripts)
    if re.fullmatch(r"python[\d.]*", program) and args[:1] == ["-m"]:
        return _checker_words(args[1:], scripts)
    if program in _RUNS_BY_NAME:
        if args[:1] in (["exec"], ["dlx"]):
            return _checker_words(args[1:], scripts)
        sub = [a for a in args if not a.startswith("-")]
        if sub[:1] in (["run"], ["run-script"]):
            return True
        return program != "npm" and bool(sub) and sub[0] in scripts  # ``yarn typecheck``
    return program == "cd" or CHECKERS.fullmatch(program) is not None


def _silences(text: str, before: list[str]) -> str | None:
    """The first suppression comment ``text`` has more of than every earlier version had."""
    counts = Counter(_found_all(text))
    olds = [Counter(_found_all(old)) for old in before]
    more = [k for k, n in counts.items() if all(n > old[k] for old in olds)]
    return more[0] if more else None


def _found_all(text: str) -> list[str]:
    return [" ".join(m.group(0).split()).lower() for m in SUPPRESSIONS.finditer(text)]


def _scripts_run(command: str, manifests: list[str], tests: bool = True) -> tuple[str, ...]:
    """The package.json scripts the check runs: ``test`` and its pre / post (``tests``: always,
    as ``npm test`` is the default runner), the scripts the command names (``npm run check``),
    and those these run in turn in ``manifests``' scripts (``"check": "biome check . && npm
    run typecheck"``), each with its pre / post."""
    wanted = [*NODE_TEST_KEYS] if tests else []
    queue = [m.group("name") for m in _RUNS_SCRIPT.finditer(command)]
    while queue:
        name = queue.pop()
        if name in wanted:
            continue
        wanted += [name, f"pre{name}", f"post{name}"]
        for text in manifests:
            body = _script(text, name)
            if isinstance(body, str):
                queue += [m.group("name") for m in _RUNS_SCRIPT.finditer(body)]
    return tuple(dict.fromkeys(wanted))


def _cache(path: str) -> bool:
    parts = PurePosixPath(path).parts
    return path.endswith((".pyc", ".pyo")) or any(part in CACHE_PARTS for part in parts)


def _found(pattern: re.Pattern[str], text: str) -> set[str]:
    return {" ".join(m.group(0).split()).lower() for m in pattern.finditer(text)}


def _script(text: str, name: str) -> object:
    """The ``name`` script of a ``package.json`` (None: none; unreadable: the text itself)."""
    try:
        scripts = orjson.loads(text).get("scripts") or {}
    except (orjson.JSONDecodeError, AttributeError):
        return text
    return scripts.get(name) if isinstance(scripts, dict) else text


@functools.lru_cache(maxsize=64)
def _command_files(command: str) -> frozenset[str]:
    """Workspace paths the check command names (``bash run_tests.sh``, ``./test.sh``): split
    once per command, not once per file :func:`runner_kind` is asked about."""
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    named = (w.removeprefix("./") for w in words if "." in w or "/" in w)
    return frozenset(w for w in named if not w.startswith("-"))
