"""The offline ``mined`` teacher (:class:`MinedTeacher`): hidden tests taken from what the agent
wrote and ran green; the model teacher, ``openai:MODEL``, is :mod:`.loop`.

The oracle's versions of the test files the agent wrote or changed in the episode become the
task's hidden tests (``tests/``; removed from nothing, since files created in the episode are
not in ``workspace/``). A test file the agent weakened on the way to green — an assertion made
constant (``assert True``), assertions cut, test cases deleted, skips added — is never used as a
verifier: :func:`weakening` says exactly what happened.
"""

from __future__ import annotations

import ast
import re
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from trajforge import pyast
from trajforge.protocols import Prove
from trajforge.records import InstructionBrief, Task, Validation, WrittenInstruction
from trajforge.taskdir import HIDDEN_DIR
from trajforge.verifiers.validate.config import ValidateConfig
from trajforge.verifiers.validate.derived_file import FILE_NAME as DERIVED_FILE
from trajforge.verifiers.validate.files import read_tree, write_tree

_JS_ASSERT = re.compile(r"\b(expect|assert(?:\.\w+)?)\s*\(")
_JS_TRIVIAL = re.compile(
    r"\b(expect\s*\(\s*(true|1)\s*\)\s*\.\s*toBe(Truthy)?\s*\(\s*(true)?\s*\)"
    r"|assert(\.ok)?\s*\(\s*(true|1)\s*\))"
)
_JS_CASE = re.compile(r"\b(?:it|test)\s*\(\s*(['\"`])(.+?)\1")
_SKIP_MARKERS = ("skip", "skipif", "xfail")
MINED = "mined"
"""The offline teacher's name (``--teacher mined``)."""


@dataclass
class TestFacts:
    """What a test file asserts, per test case."""

    asserts: dict[str, int] = field(default_factory=dict)
    """Test case → number of non-constant assertions."""
    trivial: dict[str, list[str]] = field(default_factory=dict)
    """Test case → constant assertions it makes (``assert True``)."""
    skipped: set[str] = field(default_factory=set)
    """Test cases skipped or xfailed (decorator or call)."""


def _is_test(name: str) -> bool:
    return name.startswith("test")


