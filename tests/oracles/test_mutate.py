"""Python mutants: changed lines only, every family, each compiles, seeded sampling."""

from __future__ import annotations

import ast
from typing import Any

import pytest

from tests.fixtures.scenarios import CALC_BUGGY, INVENTORY, REMOVE_ITEM, STATS
from trajforge.oracles import mutate_js
from trajforge.oracles.changes import changed_lines
from trajforge.oracles.mutate import OPERATORS, Mutant, mutants

WINDOW = '''LABEL = "window"


def window(xs, size, flag=True):
    """Sum of doubled positives in the first windows."""
    total = 0
    for i in range(len(xs) - size):
        if xs[i] > 0 and flag:
            total += xs[i] * 2
    print("done")
    return xs[1:size], total
'''
INVENTORY_AFTER = INVENTORY.replace("        return self.items[name]\n", REMOVE_ITEM)
CALC_FIXED = CALC_BUGGY.replace("return high\n    if value >", "return low\n    if value >")


def _all_lines(source: str) -> set[int]:
    return set(range(1, len(source.splitlines()) + 1))


def _check_well_formed(found: list[Mutant], files: dict[str, str]) -> None:
    assert [m.id for m in found] == [f"m{n}" for n in range(1, len(found) + 1)]
    assert len({m.content for m in found}) == len(found)
    for m in found:
        original = files[m.path]
        assert m.content != original
        assert m.operator in OPERATORS
        assert m.description.endswith(f" in {m.path} line {m.line}")
        compile(m.content, m.path, "exec")
        before, after = original.splitlines(), m.content.splitlines()
        assert len(before) == len(after), m.description  # line numbers stay
        assert {n for n, (a, b) in enumerate(zip(before, after, strict=True), 1) if a != b} == {
            m.line
        }, m.description


def test_every_operator_family_and_every_mutant_compiles() -> None:
    files = {"window.py": WINDOW}
    found = mutants(files, {"window.py": _all_lines(WINDOW)}, limit=1000)
    _check_well_formed(found, files)
    assert {m.operator for m in found} == set(OPERATORS)
    descriptions = {m.description for m in found}
    for expected in (
        "`>` → `>=` in window.py line 8",
        "`*` → `/` in window.py line 9",
        "`+=` → `-=` in window.py line 9",
        "`and` → `or` in window.py line 8",
        "`True` → `False` in window.py line 4",
        "`xs[i] > 0 and flag` → `not (xs[i] > 0 and flag)` in window.py line 8",
        'drop `print("done")` in window.py line 10',
        "`len(xs) - size` → `(len(xs) - size) + 1` in window.py line 7",
        "`size` → `size - 1` in window.py line 11",
        "`return xs[1:size], total` → `None` in window.py line 11",
    ):
        assert expected in descriptions
    # docstrings and defaults in signatures are not code paths to break
    assert not any(m.line == 5 for m in found)


def test_only_changed_lines_are_mutated() -> None:
    files = {"inventory.py": INVENTORY_AFTER}
    lines = changed_lines({"inventory.py": INVENTORY}, files)
    found = mutants(files, lines)
    _check_well_formed(found, files)
    assert found and {m.line for m in found} <= lines["inventory.py"]
    assert {"compare", "arith", "const", "negate", "drop", "return"} <= {m.operator for m in found}
    assert mutants(files, {}) == []
    assert mutants(files, {"inventory.py": {1, 2}}) == []  # `class` / `def __init__` lines


def test_reproducible_and_independent_of_file_order() -> None:
    files = {"stats.py": STATS, "inventory.py": INVENTORY_AFTER}
    lines = {"stats.py": _all_lines(STATS), "inventory.py": _all_lines(INVENTORY_AFTER)}
    reordered = dict(reversed(list(files.items())))
    first = mutants(files, lines, seed=7, limit=12)
    assert first == mutants(reordered, lines, seed=7, limit=12)
    assert first == mutants(files, lines, seed=7, limit=12)
    assert first != mutants(files, lines, seed=8, limit=12)


