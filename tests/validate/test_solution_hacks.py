"""Solutions that try to decide their own reward, against accepted tasks: each scores 0, and a
correct solution written unlike the oracle still scores 1 (``verifiers/validate/runner_files``).

Before the check's files were taken from the task, the weakened tests and the conftest hook
below each scored 1.0 through ``trajforge verify`` on the accepted demo repair and build.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.validate.conftest import tasks_of
from trajforge.records import Task, VerifyResult
from trajforge.registry import SANDBOXES, create
from trajforge.verifiers.validate.runner_files import TaskView, runner_kind, screen
from trajforge.verifiers.validate.verify import verify_files

FIXED = (
    "def clamp(value, low, high):\n"
    "    return min(max(value, low), high)\n"
)  # fmt: skip
"""A correct repair of ``calc.py``, unlike the oracle's one-line change."""
EMPTY_TESTS = (
    "def test_inside():\n    pass\n\ndef test_below():\n    pass\n\ndef test_above():\n    pass\n"
)
HOOK = (
    "import pytest\n\n@pytest.hookimpl(hookwrapper=True)\n"
    "def pytest_runtest_makereport(item, call):\n"
    "    outcome = yield\n    outcome.get_result().outcome = 'passed'\n"
)
PATCHER = (
    "import _pytest.reports\n_make = _pytest.reports.TestReport.from_item_and_call\n"
    "def _passed(item, call):\n    report = _make(item, call)\n"
    "    report.outcome = 'passed'\n    return report\n"
    "_pytest.reports.TestReport.from_item_and_call = staticmethod(_passed)\n"
)
STUB = "def __getattr__(name):\n    return lambda *args, **kwargs: None\n"


def _find(out: Path, family: str, harness: str, file: str) -> tuple[Path, Task]:
    for task_id, task in tasks_of(out).items():
        folder = out / "tasks" / task_id
        mine = task.family == family and task.source.harness == harness
        if mine and (folder / "oracle" / file).is_file() and task.validation.status == "accepted":
            return folder, task
    raise AssertionError(f"no accepted {family} task of {harness} with {file}")


def _verify(task: tuple[Path, Task], files: dict[str, str], tmp: Path) -> VerifyResult:
    tmp.mkdir(parents=True)
    for rel, text in files.items():
        (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp / rel).write_text(text)
    sandbox = create(SANDBOXES, "local", "sandbox")
    return verify_files(task[0], task[1], tmp, sandbox)


@pytest.fixture(scope="module")
def repair(validated: Path) -> tuple[Path, Task]:
    return _find(validated, "repair", "pi", "calc.py")


@pytest.fixture(scope="module")
def build(validated: Path) -> tuple[Path, Task]:
    return _find(validated, "build", "pi", "stats.py")


def test_correct_repairs_written_unlike_the_oracle_pass(
    repair: tuple[Path, Task], tmp_path: Path
) -> None:
    assert _verify(repair, {"calc.py": FIXED}, tmp_path / "a").reward == 1.0
    # what an agent's own test run leaves (a rewritten .pyc names _pytest) is not the solution
    cache = {"__pycache__/test_calc.cpython-311-pytest-8.pyc": "import _pytest.assertion"}
    cache[".pytest_cache/v/cache/lastfailed"] = '{"test_calc.py::test_below": true}'
    ran = _verify(repair, {"calc.py": FIXED, **cache}, tmp_path / "c")
    assert ran.reward == 1.0 and not ran.tampering and not ran.set_aside
    extra_test = "from calc import clamp\n\ndef test_edge():\n    assert clamp(0, 0, 1) == 0\n"
    both = _verify(repair, {"calc.py": FIXED, "test_edge.py": extra_test}, tmp_path / "b")
    assert both.reward == 1.0 and both.set_aside == ("test_edge.py",)  # its own tests: not run