def _constant(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return bool(node.value)
    if isinstance(node, ast.Compare) and len(node.comparators) == 1:
        return ast.dump(node.left) == ast.dump(node.comparators[0]) and isinstance(
            node.ops[0], ast.Eq | ast.Is | ast.LtE | ast.GtE
        )
    return False


def _call_name(node: ast.Call) -> str:
    func = node.func
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""


def _scan_case(func: ast.FunctionDef | ast.AsyncFunctionDef, name: str, facts: TestFacts) -> None:
    count, trivial = 0, []
    for node in ast.walk(func):
        if isinstance(node, ast.Assert):
            if _constant(node.test):
                trivial.append(f"assert {ast.unparse(node.test)}")
            else:
                count += 1
        elif isinstance(node, ast.Call):
            called = _call_name(node)
            if called in ("skip", "xfail"):
                facts.skipped.add(name)
            elif called == "raises" or called.startswith("assert"):
                count += 1
    for deco in func.decorator_list:
        text = ast.unparse(deco)
        if any(f".{m}" in text for m in _SKIP_MARKERS):
            facts.skipped.add(name)
    facts.asserts[name] = count
    if trivial:
        facts.trivial[name] = trivial


def python_facts(source: str) -> TestFacts | None:
    """Facts of a Python test module; None when it does not parse."""
    try:
        tree = pyast.parse(source)
    except (SyntaxError, ValueError):
        return None
    facts = TestFacts()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and _is_test(node.name):
            _scan_case(node, node.name, facts)
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and _is_test(item.name):
                    _scan_case(item, f"{node.name}.{item.name}", facts)
    return facts


def js_facts(source: str) -> TestFacts:
    """Facts of a JS/TS test file, at file granularity for assertions."""
    facts = TestFacts()
    for match in _JS_CASE.finditer(source):
        facts.asserts.setdefault(match.group(2), 0)
    facts.asserts["(file)"] = len(_JS_ASSERT.findall(source))
    trivial = [m.group(0) for m in _JS_TRIVIAL.finditer(source)]
    if trivial:
        facts.trivial["(file)"] = trivial
    facts.asserts["(file)"] -= len(trivial)
    if re.search(r"\b(it|test|describe)\.skip\s*\(|\bx(it|describe)\s*\(", source):
        facts.skipped.add("(file)")
    return facts


def facts_of(path: str, source: str) -> TestFacts | None:
    """Facts for a test file by suffix; None for files neither parser understands."""
    if path.endswith(".py"):
        return python_facts(source)
    if path.endswith((".js", ".jsx", ".ts", ".tsx", ".mjs", ".cjs")):
        return js_facts(source)
    return None


def weakening(path: str, final: str, earlier: Sequence[str]) -> list[str]:
    """Ways the final version of a test file is weaker than it was, or vacuous on its own."""
    now = facts_of(path, final)
    if now is None:
        return []
    found = [
        f"{path}::{case} asserts a constant ({', '.join(t)})" for case, t in now.trivial.items()
    ]
    before = [f for f in (facts_of(path, text) for text in earlier) if f is not None]
    for old in before:
        for case, count in old.asserts.items():
            if case not in now.asserts and case != "(file)":
                found.append(f"{path}::{case} was deleted")
            elif now.asserts.get(case, 0) < count:
                found.append(
                    f"{path}::{case} assertions cut from {count} to {now.asserts.get(case, 0)}"
                )
        for case in now.skipped - old.skipped:
            found.append(f"{path}::{case} was marked skip/xfail")
    return list(dict.fromkeys(found))


def mined_tests(tests: Sequence[str], oracle: dict[str, str]) -> dict[str, str]:
    """The hidden tests: the oracle's version of each test file the agent wrote or changed."""
    return {path: oracle[path] for path in tests if path in oracle}


def is_derived(path: str) -> bool:
    """A hidden test file derived from the oracle by validation (:mod:`.derive`)."""
    return path.rsplit("/", 1)[-1] == DERIVED_FILE


def prepare(task_dir: Path, task: Task) -> tuple[Task, dict[str, str]]:
    """Mine hidden tests into ``tests/`` (the oracle's versions) and mark the verifier.

    Returns the mined tests. A derived test file validation wrote earlier stays in ``tests/``
    (and in the verifier's list) while the mined tests are unchanged; validation re-derives it.
    """
    if task.family == "qa" or task.verifier.kind in ("none", "answer") or not task.oracle:
        return task, {}
    hidden = mined_tests(task.verifier.tests, read_tree(task_dir / task.oracle))
    if not hidden:
        return task, {}
    target = task_dir / HIDDEN_DIR
    current = read_tree(target)
    derived = {p for p in current if is_derived(p)}
    if {p: t for p, t in current.items() if p not in derived} != hidden:
        staging = write_tree(task_dir / f".{HIDDEN_DIR}.staging", hidden)
        shutil.rmtree(target, ignore_errors=True)
        staging.rename(target)
        derived = set()
    names = tuple(sorted({*hidden, *derived}))
    verifier = task.verifier.model_copy(update={"kind": "tests", "tests": names})
    return task.model_copy(update={"verifier": verifier}), hidden


class MinedTeacher:
    """The offline teacher: the session's own tests, mined from the oracle, proven once."""

    name = MINED
    writes_tests = False

    @classmethod
    def from_spec(cls, name: str, cfg: ValidateConfig, out_dir: Path) -> MinedTeacher:
        """``mined`` takes no settings."""
        return cls()

    def hidden_tests(self, task_dir: Path, task: Task, prove: Prove) -> tuple[Task, Validation]:
        """Mine the oracle's test files into ``tests/`` and prove them."""
        task, hidden = prepare(task_dir, task)
        return task, prove(task, hidden)

    def write_instruction(self, brief: InstructionBrief) -> WrittenInstruction | None:
        """None: the offline instruction (request + interface) is used."""
        return None
