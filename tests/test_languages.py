"""Every registered :class:`~trajforge.protocols.Language` over a small project in its language:
it tells its source from its tests, states the oracle's contract, stubs it, mutates its changed
lines, places a hidden test where its runner looks, and that test — run with the language's
command in the real local sandbox — passes on the oracle and fails on the stub and on the start."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from trajforge.oracles.changes import changed_lines
from trajforge.oracles.mutate import mutants
from trajforge.protocols import Language
from trajforge.registry import LANGUAGES, SANDBOXES, create
from trajforge.verifiers.languages import language_named, language_of
from trajforge.verifiers.validate.files import layered, write_tree


@dataclass(frozen=True)
class Project:
    start: dict[str, str]
    oracle: dict[str, str]
    hidden: str
    """The hidden test's text (its path comes from the language)."""
    names: tuple[str, ...]
    """Names the contract must state."""
    fake: str
    """A test that fakes the outside world (a process runner or the network)."""
    dead: tuple[str, str, str]
    """(path, text, module): a source file that imports, when it loads, a workspace module the
    project lacks — no passing test can load it, so it gets no mutants."""
    alive: tuple[str, str]
    """(path, text): one that names a missing module but still loads."""


PROJECTS = {
    "python": Project(
        start={"calc.py": "def clamp(x, lo, hi):\n    return x\n"},
        oracle={
            "calc.py": "def clamp(x: int, lo: int, hi: int) -> int:\n"
            "    if x < lo:\n        return lo\n    return min(x, hi)\n"
        },
        hidden="from calc import clamp\n\n\ndef test_clamp():\n"
        "    assert clamp(-1, 0, 5) == 0\n    assert clamp(9, 0, 5) == 5\n"
        "    assert clamp(3, 0, 5) == 3\n",
        names=("def clamp(x: int, lo: int, hi: int) -> int",),
        fake="import subprocess\n\n\ndef test_run(monkeypatch):\n"
        '    monkeypatch.setattr(subprocess, "run", lambda *a, **k: None)\n',
        dead=("pkg/cli.py", "from .shell import run\n\n\ndef main():\n    run()\n", ".shell"),
        alive=(
            "pkg/cli.py",
            "try:\n    from .shell import run\nexcept ImportError:\n    run = None\n"
            "from . import helpers\n",
        ),
    ),
    "typescript": Project(  # JavaScript under node's own runner: nothing to install
        start={
            "package.json": '{"name": "calc", "type": "module"}\n',
            "src/calc.js": "export function clamp(x, lo, hi) {\n  return x;\n}\n",
        },
        oracle={
            "package.json": '{"name": "calc", "type": "module"}\n',
            "src/calc.js": "export function clamp(x, lo, hi) {\n"
            "  if (x < lo) {\n    return lo;\n  }\n  return Math.min(x, hi);\n}\n",
        },
        hidden='import { test } from "node:test";\nimport assert from "node:assert/strict";\n'
        'import { clamp } from "./calc.js";\n\ntest("clamp", () => {\n'
        "  assert.equal(clamp(-1, 0, 5), 0);\n  assert.equal(clamp(9, 0, 5), 5);\n"
        "  assert.equal(clamp(3, 0, 5), 3);\n});\n",
        names=("export function clamp(x, lo, hi)",),
        fake='import { mock, test } from "node:test";\n'
        'test("fetch", () => { mock.method(globalThis, "fetch", async () => null); });\n',
        dead=(
            "src/cli.ts",
            'import type { Opts } from "./opts.js";\nimport { run } from "./shell.js";\n\n'
            "export function main(o: Opts) {\n  run(o);\n}\n",
            "./shell.js",
        ),
        alive=(  # a type-only import is erased; a name used only as a type too
            "src/cli.ts",
            'import type { Opts } from "./opts.js";\nimport { Mode } from "./mode.js";\n'
            'import { clamp } from "./calc.js";\n\n'
            "export function main(o: Opts, m: Mode): number {\n  return clamp(1, 0, 2);\n}\n",
        ),
    ),
}


def test_every_registered_language_has_a_project() -> None:
    assert set(PROJECTS) == set(LANGUAGES)


@pytest.mark.parametrize("name", sorted(LANGUAGES))
def test_language_conforms(name: str) -> None:
    language = language_named(name)
    assert isinstance(language, Language) and language.name == name
    project = PROJECTS[name]
    source = [p for p in project.oracle if language.is_source(p)]
    assert source and language_of(project.oracle) is language
    path = source[0]
    assert all(n in language.contract(path, project.oracle[path]) for n in project.names)
    stub = language.stub(path, project.oracle[path])
    assert stub is not None and stub != project.oracle[path]
    lines = changed_lines(project.start, project.oracle)
    found = mutants(project.oracle, lines, seed=0, limit=10)
    assert found and all(m.path == path and m.content != project.oracle[path] for m in found)
    hidden = language.hidden_test_path(source, project.oracle)
    assert language.accepts_test_path(hidden) and not language.is_source(hidden)
    assert not language.accepts_test_path(path)
    assert language.fakes(project.hidden) == () and language.fakes(project.fake)
    assert language.unloadable(path, project.oracle) is None
    dead, text, module = project.dead
    assert language.is_source(dead)
    why = language.unloadable(dead, {**project.oracle, dead: text})
    assert why is not None and module in why, why
    alive, text = project.alive
    assert language.unloadable(alive, {**project.oracle, alive: text}) is None


@pytest.mark.parametrize("name", sorted(LANGUAGES))
def test_hidden_test_decides_in_the_sandbox(name: str, tmp_path: Path) -> None:
    """The language's command runs its hidden test: the oracle passes, stub and start fail."""
    sandbox = create(SANDBOXES, "local", "sandbox")
    if (reason := sandbox.available()) is not None:
        pytest.skip(f"LOCAL SANDBOX UNAVAILABLE, {name}'s runner is not checked: {reason}")
    language, project = language_named(name), PROJECTS[name]
    source = [p for p in project.oracle if language.is_source(p)]
    hidden = {language.hidden_test_path(source, project.oracle): project.hidden}
    command = language.test_command(list(hidden), project.oracle)
    stubbed = {p: language.stub(p, t) or t for p, t in project.oracle.items() if p in source}
    states = {
        "oracle": layered(project.oracle, hidden),
        "stub": layered(project.oracle, stubbed, hidden),
        "start": layered(project.start, hidden),
    }
    exits = {}
    for state, files in states.items():
        work = write_tree(tmp_path / state, files)
        with sandbox.session(work) as box:
            exits[state] = box.run(command, timeout=120).exit_code
    assert exits["oracle"] == 0, (command, exits)
    assert exits["stub"] != 0 and exits["start"] != 0, (command, exits)
