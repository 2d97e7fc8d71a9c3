"""Formatters a session ran — directly, through a package script, or as the pre-commit hook
of a ``git commit`` — mark the files they may have rewritten ``formatted`` (the same code, kept
as it was before, in a layout that may differ), unless the output shows they rewrote nothing.

The shapes are the real pi-mono ones: a husky hook running ``npm run check``, whose script is
``biome check --write . && npm run check --workspaces``; on the real session, replay took the
pre-format text of nine files the hook or ``npm run check`` had rewritten for their exact text
(the repository's commits hold the formatted text: imports sorted by biome). Since then they are
marked, and the session's commit replaces them; where no commit holds them, the pre-format text
still serves (before-compaction's ``showSelector()`` refactor: ``npm run check | grep error``
may have rewritten interactive-mode.ts, and the file was lost).
"""

from __future__ import annotations

import json
import re

import pytest

from trajforge.reconstruct.formatters import command_formatters, commit_hook
from trajforge.reconstruct.replay import replay

from .events import Script

HUSKY = "#!/bin/sh\nSTAGED_FILES=$(git diff --cached --name-only)\nnpm run check\n"
ROOT = {"scripts": {"check": "biome check --write . && npm run check --workspaces --if-present"}}
PACKAGE = {"scripts": {"check": "biome check --write . && tsgo --noEmit"}}
PI_MONO = {
    ".husky/pre-commit": HUSKY,
    "package.json": json.dumps(ROOT),
    "packages/agent/package.json": json.dumps(PACKAGE),
    "packages/agent/src/index.ts": 'export { a } from "./a.js";\n',
    "packages/agent/README.md": "# agent\n",
}
NO_FIXES = (
    "> pi-monorepo@0.0.3 check\n> biome check --write . && npm run check --workspaces\n\n"
    "Checked 231 files in 153ms. No fixes applied.\n\n> @x/agent@0.14.2 check\n"
    "Checked 36 files in 44ms. No fixes applied.\n✅ All pre-commit checks passed!\n"
)
FIXED = NO_FIXES.replace("153ms. No fixes applied.", "130ms. Fixed 2 files.")
NEW = "import { spawn, type ChildProcess } from 'child_process';\n"


def _session(*commands: tuple[str, int, str]) -> Script:
    """The session writes a new .ts file and edits a markdown file, then runs ``commands``."""
    s = Script().write("/w/packages/agent/src/exec.ts", NEW)
    s.edit("/w/packages/agent/README.md", "# agent", "# agent\n\nexec")
    for command, code, output in commands:
        s.shell(command, code, output)
    return s


def _end(s: Script, tree: dict[str, str] = PI_MONO) -> tuple[dict[str, str], set[str]]:
    """The files at the end, and those a formatter may have rewritten (kept or unknown)."""
    state = replay(s.events, "/w", base=dict(tree), started_with=frozenset(tree))
    end = state.state_at(len(s.events) - 1)
    kept = {p for p, versions in state.history.items() if versions[-1].origin == "formatted"}
    assert kept <= set(end.files)
    return end.files, kept | set(end.missing)


def test_the_real_hook_is_read_through_npm_scripts_and_workspaces() -> None:
    found = commit_hook(
        PI_MONO.get, PI_MONO.__contains__, lambda: [p for p in PI_MONO if "package" in p]
    )
    assert {(f.name, f.source) for f in found} == {("biome", "husky")}
    assert found[0].files.fullmatch("src/a.ts") and not found[0].files.fullmatch("README.md")


@pytest.mark.parametrize(
    "command",
    [
        'cd /w && git add -A && git commit -m "WP1: Create bash-executor.ts"',
        "cd /w && npm run check",
        "cd /w/packages/agent && npx @biomejs/biome check --write .",
    ],
)
def test_a_formatter_that_fixed_files_marks_the_changed_ones(command: str) -> None:
    files, missing = _end(_session((command, 0, FIXED)))
    assert missing == {"packages/agent/src/exec.ts"}  # biome does not format markdown
    assert files["packages/agent/src/exec.ts"] == NEW  # the same code, its layout unsure
    assert files["packages/agent/README.md"] == "# agent\n\nexec\n"
    assert files["packages/agent/src/index.ts"] == PI_MONO["packages/agent/src/index.ts"]


