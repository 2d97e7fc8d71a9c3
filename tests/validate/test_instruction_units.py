"""Interface derivation and the leak check on real sources (pure functions, no sandbox)."""

from __future__ import annotations

from pathlib import Path

from trajforge.records import Task, TaskSource, Validation, Verifier
from trajforge.verifiers.teacher.teachers import MinedTeacher
from trajforge.verifiers.validate.instruction import finalise, interface_section, required_names
from trajforge.verifiers.validate.interface import python_modules
from trajforge.verifiers.validate.interface_js import js_modules
from trajforge.verifiers.validate.leaks import drop_leaks, forbidden

PY_TEST = """
import pytest
import pkg.geometry as geo
from pkg import Shape
from .helpers import build


def test_area_of_square():
    assert geo.area(Shape("sq", 3)) == 9
    assert Shape("sq", 2).scaled(2.5).side == pytest.approx(5.0)


class TestNames:
    def test_label(self):
        assert Shape("sq", 1).label() == "square of side 1"
        assert build() == [1, -4, "xy", True, "", None, 0]
        assert geo.unit() != 42


def test_self_equal(self=None):
    import unittest

    unittest.TestCase().assertEqual(geo.area(Shape("sq", 1)), 1.0)
"""

ORACLE = {
    "src/pkg/__init__.py": "from .shapes import Shape as Shape\n",
    "src/pkg/shapes.py": (
        "class Shape:\n"
        "    def __init__(self, kind: str, side: float) -> None:\n"
        "        self.kind = kind\n"
        "        self.side = side\n"
        "        self._cache = None\n"
        "    def scaled(self, k):\n        return Shape(self.kind, self.side * k)\n"
        "    def label(self):\n        return f'{self.kind}'\n"
        "    def unused(self):\n        pass\n"
        "    def _private(self):\n        pass\n"
    ),
    "src/pkg/geometry.py": (
        "import math\n\ndef area(shape) -> float:\n    return shape.side ** 2\n\n"
        "def unit(*, n=1):\n    return n\n\ndef _hidden():\n    pass\n"
    ),
    "tests/helpers.py": "def build():\n    return []\n",
    "tests/test_shapes.py": PY_TEST,
}


def _reader(files: dict[str, str]):  # type: ignore[no-untyped-def]
    return files.get


def test_python_interface_resolves_imports_re_exports_and_used_members() -> None:
    hidden = {"tests/test_shapes.py": PY_TEST}
    modules = python_modules(hidden, _reader(ORACLE), frozenset(ORACLE))
    by_path = {m.path: (m.name, m.lines) for m in modules}
    assert by_path == {
        "src/pkg/__init__.py": (
            "pkg",
            [
                "class Shape",
                "  def __init__(self, kind: str, side: float) -> None",
                "  def scaled(self, k)",
                "  def label(self)",
                "  attribute side",
            ],
        ),
        "src/pkg/geometry.py": ("pkg.geometry", ["def area(shape) -> float", "def unit(*, n=1)"]),
    }  # tests/helpers.py is test support, not interface


def test_forbidden_names_files_and_expected_literals() -> None:
    items = forbidden({"tests/test_shapes.py": PY_TEST}, "Add a square Shape with side 3.")
    assert items.names == ("test_area_of_square", "TestNames", "test_label", "test_self_equal")
    assert items.files == ("tests/test_shapes.py", "test_shapes.py", "test_shapes")
    # 9, approx(5.0), the label, list members; not 3 (in the request), 2 / 2.5 (arguments),
    # 0 / 1 / True / '' / None (trivial), 42 (compared with !=)
    assert set(items.literals) == {"9", "5.0", "5", "square of side 1", "-4", "xy"}


def test_drop_leaks_drops_lines_and_says_why() -> None:
    items = forbidden({"tests/test_shapes.py": PY_TEST}, "")
    text = "Make area work.\nThe area of side 3 is 9.\nSee test_label.\nv9 and 9.5 are fine."
    kept, dropped = drop_leaks(text, items)
    assert kept == "Make area work.\nv9 and 9.5 are fine."
    assert dropped == [
        "line 2 dropped: names expected value '9'",
        "line 3 dropped: names hidden test 'test_label'",
    ]