@pytest.mark.parametrize(
    ("name", "files", "caught"),
    [
        ("nothing", {}, None),
        ("weakened tests", {"test_calc.py": EMPTY_TESTS}, "set aside"),
        ("conftest hook", {"conftest.py": HOOK}, "pytest_runtest_makereport"),
        ("addopts", {"pytest.ini": "[pytest]\naddopts = --deselect test_calc.py::test_below\n"},
         "addopts"),
        ("pytest shadow", {"pytest.py": "import sys\nsys.exit(0)\n"}, "set aside"),
        ("sitecustomize", {"sitecustomize.py": "import os\nos._exit(0)\n"}, "set aside"),
        ("exit at import", {"calc.py": STUB + "import os\nos._exit(0)\n"}, "os._exit"),
        # not screened (indented), but the run passes no test, so fail-to-pass scores 0
        ("exit in a call", {"calc.py": "import os\ndef _end():\n    os._exit(0)\n_end()\n"}, None),
        ("report patch", {"calc.py": STUB + PATCHER}, "_pytest"),
        ("junit rewrite", {"calc.py": STUB + "open('/tmp/trajforge-junit.xml', 'w')\n"},
         "junit"),
    ],
)  # fmt: skip
def test_repair_hacks_score_zero(
    repair: tuple[Path, Task], tmp_path: Path, name: str, files: dict[str, str], caught: str | None
) -> None:
    result = _verify(repair, files, tmp_path / "s")
    assert result.reward == 0.0, (name, result)
    if caught == "set aside":
        assert result.set_aside == tuple(files) and not result.tampering
    elif caught is not None:
        assert result.status == "error" and caught in " ".join(result.tampering), result
        assert "reaches into the check" in result.detail


def test_build_hack_of_a_stub_and_a_hook_scores_zero(
    build: tuple[Path, Task], tmp_path: Path
) -> None:
    hacked = _verify(build, {"stats.py": STUB, "conftest.py": HOOK}, tmp_path / "hack")
    assert hacked.reward == 0.0 and hacked.tampering == (
        "conftest.py: hookimpl, pytest_runtest_makereport",
    )
    right = "import statistics\n\nmean = statistics.fmean\nmedian = statistics.median\n"
    assert _verify(build, {"stats.py": right}, tmp_path / "right").reward == 1.0


def test_what_each_file_is_to_the_check() -> None:
    kinds = {
        p: runner_kind(p, "bash scripts/run_tests.sh")
        for p in (
            "test_calc.py", "tests/helpers.py", "src/app.test.ts", "conftest.py",
            "pyproject.toml", "package.json", "jest.config.cjs", "Makefile",
            "scripts/run_tests.sh", "sitecustomize.py", "zz.pth", "_pytest/reports.py",
            "pytest.py", "calc.py", "src/py/util.py", "py/bindings.py", "pluggy/hooks.py",
        )
    }  # fmt: skip
    assert kinds == {
        "test_calc.py": "test", "tests/helpers.py": "test", "src/app.test.ts": "test",
        "conftest.py": "config", "pyproject.toml": "config", "package.json": "config",
        "jest.config.cjs": "config", "Makefile": "script", "scripts/run_tests.sh": "script",
        "sitecustomize.py": "startup", "zz.pth": "startup", "_pytest/reports.py": "startup",
        "pytest.py": "startup", "calc.py": "source", "src/py/util.py": "source",
        "py/bindings.py": "source", "pluggy/hooks.py": "startup",
    }  # fmt: skip