@pytest.mark.parametrize(
    ("command", "code", "output"),
    [
        ('git add -A && git commit -m "x"', 0, NO_FIXES),  # the hook's output proves it
        ('git commit --no-verify -am "x"', 0, ""),
        ('git commit -nm "x"', 0, ""),
        ('HUSKY=0 git commit -m "x"', 0, ""),
        ('git -c core.hooksPath=/dev/null commit -m "x"', 0, ""),
        ("npm run check", 1, NO_FIXES + "src/x.ts(3,1): error TS2304"),
        ("git status && git diff", 0, ""),
    ],
)
def test_no_file_is_unknown_when_no_formatter_rewrote_it(
    command: str, code: int, output: str
) -> None:
    files, missing = _end(_session((command, code, output)))
    assert not missing and files["packages/agent/src/exec.ts"] == NEW


def test_a_filtered_or_cut_output_proves_nothing() -> None:
    for output in ("", "src/a.ts:1 error", NO_FIXES + "\n[Output truncated. Full output: /tmp/x]"):
        _, missing = _end(_session(("npm run check 2>&1 | grep error", 0, output)))
        assert missing == {"packages/agent/src/exec.ts"}


def test_a_file_formatted_once_is_not_unknown_again_until_the_session_changes_it() -> None:
    s = _session(("npm run check", 0, FIXED)).read("/w/packages/agent/src/exec.ts", "fmt\n")
    s.shell('git commit -am "x"', 0, FIXED)
    files, missing = _end(s)
    assert files["packages/agent/src/exec.ts"] == "fmt\n" and not missing


def test_a_moved_file_keeps_its_formatted_state() -> None:
    s = _session(("npm run check", 0, NO_FIXES))
    s.shell("cd /w/packages/agent/src && mv exec.ts run.ts", 0)
    s.shell('git commit -am "move"', 0, FIXED)
    files, missing = _end(s)
    assert files["packages/agent/src/run.ts"] == NEW and not missing


def test_fixes_among_files_the_session_did_not_change_are_named_in_a_divergence() -> None:
    s = Script().edit("/w/packages/agent/README.md", "# agent", "# Agent")
    s.shell('git commit -am "docs"', 0, FIXED)
    state = replay(s.events, "/w", base=dict(PI_MONO), started_with=frozenset(PI_MONO))
    assert any(re.search(r"biome fixed 2 file\(s\), 0 of them", d) for d in state.divergences)


LINT_STAGED = {
    "package.json": json.dumps(
        {"lint-staged": {"*.{ts,tsx}": ["eslint --fix", "prettier --write"], "*.md": "echo"}}
    ),
    ".husky/pre-commit": "npx lint-staged\n",
    "src/a.ts": "a\n",
    "docs/x.md": "x\n",
    "src/b.tsx": "b\n",
}


def test_lint_staged_rewrites_what_its_globs_name() -> None:
    s = Script().write("/w/src/a.ts", "A\n").write("/w/docs/x.md", "X\n").read("src/b.tsx", "b\n")
    s.shell('git add -A && git commit -m "x"', 0, "✔ Running tasks for staged files...")
    files, missing = _end(s, LINT_STAGED)
    assert missing == {"src/a.ts"} and files["docs/x.md"] == "X\n" and files["src/b.tsx"] == "b\n"


PRE_COMMIT = {
    ".pre-commit-config.yaml": (
        "repos:\n  - repo: https://github.com/astral-sh/ruff-pre-commit\n    rev: v0.13.3\n"
        "    hooks:\n      - id: ruff-check\n        args: [ --fix ]\n      - id: ruff-format\n"
        "  - repo: local\n    hooks:\n      - id: mypy\n        entry: mypy\n"
    ),
    "trl/a.py": "x=1\n",
    "README.md": "r\n",
}


@pytest.mark.parametrize(("code", "unknown"), [(0, set()), (1, {"trl/a.py"})])
def test_the_pre_commit_framework_fails_when_a_hook_rewrote_a_file(
    code: int, unknown: set[str]
) -> None:
    s = Script().write("/w/trl/a.py", "x=2\n").write("/w/README.md", "R\n")
    s.shell('git commit -am "x"', code, "ruff format....Failed\n- files were modified by this hook")
    _, missing = _end(s, PRE_COMMIT)
    assert missing == unknown