def test_an_ordered_lists_numbers_are_not_expected_values() -> None:
    # a recorded teacher instruction (extend-a917cbd4, pi-mono) numbered its requirements 1. to 7.;
    # expected values 3 and 5 of its hidden tests made items 3 and 5 "leaks"
    items = forbidden({"tests/test_shapes.py": PY_TEST}, "")
    text = "5. **Padding still applies.**\n9) keep it\n  5. the side is 5\nv5"
    kept, dropped = drop_leaks(text, items)
    assert kept == "5. **Padding still applies.**\n9) keep it\nv5"
    assert dropped == ["line 3 dropped: names expected value '5'"]


JS_TEST = """
const { add, sub: minus } = require('../src/math');
import * as shapes from '../src/shapes.ts';
import Stack from '../src/stack';
const Queue = require('../src/queue');

describe('math helpers', () => {
  test('adds two numbers', () => {
    expect(add(2, 3)).toBe(5);
    expect(minus(7, 2)).toEqual([5, 'five']);
    assert.strictEqual(shapes.area(4), -16);
    const s = new Stack();
    s.push(1);
    new Queue().enqueue(s);
  });
});
"""

JS_ORACLE = {
    "src/math.js": (
        "function add(a, b = 0) { return a + b; }\n"
        "const sub = (a, b) => a - b;\nconst other = x => x;\n"
        "module.exports = { add, sub };\n"
    ),
    "src/shapes.ts": "export function area(side: number): number { return side * side; }\n",
    "src/stack/index.js": (
        "export default class Stack {\n  constructor(items = []) { this.items = items; }\n"
        "  push(x) { this.items.push(x); }\n  pop() { return this.items.pop(); }\n}\n"
    ),
    "src/queue.js": "class Queue {\n  enqueue(x) {}\n  size() {}\n}\nmodule.exports = Queue;\n",
    "tests/math.test.js": JS_TEST,
}


def test_js_interface_from_require_and_imports() -> None:
    modules = js_modules({"tests/math.test.js": JS_TEST}, _reader(JS_ORACLE), frozenset(JS_ORACLE))
    assert {m.path: m.lines for m in modules} == {
        "src/math.js": ["function add(a, b = 0)", "const sub = (a, b) =>"],
        "src/queue.js": ["class Queue", "  enqueue(x)"],
        "src/shapes.ts": ["function area(side: number): number"],
        "src/stack/index.js": ["class Stack", "  constructor(items = [])", "  push(x)"],
    }
    items = forbidden({"tests/math.test.js": JS_TEST}, "")
    assert items.names == ("math helpers", "adds two numbers")
    assert set(items.literals) == {"5", "five", "-16"}


def test_js_interface_from_a_dynamic_import() -> None:
    """A teacher's test of pi-mono's main.ts loaded it with ``await import(...)`` (after
    setting the environment it reads at import): the instruction's interface was empty."""
    test = (
        'let main;\nbeforeAll(async () => {\n  const mod = await import("../src/main.js");\n'
        "  main = mod.main;\n});\n"
        'it("runs", async () => { const { area } = await import("../src/shapes"); '
        "expect(area(2)).toBe(4); await main([]); });\n"
    )
    oracle = {
        "src/main.ts": "export async function main(args: string[]): Promise<void> {}\n"
        "export function helper(): void {}\n",
        "src/shapes.ts": JS_ORACLE["src/shapes.ts"],
        "test/main.test.ts": test,
    }
    modules = js_modules({"test/main.test.ts": test}, _reader(oracle), frozenset(oracle))
    assert {m.path: m.lines for m in modules} == {
        "src/main.ts": ["function main(args: string[]): Promise<void>"],
        "src/shapes.ts": ["function area(side: number): number"],
    }


def test_js_interface_from_a_dynamic_import_assigned_to_an_earlier_variable() -> None:
    """pi-mono's theme watcher test declared ``let mod: ThemeModule`` and assigned
    ``mod = await import("../src/theme/theme")`` in ``beforeAll``: the instruction got no
    interface section ("no oracle module resolved"), so the functions the tests call
    (``onThemeChange``, ``stopThemeWatcher``) were named nowhere in it."""
    test = (
        'type M = typeof import("../src/theme");\nlet mod: M;\n'
        'beforeAll(async () => {\n  mod = await import("../src/theme");\n'
        "  mod.onThemeChange(() => {});\n});\n"
        "afterAll(() => { mod?.stopThemeWatcher(); });\n"
    )
    oracle = {
        "src/theme.ts": "export function onThemeChange(cb: () => void): void {}\n"
        "export function stopThemeWatcher(): void {}\nexport function unused(): void {}\n",
        "test/theme.test.ts": test,
    }
    modules = js_modules({"test/theme.test.ts": test}, _reader(oracle), frozenset(oracle))
    assert {m.path: m.lines for m in modules} == {
        "src/theme.ts": [
            "function onThemeChange(cb: () => void): void",
            "function stopThemeWatcher(): void",
        ],
    }


