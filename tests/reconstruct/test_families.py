"""Episodes and families on synthetic sessions, each family with the reason recorded."""

from __future__ import annotations

from trajforge.reconstruct.changed_files import is_test_file
from trajforge.reconstruct.episodes import check_runs
from trajforge.reconstruct.families import candidates
from trajforge.reconstruct.replay import replay

from .events import Script

PYTEST = "python3 -m pytest -q"


def _families(s: Script) -> list[str]:
    return sorted(c.family for c in candidates(s.events, replay(s.events, "/w")).candidates)


def test_build_from_empty_start() -> None:
    s = (
        Script()
        .user("make a calculator")
        .write("calc.py", "def add(a, b):\n    return a + b\n")
        .write("test_calc.py", "from calc import add\n")
        .shell(PYTEST, 0)
        .say("done")
    )
    found = candidates(s.events, replay(s.events, "/w")).candidates
    assert [c.family for c in found] == ["build"]
    build = found[0]
    assert build.command == PYTEST and build.tests == ("test_calc.py",)
    assert build.start.files == {} and set(build.end.files) == {"calc.py", "test_calc.py"}
    assert "0 known file(s)" in build.reasons[0]


def test_extend_changes_existing_code() -> None:
    s = (
        Script()
        .user("add a sub(a, b) function to calc.py")
        .read("calc.py", "def add(a, b):\n    return a + b\n")
        .read("util.py", "X = 1\n")
        .read("README.md", "calc\n")
        .edit("calc.py", "return a + b\n", "return a + b\n\n\ndef sub(a, b):\n    return a - b\n")
        .say("added")
    )
    assert _families(s) == ["extend"]


def test_repair_per_fail_pass_pair_with_probes() -> None:
    s = (
        Script()
        .user("fix the tests")
        .read("m.py", "v = 0\n")
        .shell(PYTEST, 1, "FAILED test_m.py::test_v")
        .edit("m.py", "v = 0", "v = 2")
        .shell(PYTEST, 1, "FAILED again")
        .edit("m.py", "v = 2", "v = 1")
        .shell(PYTEST, 0, "1 passed")
        .say("fixed")
    )
    state = replay(s.events, "/w")
    repairs = [c for c in candidates(s.events, state).candidates if c.family == "repair"]
    assert len(repairs) == 1
    repair = repairs[0]
    assert repair.start.files == {"m.py": "v = 0\n"}
    assert repair.end is not None and repair.end.files == {"m.py": "v = 1\n"}
    assert [p.files for p in repair.probes] == [{"m.py": "v = 2\n"}]
    assert "FAILED test_m.py::test_v" in repair.instruction
    assert repair.command == PYTEST


def test_fail_pass_without_edits_is_not_a_repair() -> None:
    s = Script().user("run").shell(PYTEST, 1).shell(PYTEST, 0).say("flaky")
    assert "repair" not in _families(s)


def test_two_pairs_give_two_repairs() -> None:
    s = (
        Script()
        .user("fix")
        .read("a.py", "a = 0\n")
        .shell(PYTEST, 1)
        .edit("a.py", "0", "1")
        .shell(PYTEST, 0)
        .edit("a.py", "1", "2")
        .shell(PYTEST, 1)
        .edit("a.py", "2", "3")
        .shell(PYTEST, 0)
    )
    assert _families(s).count("repair") == 2


def test_qa_when_nothing_changes() -> None:
    s = (
        Script()
        .user("what is the total of column a in d.csv?")
        .read("d.csv", "a\n1\n2\n")
        .shell(
            "python3 -c 'print(sum(int(x) for x in open(\"d.csv\").read().split()[1:]))'", 0, "3\n"
        )
        .say("The total is 3.")
    )
    found = candidates(s.events, replay(s.events, "/w")).candidates
    assert [c.family for c in found] == ["qa"]
    assert found[0].answer == "The total is 3." and found[0].start.files == {"d.csv": "a\n1\n2\n"}
    assert found[0].answer_key is not None
    assert [(f.kind, f.value) for f in found[0].answer_key.required] == [("number", "3")]
    assert found[0].answer_key.required[0].grounded_in.startswith("output:python3 -c")


def test_a_computed_answer_no_command_printed_is_not_grounded() -> None:
    s = Script().user("what is the total of column a in d.csv?").read("d.csv", "a\n1\n2\n")
    found = candidates(s.say("The total is 3.").events, replay(s.events, "/w"))
    assert found.candidates == []
    assert [(d.reason, d.detail) for d in found.drops] == [
        (
            "conversation",
            "the answer states no fact grounded in the workspace or a re-runnable command",
        )
    ]


def test_refused_commands_are_not_check_runs() -> None:
    s = Script().shell(PYTEST, None).shell("ls", 0).shell(PYTEST, 2)
    runs = check_runs(s.events)
    assert [(r.command, r.passed) for r in runs] == [(PYTEST, False)]


def test_test_file_names() -> None:
    for path in ("test_a.py", "pkg/a_test.go", "src/x.test.ts", "tests/helpers.py", "a.spec.js"):
        assert is_test_file(path), path
    for path in ("calc.py", "src/testing_utils.ts", "contest.py"):
        assert not is_test_file(path), path