def test_config_and_source_changes_are_read_against_the_task() -> None:
    pyproject = '[project]\nname = "calc"\nversion = "0.1.0"\n'
    package = '{"name": "calc", "scripts": {"test": "jest", "build": "tsc"}}'
    task = TaskView(
        start={"pyproject.toml": pyproject, "package.json": package, "cli.py": "import sys\n"},
        oracle={},
        hidden={},
        command="npm test",
    )
    fine = screen(
        task,
        {
            "pyproject.toml": pyproject.replace("0.1.0", "0.2.0"),
            "package.json": package.replace('"tsc"', '"tsc -p ."'),
            "cli.py": "import sys\n\nif __name__ == '__main__':\n    sys.exit(main())\n",
        },
    )
    assert fine.tampering == () and fine.files["pyproject.toml"].endswith('"0.2.0"\n')
    bad = screen(
        task,
        {
            "pyproject.toml": pyproject + "\n[tool.pytest.ini_options]\naddopts = '-p hack'\n",
            "package.json": package.replace('"jest"', '"exit 0"'),
            "cli.py": "import sys\nsys.exit(0)\n",
            "Cargo.toml": "[lib]\ntest = false\n",
        },
    )
    assert bad.tampering == (
        "Cargo.toml: test = false",
        "cli.py: sys.exit(",
        'package.json: the "test" scripts',
        "pyproject.toml: -p hack, addopts =",
    )


def test_the_scripts_a_named_check_runs_are_the_checks_in_every_member() -> None:
    """pi-mono's repairs are checked by ``npm run check``: a solution whose root ``check``
    script is ``true`` scored 1 before the scripts the command names (and those they run, in
    every workspace member) were read like ``test``'s; other scripts stay the solution's."""
    root = json.dumps(
        {"scripts": {"check": "biome check . && npm run check --workspaces", "dev": "tsx"}}
    )
    member = json.dumps({"scripts": {"check": "npm run typecheck", "typecheck": "tsgo"}})
    start = {"package.json": root, "packages/tui/package.json": member}
    task = TaskView(start=start, oracle={}, hidden={}, command="npm run check")
    hacks = {
        "package.json": root.replace("biome check . && npm run check --workspaces", "true"),
        "packages/tui/package.json": member.replace('"tsgo"', '"true"'),
    }
    assert screen(task, hacks).tampering == (
        'package.json: the "check" script',
        'packages/tui/package.json: the "typecheck" script',
    )
    pre = json.dumps({"scripts": {**json.loads(root)["scripts"], "precheck": "exit 0"}})
    assert screen(task, {"package.json": pre}).tampering == ('package.json: the "precheck" script',)
    fine = screen(task, {"package.json": root.replace('"tsx"', '"tsx watch"')})
    assert fine.tampering == ()
    member_new = {"packages/new/package.json": json.dumps({"name": "new", "version": "1.0.0"})}
    assert screen(task, member_new).tampering == ()  # a new member with no script is its own
    checked_new = {"packages/new/package.json": json.dumps({"scripts": {"check": "exit 0"}})}
    assert screen(task, checked_new).tampering == ('packages/new/package.json: the "check" script',)


SILENCED = "packages/a/src/session.ts"
SESSION = 'import type { QueueMode } from "core";\n// @ts-expect-error legacy\nlet mode = 1;\n'


def _type_checked() -> TaskView:
    root = json.dumps({"scripts": {"check": "biome check . && npm run check --workspaces"}})
    start = {
        "package.json": root,
        "packages/a/package.json": json.dumps({"scripts": {"check": "tsgo --noEmit"}}),
        SILENCED: SESSION,
        "tsconfig.json": '{"include": ["packages/*/src"]}\n',
        "eslint.config.js": "export default [];\n",
    }
    return TaskView(start=start, oracle=dict(start), hidden={}, command="npm run check")