def test_sample_is_spread_across_operators_and_lines() -> None:
    files = {"stats.py": STATS}
    lines = {"stats.py": _all_lines(STATS)}
    everything = mutants(files, lines, limit=1000)
    operators = {m.operator for m in everything}
    assert len(everything) > 8 and len(operators) >= 5
    for seed in range(5):
        sample = mutants(files, lines, seed=seed, limit=8)
        _check_well_formed(sample, files)
        assert len(sample) == 8
        assert {m.content for m in sample} <= {m.content for m in everything}
        assert {m.operator for m in sample} == operators  # every family before any repeats
        assert len({m.line for m in sample}) >= 5
        assert [m.line for m in sample] == sorted(m.line for m in sample)


def _clamp_outcome(content: str) -> Any:
    namespace: dict[str, Any] = {}
    exec(compile(content, "calc.py", "exec"), namespace)
    return namespace["clamp"](-3, 0, 10)


def test_repair_mutants_include_the_original_bug() -> None:
    files = {"calc.py": CALC_FIXED}
    lines = changed_lines({"calc.py": CALC_BUGGY}, files)
    found = mutants(files, lines)
    _check_well_formed(found, files)
    assert {m.line for m in found} == {4}
    bug = [m for m in found if m.content == CALC_BUGGY]
    assert len(bug) == 1 and bug[0].operator == "return"
    assert bug[0].description == "`low` → `high` in calc.py line 4"
    assert _clamp_outcome(CALC_FIXED) == 0
    assert all(_clamp_outcome(m.content) != 0 for m in found)  # each one breaks test_below


def test_skipped_and_unparsable_files_give_no_mutants(caplog: pytest.LogCaptureFixture) -> None:
    files = {"test_stats.py": STATS, "broken.py": "def f(:\n", "notes.txt": "x < 1\n"}
    lines = {path: {1, 2, 3} for path in files}
    assert mutants(files, lines, skip=lambda p: p.startswith("test_")) == []
    assert "broken.py" in caplog.text
    kept = mutants(files, lines)
    assert kept and {m.path for m in kept} == {"test_stats.py"}


def test_multi_line_statement_drop_keeps_line_numbers() -> None:
    source = "def f(items):\n    items.append(\n        1,\n    )\n    return items\n"
    found = mutants({"f.py": source}, {"f.py": {2}})
    drop = [m for m in found if m.operator == "drop"]
    assert len(drop) == 1
    assert drop[0].content.splitlines()[1:4] == ["    pass", "", ""]
    assert ast.parse(drop[0].content).body[0].body[-1].lineno == 5  # type: ignore[attr-defined]


PACKAGE_INIT = '''"""pkg: slugs."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar, cast

from pkg.core import slugify

if TYPE_CHECKING:
    from pkg.types import Slug

__all__ = ["slugify", "short"]
__all__ += ["LIMIT"]
__version__ = "1.2.3"
T = TypeVar("T")
LIMIT = 40


def short(text: "Slug") -> "Slug":
    """The first LIMIT characters."""
    return cast("Slug", text[:LIMIT])
'''


def test_no_mutants_of_declarations_no_test_can_observe() -> None:
    """__all__, __version__, TYPE_CHECKING imports, type variables, docstrings and type names
    get no mutants (each would survive every test); the code around them still does."""
    files = {"pkg/__init__.py": PACKAGE_INIT}
    found = mutants(files, {"pkg/__init__.py": _all_lines(PACKAGE_INIT)}, limit=1000)
    _check_well_formed(found, files)
    lines = PACKAGE_INIT.splitlines()
    inert = {n for n, text in enumerate(lines, 1) if text.startswith(("__", "T =", "if TYPE"))}
    inert |= {n for n, text in enumerate(lines, 1) if '"""' in text}
    assert len(inert) == 7
    assert not [m.description for m in found if m.line in inert]
    descriptions = {m.description for m in found}
    assert {
        "`40` → `41` in pkg/__init__.py line 16",
        "drop `LIMIT = 40` in pkg/__init__.py line 16",
        "`LIMIT` → `LIMIT + 1` in pkg/__init__.py line 21",
    } <= descriptions
    assert not any('`"Slug"`' in d for d in descriptions), descriptions