def _task(tmp_path: Path, hidden: dict[str, str], oracle: dict[str, str]) -> tuple[Path, Task]:
    for folder, files in (("tests", hidden), ("oracle", oracle), ("workspace", {})):
        for rel, text in files.items():
            (tmp_path / folder / rel).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / folder / rel).write_text(text)
    (tmp_path / "workspace").mkdir(exist_ok=True)
    task = Task(
        id="build-0",
        family="build",
        instruction="Write the geometry package; a square of side 3 has area 9.",
        source=TaskSource(harness="pi", session="s", path="p", events=(0, 1)),
        verifier=Verifier(kind="tests", tests=tuple(hidden)),
        validation=Validation(status="accepted"),
    )
    return tmp_path, task


def test_finalise_appends_the_interface_and_keeps_literals_the_request_states(
    tmp_path: Path,
) -> None:
    task_dir, task = _task(tmp_path, {"tests/test_shapes.py": PY_TEST}, ORACLE)
    done = finalise(task_dir, task, MinedTeacher())
    assert done.request == task.instruction
    section, _ = interface_section(task_dir, task, {"tests/test_shapes.py": PY_TEST})
    assert done.instruction == f"{task.instruction}\n\n{section}\n"
    assert required_names(section) == ("Shape", "area", "unit")
    assert "- `src/pkg/__init__.py` (module `pkg`)" in done.instruction
    assert "test_" not in done.instruction and "square of side 1" not in done.instruction
    again = finalise(task_dir, done, MinedTeacher())
    assert again.instruction == done.instruction and again.request == done.request


def test_command_naming_a_file_outside_the_workspace_is_not_stated(tmp_path: Path) -> None:
    task_dir, task = _task(tmp_path, {}, {"calc.py": "x = 1\n"})
    (task_dir / "workspace" / "tests").mkdir()
    (task_dir / "workspace" / "tests" / "test_calc.py").write_text("")
    for command, stated in (
        ("pytest -q tests/test_calc.py::test_x", True),
        ("pytest -q tests/", True),
        ("pytest -q tests/test_secret.py", False),
    ):
        verifier = Verifier(kind="command", command=command)
        section, notes = interface_section(
            task_dir, task.model_copy(update={"verifier": verifier}), {}
        )
        assert (f"`{command}` must pass" in section) is stated, (command, section)
        assert bool(notes) is not stated


TRUNCATED = (
    "export class TruncatedText {\n  constructor(text: string, paddingX: number = 0) {}\n"
    "  render(width: number): string[] {\n    return [];\n  }\n}\n"
)
TRUNCATED_TEST = (
    'import { describe, it } from "node:test";\nimport assert from "node:assert/strict";\n'
    'import { TruncatedText } from "../src/truncated-text.js";\n\n'
    'describe("TruncatedText", () => {\n  it("pads short text to the width", () => {\n'
    '    assert.deepEqual(new TruncatedText("hello").render(7), ["hello  "]);\n  });\n});\n'
)


def test_a_suite_named_after_the_class_it_tests_does_not_hide_the_class(tmp_path: Path) -> None:
    """pi-mono's hidden tests of TruncatedText open with describe("TruncatedText"): the class is
    the interface, stated with its members; the test's own titles and values stay out. The
    import spells the compiled suffix (``.js``) of the TypeScript source, as Node16 ESM does."""
    hidden = {"test/truncated-text.hidden.test.ts": TRUNCATED_TEST}
    task_dir, task = _task(tmp_path, hidden, {"src/truncated-text.ts": TRUNCATED})
    done = finalise(task_dir, task, MinedTeacher())
    assert "  - `class TruncatedText`" in done.instruction
    assert "    - `render(width: number): string[]`" in done.instruction
    for leak in ("pads short text", "hello  ", "truncated-text.hidden"):
        assert leak not in done.instruction