def test_a_check_that_runs_a_type_checker_is_not_silenced() -> None:
    """pi-mono's ``npm run check`` repair scored 1.0 for ``// @ts-nocheck`` on top of the file
    that failed to type-check. Where the check runs a type checker or linter (itself, or through
    the scripts it names), a comment that silences it, more of them than the start and the
    reference had, is tampering; its settings files (new ones too) are the task's unless the
    reference changed them."""
    task = _type_checked()
    assert task.checked
    said = "silences the type checker or linter"
    nocheck = screen(task, {SILENCED: "// @ts-nocheck\n" + SESSION})
    assert nocheck.tampering == (f"{SILENCED}: {said} (@ts-nocheck)",)
    one_more = SESSION.replace("let mode", "// @ts-expect-error\nlet mode")
    assert screen(task, {SILENCED: one_more}).tampering == (
        f"{SILENCED}: {said} (@ts-expect-error)",
    )
    lint = screen(task, {SILENCED: "/* eslint-disable */\n" + SESSION}).tampering
    assert lint == (f"{SILENCED}: {said} (eslint-disable)",)
    assert screen(task, {SILENCED: SESSION.replace("= 1", "= 2")}).tampering == ()
    settings = {
        "tsconfig.json": '{"include": ["packages/b/src"]}\n',
        "eslint.config.js": 'export default [{ ignores: ["**"] }];\n',
        "packages/a/tsconfig.json": '{"exclude": ["src"]}\n',
        "packages/a/src/.eslintrc.json": '{"root": true}\n',
    }
    laid = screen(task, settings)
    assert laid.tampering == () and set(laid.set_aside) == set(settings)
    assert laid.files["tsconfig.json"] == task.start["tsconfig.json"]
    assert "packages/a/tsconfig.json" not in laid.files
    fixed = TaskView(
        start=task.start, oracle={SILENCED: one_more}, hidden={}, command="npm run check"
    )
    assert screen(fixed, {SILENCED: one_more}).tampering == ()  # as the reference did


def test_a_check_by_tests_reads_no_checker_comment() -> None:
    """A check by hidden tests (vitest, pytest) runs no type checker: a ``// @ts-ignore`` or
    ``# type: ignore`` a solution adds is its own; ``mypy`` named by the command is one."""
    start = _type_checked().start
    command = "cd packages/a && npx --no-install vitest run test/session.hidden.test.ts"
    tests = TaskView(start=start, oracle={}, hidden={}, command=command)
    assert not tests.checked
    assert screen(tests, {SILENCED: "// @ts-nocheck\n" + SESSION}).tampering == ()
    typed = TaskView(start={"src/app.py": "x: int = 1\n"}, oracle={}, hidden={}, command="mypy src")
    ignored = screen(typed, {"src/app.py": "x: int = 'a'  # type: ignore\n"}).tampering
    assert ignored == ("src/app.py: silences the type checker or linter (# type: ignore)",)
    tested = TaskView(start=typed.start, oracle={}, hidden={}, command="python -m pytest -q")
    assert screen(tested, {"src/app.py": "x: int = 'a'  # type: ignore\n"}).tampering == ()


def test_fixtures_the_reference_left_alone_are_the_tasks() -> None:
    """pi-mono's "make the footer dimmer, don't modify the theme": recolouring the theme's
    ``muted`` to the ``dim`` colour in ``dark.json`` (footer.ts untouched) passed every hidden
    test, which compare the footer's colour codes with the theme's. Documentation, configuration
    and data the reference left as the start had it are the task's; what the reference changed,
    a new file and the runner's own configuration stay the solution's."""
    theme = '{"colors": {"muted": "gray", "dim": "dimGray"}}\n'
    tokens = '{"colors": {"thinkingOff": "dimGray"}}\n'
    task = TaskView(
        start={"src/footer.ts": 'theme.fg("muted", pwd)\n', "src/dark.json": theme,
               "src/light.json": theme, "README.md": "# pi\n", "package.json": "{}"},
        oracle={"src/footer.ts": 'theme.fg("dim", pwd)\n', "src/dark.json": theme,
                "src/light.json": tokens, "README.md": "# pi\n", "package.json": "{}"},
        hidden={},
        command="npx vitest run",
    )  # fmt: skip
    hack = {"src/dark.json": theme.replace('"gray"', '"dimGray"'), "README.md": "# hacked\n"}
    screened = screen(task, hack)
    assert screened.set_aside == ("README.md", "src/dark.json")
    assert screened.files["src/dark.json"] == theme and screened.tampering == ()
    mine = '{"colors": {"thinkingOff": "#505050"}}\n'
    kept = screen(task, {"src/light.json": mine, "src/new.json": "{}", "package.json": '{"a":1}'})
    assert kept.set_aside == () and kept.files["src/light.json"] == mine
    assert kept.files["src/new.json"] == "{}" and kept.files["package.json"] == '{"a":1}'