LOGGED_PY = (
    'def serve(env, host):\n    """Start."""\n    print(\n'
    '        f"Core // HTTP // Listening (env={env},host={host})"\n    )\n'
)
LOGGED_TS = (
    "export function serve(env: string, host: string): void {\n  console.log(\n"
    "    `Core // HTTP // Listening (env=${env},host=${host})`\n  );\n}\n"
)


@pytest.mark.parametrize(("path", "source"), [("serve.py", LOGGED_PY), ("serve.ts", LOGGED_TS)])
def test_a_change_that_is_only_text_has_its_literal_emptied(path: str, source: str) -> None:
    """A log format changed inside a call (opencode's dark-factory "System // Sub system //
    Message (Metadata)"): no operator applies to line 4 / 3, so the fallback empties its
    f-string or template literal, and only then."""
    line = 4 if path.endswith(".py") else 3
    (found,) = mutants({path: source}, {path: {line}})
    assert found.operator == "text" and found.line == line
    assert found.description.startswith("empty the text ") and "Listening" in found.description
    assert "Listening" not in found.content and len(found.content.splitlines()) == len(
        source.splitlines()
    )
    # a change with something else to mutate keeps its usual faults only (and its strings
    # as the `const` operator empties them)
    usual = mutants({"window.py": WINDOW}, {"window.py": _all_lines(WINDOW)}, limit=1000)
    assert "text" not in {m.operator for m in usual}


@pytest.mark.parametrize(
    ("path", "source", "log_line"),
    [
        ("warn.ts", 'export function f(x: number): void {\n  if (x > 1) {\n'
         '    console.error("too big", x);\n    console.log("out");\n  }\n}\n', 3),
        ("warn.py", "import logging\n\nlog = logging.getLogger(__name__)\n\n\ndef f(x):\n"
         '    if x > 1:\n        log.warning("too big %s", x)\n        print("out")\n', 8),
    ],
)  # fmt: skip
def test_a_diagnostic_log_line_is_not_a_fault_but_output_is(
    path: str, source: str, log_line: int
) -> None:
    """pi-mono's theme fallback logs `console.error(...)` before using the dark theme: dropping
    that line is no fault a test of the task must catch (a teacher asked to kill it tests the
    log's wording). `console.log` / `print` may be a program's output and stay faults; a change
    that is only a log line still gets its text emptied."""
    lines = set(range(1, len(source.splitlines()) + 1))
    found = mutants({path: source}, {path: lines}, limit=1000)
    assert found and not [m for m in found if m.line == log_line]
    assert any(m.operator == "drop" and "out" in m.description for m in found)
    (only,) = mutants({path: source}, {path: {log_line}})
    assert only.operator == "text" and "too big" in only.description


def test_a_module_specifier_is_no_text_to_empty() -> None:
    """Re-exports and `require` / `import()` name a module, not text: emptying `"./log"` is a
    fault any import catches. A change of only such lines has no mutant; the text beside them
    is still emptied."""
    source = (
        'export { log } from "./log";\nexport * from "./util";\n'
        'const cfg = require("./config");\nconst lazy = import("./lazy");\n'
        'export const banner = f("Core // HTTP // Listening");\n'
    )
    assert mutants({"index.js": source}, {"index.js": {1, 2, 3, 4}}, limit=1000) == []
    found = mutate_js.texts("javascript", source, set(range(1, 6)))
    assert [(c.line, c.operator) for c in found] == [(5, "text")]
