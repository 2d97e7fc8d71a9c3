"""Units of issue 19's verifier strength: inputs from text, the observer (record / observe),
derived test files, where they go, and the fail-to-pass reward. No sandbox: the runner is
stdlib Python and runs here as it runs inside one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixtures.verify_sessions.scenarios import SCENARIOS, WORDFREQ_TRY
from trajforge.records import TestSets
from trajforge.verifiers.validate.derive import derived_place
from trajforge.verifiers.validate.derived_file import (
    DerivedInput,
    expected_source,
    lenient_differs,
    render,
)
from trajforge.verifiers.validate.inputs import calls_in, public_functions, static_inputs
from trajforge.verifiers.validate.junit import RunOutcome
from trajforge.verifiers.validate.junit import TestResult as Result
from trajforge.verifiers.validate.observe import SITECUSTOMIZE, CallInput
from trajforge.verifiers.validate.reward import fail_to_pass_sets, score

RUNNER = Path(__file__).parents[2] / "verifiers" / "validate" / "_observe_runner.py"
LIB = """from collections import Counter


def count(text):
    return Counter(text.split())


def mean(xs):
    return sum(xs) / len(xs)


def grow(xs):
    xs.append(len(xs))


def shout(word):
    print(word.upper())
    return None


def evens(n):
    return (i for i in range(n) if i % 2 == 0)


def spin(n):
    while n >= 0:
        n += 1


def check(n):
    if n < 0:
        raise ValueError("negative")
    return n