def test_a_formatting_script_replay_holds_no_text_of_is_taken_at_its_name() -> None:
    """No repository, package.json never read: ``npm run format`` may rewrite anything the
    session changed; ``npm run lint`` and ``npm test`` are taken to rewrite nothing."""
    s = Script().write("/w/src/a.ts", "A\n").shell("npm run lint && npm test", 0)
    assert replay(s.events, "/w").state_at(len(s.events) - 1).files == {"src/a.ts": "A\n"}
    s.shell("npm run format", 0, "")
    state = replay(s.events, "/w")
    assert state.history["src/a.ts"][-1].origin == "formatted"
    assert state.state_at(len(s.events) - 1).files == {"src/a.ts": "A\n"}  # the same code


def test_a_direct_formatter_rewrites_only_the_paths_it_names() -> None:
    tree = {"src/a.ts": "a\n", "src/b.ts": "b\n"}
    s = Script().write("/w/src/a.ts", "A\n").write("/w/src/b.ts", "B\n")
    s.shell("npx prettier --write src/a.ts", 0, "src/a.ts 12ms")
    files, missing = _end(s, tree)
    assert missing == {"src/a.ts"} and files["src/b.ts"] == "B\n"
    s.shell("ruff format --check . && black --check src", 0, "")  # checks rewrite nothing
    assert _end(s, tree)[1] == {"src/a.ts"}


@pytest.mark.parametrize(
    ("words", "names"),
    [
        (["npx", "prettier", "--write", "."], {"prettier"}),
        (["npx", "-y", "@biomejs/biome", "format", "--write", "src"], {"biome"}),
        (["uv", "run", "ruff", "format", "."], {"ruff"}),
        (["ruff", "check", "--fix", "."], {"ruff-check"}),
        (["ruff", "check", "."], set()),
        (["prettier", "--check", "."], set()),
        (["git", "commit", "-m", "run prettier --write"], set()),
        (["eslint", "--fix", "--ext", ".ts", "src"], {"eslint"}),
        (["xargs", "-0", "npx", "prettier", "--write"], {"prettier"}),
    ],
)
def test_which_commands_run_a_formatter(words: list[str], names: set[str]) -> None:
    found, _ = command_formatters(words, lambda p: None, lambda p: False, list)
    assert {f.name for f in found} == names


def test_a_formatted_file_is_named_and_a_commit_of_the_session_replaces_it() -> None:
    s = _session(("npm run check 2>&1 | grep error", 0, ""))
    state = replay(s.events, "/w", base=dict(PI_MONO), started_with=frozenset(PI_MONO))
    assert any(
        "biome may have reformatted packages/agent/src/exec.ts" in d for d in state.divergences
    )
    s.shell('git commit -m "exec"', 0, "[main 1234567] exec")
    formatted = NEW.replace("'child_process'", '"node:child_process"')
    commits = {len(s.events) - 1: {"packages/agent/src/exec.ts": formatted}}
    state = replay(
        s.events, "/w", base=dict(PI_MONO), started_with=frozenset(PI_MONO), commits=commits
    )
    assert state.state_at(len(s.events) - 1).files["packages/agent/src/exec.ts"] == formatted
    assert not any("unlike replay" in d for d in state.divergences)


def test_a_substitution_that_matches_nothing_in_a_formatted_file_leaves_it_unknown() -> None:
    """biome may have turned ``'child_process'`` into ``"node:child_process"``: a sed that
    finds nothing in the text as it was before may have changed the formatted one."""
    s = _session(("npm run check 2>&1 | grep error", 0, ""))
    s.shell('sed -i \'s|"node:child_process"|"node:cp"|\' /w/packages/agent/src/exec.ts', 0)
    files, marked = _end(s)
    assert "packages/agent/src/exec.ts" not in files and "packages/agent/src/exec.ts" in marked
    s = _session(("npm run check 2>&1 | grep error", 0, ""))
    s.shell("sed -i 's|spawn,|spawn as run,|' /w/packages/agent/src/exec.ts", 0)
    assert _end(s)[0]["packages/agent/src/exec.ts"] == NEW.replace("spawn,", "spawn as run,")
