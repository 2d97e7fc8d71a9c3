"""The teacher's interface contract and answer parsing (pure functions, real inputs)."""

from __future__ import annotations

from trajforge.verifiers.languages import language_named
from trajforge.verifiers.languages.python import contract
from trajforge.verifiers.teacher.prompts import parse_answer

PY = language_named("python")
TS = language_named("typescript")

SOURCE = '''
def mean(xs: list[float]) -> float:
    """Arithmetic mean."""
    return sum(xs) / len(xs)


def _helper(x):
    return x


class Stack:
    def __init__(self, items=()):
        self._items = list(items)

    def push(self, x):
        self._items.append(x)

    def _grow(self):
        pass
'''


def test_contract_lists_public_signatures_only() -> None:
    lines = contract("pkg/stats.py", SOURCE)
    assert lines[0] == "# module pkg.stats (pkg/stats.py)"
    assert "def mean(xs: list[float]) -> float  # Arithmetic mean." in lines
    assert (
        "    def Stack.push(self, x)" in lines and "    def Stack.__init__(self, items=())" in lines
    )
    assert not any("_helper" in line or "_grow" in line for line in lines)
    assert contract("broken.py", "def (:") == []


def test_parse_answer_takes_test_files_and_names_bad_blocks() -> None:
    text = (
        "Here:\n```python file=tests/test_a.py\nassert 1\n```\n"
        "```python file=../test_escape.py\nx\n```\n"
        "```python file=stats.py\ny\n```\n"
    )
    files, problems = parse_answer(text, PY)
    assert files == {"tests/test_a.py": "assert 1\n"}
    assert problems == [
        "file=../test_escape.py: the path must stay inside the repository",
        "file=stats.py: only pytest files named test_*.py are accepted",
    ]
    assert parse_answer("no code here", PY) == (
        {},
        ["no ```python file=PATH block found in the answer"],
    )


def test_parse_answer_in_typescript_takes_runner_test_files() -> None:
    text = (
        "```ts file=packages/x/test/sum.hidden.test.ts\nimport { sum } from '../src/sum';\n```\n"
        "```ts file=packages/x/src/sum.ts\nexport const sum = 0;\n```\n"
        "```ts file=node_modules/a/b.test.ts\nx\n```\n"
    )
    files, problems = parse_answer(text, TS)
    assert list(files) == ["packages/x/test/sum.hidden.test.ts"]
    assert len(problems) == 2 and all("only test files named" in p for p in problems)
    assert parse_answer("```python file=test_a.py\nx\n```", TS)[1] == [
        "file=test_a.py: only test files named *.test.ts / *.spec.ts (or .js, .tsx, .mjs) are "
        "accepted"
    ]