"""


def test_calls_in_text_take_literal_calls_of_public_functions_only() -> None:
    functions = {"slugify": "slugkit/core.py", "top_words": "wordfreq.py"}
    text = (
        'e.g. slugify("Hello, World!") returns "hello-world"; slugify(name) and '
        "slugify(“smart”) are not inputs, nor is x.slugify('a'); top_words('a (b) c', n=2)."
    )
    found = {(i.function, i.args, i.kwargs) for i in calls_in(text, functions, "instruction", "")}
    assert found == {
        ("slugify", "('Hello, World!',)", "{}"),
        ("top_words", "('a (b) c',)", "{'n': 2}"),
    }
    assert public_functions({"m.py": "def f():\n    pass\n\ndef _g():\n    pass\n"}) == {
        "f": "m.py"
    }
    wordfreq = SCENARIOS[1]
    found_all = static_inputs(
        wordfreq.request, [WORDFREQ_TRY], {"wordfreq.py": "def top_words(text, n=3):\n    pass\n"}
    )
    assert [(i.source, i.text()) for i in found_all] == [
        ("instruction", "top_words('the cat the hat', 1)"),
        ("session", "top_words('y x y x z', 1)"),
    ]


@pytest.mark.parametrize(
    ("command", "path"),
    [
        ("python3 -m pytest -q -p no:cacheprovider", "test_trajforge_derived.py"),
        ("cd sub && python -m pytest -q", "sub/test_trajforge_derived.py"),
        ("pytest -k fast tests", "tests/test_trajforge_derived.py"),
        ("pytest tests/test_x.py", None),
        ("npm test", None),
    ],
)
def test_derived_file_goes_where_the_check_collects(command: str, path: str | None) -> None:
    files = {"tests/test_x.py": "", "sub/test_y.py": "", "x.py": ""}
    assert derived_place(command, files)[1] == path


def _run_observe(ws: Path, inputs: list[dict[str, str | None]], trace: bool) -> dict:  # type: ignore[type-arg]
    plan = {"cwd": ".", "paths": [], "targets": ["lib.py"], "inputs": inputs, "trace": trace}
    plan |= {"timeout": 0.5, "results": str(ws / "out.json")}
    (ws / "plan.json").write_text(json.dumps(plan))
    done = subprocess.run(
        [sys.executable, str(RUNNER), "observe", "plan.json"],
        cwd=ws,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    return json.loads((ws / "out.json").read_text())  # type: ignore[no-any-return]


def test_observer_reports_values_exceptions_output_and_changes(tmp_path: Path) -> None:
    (tmp_path / "lib.py").write_text(LIB)
    calls = [
        ("count", "('b a b',)"),
        ("mean", "([1, 2],)"),
        ("grow", "([5],)"),
        ("shout", "('hi',)"),
        ("evens", "(5,)"),
        ("spin", "(0,)"),
        ("check", "(-1,)"),
        ("nothing", "()"),
    ]
    inputs = [
        {"id": str(n), "file": "lib.py", "function": f, "args": a, "kwargs": "{}", "module": None}
        for n, (f, a) in enumerate(calls)
    ]
    doc = _run_observe(tmp_path, inputs, trace=True)
    got = doc["results"]
    assert got["0"]["type"] == "Counter" and got["0"]["value"] == "{'b': 2, 'a': 1}"
    assert got["0"]["module"] == "lib"
    assert got["1"]["value"] == "1.5"
    assert got["2"]["value"] == "None" and got["2"]["args_after"] == "(([5, 1],), {})"
    assert got["3"]["stdout"] == "HI\n"
    assert got["4"]["value"] == "[0, 2, 4]"  # a generator, materialised
    assert got["5"]["status"] == "timeout"
    assert got["6"]["status"] == "raised" and "Exception" in got["6"]["exc_mro"]
    assert got["7"]["status"] == "unresolved"
    lines = {n for _, n in doc["lines"]}
    assert 2 not in lines and 5 in lines  # no def line (defaults ran at import), bodies ran


def test_recorder_notes_interface_calls_with_their_test(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "core.py").write_text(
        "def helper(x):\n    return x\n\n\ndef api(x, *, n=1):\n    return helper(x) * n\n"
    )
    (pkg / "__init__.py").write_text("from pkg.core import api\n")
    (tmp_path / "test_pkg.py").write_text(
        "from pkg import api\n\n\ndef test_api():\n    assert api('ab', n=2) == 'abab'\n"
        "    assert api([object()]) is not None\n"
    )
    tools = tmp_path / ".trajforge-observe"
    tools.mkdir()
    (tools / "trajforge_observe.py").write_text(RUNNER.read_text())
    (tools / "sitecustomize.py").write_text(SITECUSTOMIZE)
    plan = {"root": str(tmp_path), "targets": ["pkg/core.py"], "out": str(tmp_path / "rec")}
    (tools / "record.json").write_text(json.dumps(plan))
    env = {**os.environ, "PYTHONPATH": str(tools), "TRAJFORGE_OBSERVE": str(tools / "record.json")}
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    ran = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    collect = [
        sys.executable,
        str(tools / "trajforge_observe.py"),
        "collect",
        str(tmp_path / "rec"),
    ]
    out = subprocess.run(collect, capture_output=True, text=True, check=True)
    calls = json.loads(out.stdout)["calls"]
    assert calls == [
        {
            "file": "pkg/core.py",
            "function": "api",
            "module": "pkg",
            "args": "('ab',)",
            "kwargs": "{'n': 2}",
            "origin": "test_pkg.py::test_api",
        }
    ]  # helper() is called inside the package; [object()] is no literal


def _item(function: str, args: str) -> CallInput:
    return CallInput("lib.py", function, args, "{}", "session", "python3 -c ...", "lib")


def test_derived_file_passes_on_the_oracle_and_fails_on_a_mutant(tmp_path: Path) -> None:
    seen = {"status": "returned", "type": "Counter", "value": "{'b': 2, 'a': 1}", "stdout": ""}
    assert expected_source(seen) == "{'value': {'b': 2, 'a': 1}}"
    assert not lenient_differs(seen, {**seen, "type": "dict"})  # Counter or dict: same data
    assert lenient_differs(seen, {**seen, "value": "{'b': 1, 'a': 1}"})
    near = {"status": "returned", "value": "1.5000000000000002", "stdout": ""}
    assert not lenient_differs({"status": "returned", "value": "1.5"}, near)
    assert lenient_differs({"status": "returned", "value": "(1, 2)"}, {**near, "value": "[1, 2]"})
    assert expected_source({"status": "returned", "value": None, "repr": "<obj>"}) is None
    raised = {"status": "raised", "type": "ValueError", "exc_mro": ["ValueError", "Exception"]}
    count, check = _item("count", "('b a b',)"), _item("check", "(-1,)")
    candidates = [
        DerivedInput("test_trajforge_d01_count", count, expected_source(seen) or "", ("m1",)),
        DerivedInput("test_trajforge_d02_check", check, expected_source(raised) or "", ("m2",)),
    ]
    (tmp_path / "test_trajforge_derived.py").write_text(render(candidates))
    (tmp_path / "lib.py").write_text(LIB)
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    oracle = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True)
    assert oracle.returncode == 0, oracle.stdout
    (tmp_path / "lib.py").write_text(LIB.replace("if n < 0:", "if n < -1:"))
    mutant = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True)
    assert mutant.returncode == 1 and "1 failed, 1 passed" in mutant.stdout, mutant.stdout


def _run(outcomes: dict[str, str], status: str = "fail") -> RunOutcome:
    tests = tuple(Result(name=n, outcome=o) for n, o in outcomes.items())  # type: ignore[arg-type]
    return RunOutcome(status=status, exit_code=0 if status == "pass" else 1, tests=tests)  # type: ignore[arg-type]


def test_fail_to_pass_reward() -> None:
    oracle = [_run({"a": "passed", "b": "passed", "c": "passed", "f": "passed"}, "pass")] * 2
    flaky = _run({"a": "passed", "b": "passed", "c": "passed", "f": "failed"})
    start = _run({"a": "passed", "b": "failed", "c": "failed", "f": "passed"})
    sets = fail_to_pass_sets([*oracle, flaky], start, dropped=["f"])
    assert sets == TestSets(fail_to_pass=("b", "c"), pass_to_pass=("a",))
    assert score(start, sets).reward == 0.0  # nothing changed: 0, though "a" passes
    assert score(_run({"a": "passed", "b": "passed", "c": "failed"}), sets).reward == 0.0
    assert score(_run({"a": "failed", "b": "passed", "c": "passed"}), sets).broken == ("a",)
    done = score(_run({"a": "passed", "b": "passed", "c": "passed", "mine": "failed"}), sets)
    assert done.reward == 1.0 and (done.fixed, done.to_fix) == (2, 2)  # its own tests do not count
    assert score(_run({}, "timeout"), sets).reward == 0.0
    legacy = score(_run({"a": "passed"}, "pass"), None)
    assert legacy.reward == 1.0 and score(start, None).reward == 0.0
    assert fail_to_pass_sets(oracle, None).fail_to_pass == ("a", "b", "c", "f")