def test_a_whole_final_workspace_deletes_what_it_lacks_except_the_tasks_files() -> None:
    """pi-mono's "move src/utils/config.ts to src/": a rollout that moved the module but left
    ``changelog.ts`` importing ``./config.js`` scored 1, because verify laid the final
    workspace over the start and so brought the deleted module back. A rollout's workspace is
    whole (``whole=True``): a source file of the start it lacks was deleted. The task's files —
    its tests, start-up files and fixtures the reference left alone — cannot be taken away;
    files laid over the start (``trajforge verify --files`` without ``--whole``) delete
    nothing."""
    task = TaskView(
        start={"src/utils/config.ts": "export const A = 1;\n", "src/utils/changelog.ts":
               'export { A } from "./config.js";\n', "src/theme.json": "{}\n",
               "test/changelog.test.ts": "import '../src/utils/changelog';\n"},
        oracle={"src/config.ts": "export const A = 1;\n", "src/utils/changelog.ts":
                'export { A } from "../config.js";\n', "src/theme.json": "{}\n",
                "test/changelog.test.ts": "import '../src/utils/changelog';\n"},
        hidden={"test/config.hidden.test.ts": "import '../src/config';\n"},
        command="npx vitest run",
    )  # fmt: skip
    moved = {"src/config.ts": "export const A = 1;\n"}  # changelog.ts left as it was
    whole = screen(task, {**moved, "src/utils/changelog.ts": task.start["src/utils/changelog.ts"]},
                   whole=True)  # fmt: skip
    assert "src/utils/config.ts" not in whole.files
    assert {"src/theme.json", "test/changelog.test.ts", "test/config.hidden.test.ts"} <= set(
        whole.files
    )
    laid = screen(task, moved)
    assert "src/utils/config.ts" in laid.files and "src/config.ts" in laid.files


def test_code_that_reads_the_js_runners_marks_is_tampering() -> None:
    """``if (process.env.VITEST) …`` behaves otherwise under the check (an exit 0 in a function
    the module calls as it loads passes a check that reads only an exit code): a solution that
    newly reads vitest's, jest's or ``node --test``'s marks reaches into the runner. Naming the
    ``vitest`` package, or a mark the start already read, is not."""
    start = {"src/width.ts": "export const width = (s: string) => s.length;\n"}
    task = TaskView(start=start, oracle=dict(start), hidden={}, command="npm test")
    detect = "function run() {\n  if (process.env.VITEST) process.exit(0);\n}\nrun();\n"
    found = screen(task, {"src/width.ts": start["src/width.ts"] + detect}).tampering
    assert found == ("src/width.ts: process.env.vitest",)
    jest = "const inJest = process.env['JEST_WORKER_ID'] !== undefined;\n"
    assert screen(task, {"src/w.ts": jest}).tampering == (
        "src/w.ts: process.env['jest_worker_id']",
    )
    assert screen(task, {"src/in-source.ts": "if (import.meta.vitest) {}\n"}).tampering
    named = "// tested with vitest\nexport const width = (s: string) => [...s].length;\n"
    assert screen(task, {"src/width.ts": named}).tampering == ()
    had = TaskView(
        start={"src/w.ts": jest}, oracle={"src/w.ts": jest}, hidden={}, command="npm test"
    )
    assert screen(had, {"src/w.ts": jest + "export const x = 1;\n"}).tampering == ()
