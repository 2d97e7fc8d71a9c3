"""Which files a recorded shell command wrote, read as the shell reads it.

The first cases are commands from the real pi-mono session (macOS, so ``sed -i ''``), whose
crude reading once made '(c', '2>/dev/null', 's/main-new/main/g' and 'config)' "missing files"
and put files removed after a ``cd`` at the workspace root.
"""

from __future__ import annotations

import random
import string
from pathlib import Path

import pytest

from trajforge.reconstruct.formats.pi import PiFormat
from trajforge.reconstruct.shell import is_mutating, redirect_targets, strip_comments
from trajforge.reconstruct.shell_writes import changes
from trajforge.records import Session

REAL = Path(__file__).parents[3] / "shared" / "corpus" / "pi-mono" / "before-compaction.jsonl"


def written_paths(command: str) -> list[str]:
    """Every file a command changed: destinations, and the sources a move removed."""
    paths: list[str] = []
    for change in changes(command):
        paths.append(change.path)
        if change.kind == "move" and change.source is not None:
            paths.append(change.source)
    return paths


CASES = [
    # real commands (pi-mono, before-compaction.jsonl)
    ("sed -i '' 's/main-new/main/g' /U/p/src/cli.ts", ["/U/p/src/cli.ts"]),
    (
        "cd /U/p/src && rm main.ts cli.ts tui/tui-renderer.ts && rmdir tui 2>/dev/null; "
        'echo "done"',
        ["/U/p/src/main.ts", "/U/p/src/cli.ts", "/U/p/src/tui/tui-renderer.ts"],
    ),
    (
        "cd src\n\n# Fix imports in core/ (../utils/config -> ../config)\n"
        "sed -i '' 's|from \"../utils/config.js\"|from \"../config.js\"|g' core/agent.ts\n",
        ["src/core/agent.ts"],
    ),
    (
        "sed -i '' 's/map((c: { text: string }) => c.text).join(\"\");/map(f).join(\"\");/g' a.ts",
        ["a.ts"],
    ),
    ("rm /U/p/pi-session-*.html 2>/dev/null; echo done", []),  # a glob: no knowable file
    # sed and perl options
    ("sed -i 's/a/b/' x.py y.py", ["x.py", "y.py"]),
    ("sed -i.bak -e s/a/b/ -e s/c/d/ f g", ["f", "g"]),
    ("sed -E -i 's/a+/b/' f.txt", ["f.txt"]),
    ("sed -i -es/a/b/ f", ["f"]),
    ("sed -n 's/a/p' f", []),
    ("perl -pi -e 's/a/b/' f", ["f"]),
    ("perl -Ilib -e 'print 1' f", []),
    # other writers, redirections, subshells, cd
    ("cat a | tee -a b.txt", ["b.txt"]),
    ("cp -r a b/", ["b"]),
    ("mkdir -p ~/.pi/t && cp src/dark.json ~/.pi/t/test.json", ["~/.pi/t/test.json"]),
    ("mv old.py new.py", ["new.py", "old.py"]),
    ("truncate -s 0 log.txt", ["log.txt"]),
    ('touch -d "2 days ago" f', ["f"]),
    ("(cd sub && touch x); touch y", ["sub/x", "y"]),
    ("cd $DIR && rm x; rm /abs/y", ["/abs/y"]),
    ("cd pkg && cd .. && touch z", ["z"]),
    ('echo "a > b" && grep -n "=>" x.ts', []),
    ("echo hi > out.txt 2>&1", ["out.txt"]),
    ("echo a#b > f # not > g", ["f"]),
    ("cat <<EOF > gen.py\nprint(1) > no\nEOF", ["gen.py"]),
    ("rm -rf *.pyc build", ["build"]),
    ('echo "unbalanced > f', []),
]


@pytest.mark.parametrize(("command", "expected"), CASES)
def test_written_paths(command: str, expected: list[str]) -> None:
    assert written_paths(command) == expected


def test_comments_start_only_at_a_word_outside_quotes() -> None:
    assert strip_comments("echo a#b '# kept' \"#kept\" # gone\nls # gone too") == (
        "echo a#b '# kept' \"#kept\" \nls "
    )


def test_redirects_read_through_quotes() -> None:
    assert redirect_targets("echo 'x > y' > real.txt 2>>err.log >&2") == ["real.txt", "err.log"]
    assert not is_mutating('grep -n "a > b" x.py 2>&1')
    assert is_mutating("echo hi > out.txt")
    assert not is_mutating("ls > /dev/null")


@pytest.mark.skipif(not REAL.is_file(), reason=f"real corpus not found at {REAL}")
def test_no_word_of_the_real_session_is_taken_for_a_file() -> None:
    """Every file the real session's shell commands are said to write is a plausible path:
    no sed script, redirection, descriptor or comment fragment."""
    (session,) = [s for s in PiFormat().parse(REAL) if isinstance(s, Session)]
    commands = [e.command for e in session.events if e.kind == "tool_call" and e.command]
    found = {p for c in commands for p in written_paths(c)}
    assert found, "the session's commands write files"
    junk = {p for p in found if any(ch in p for ch in "()|;'\" >") or p.startswith(("s/", "2>"))}
    assert not junk
    assert "/Users/badlogic/workspaces/pi-mono/packages/coding-agent/src/cli.ts" in found
    assert not {"main.ts", "cli.ts", "(c", "2>/dev/null", "s/main-new/main/g"} & found


PIECES = [
    "sed -i ''", "mv", "cp -r", "rm -rf", "cd", "..", "~", "/", ">", ">>", "2>&1", "&>",
    "<<EOF\n", "\nEOF", "'", '"', "\\", "#", ";", "&&", "||", "|", "(", ")", "$(", "`", "*",
    "-t", "-e", "--", "\n", "x.py", "dir/", ".",
]  # fmt: skip


def test_any_text_is_read_without_raising() -> None:
    """Recorded commands are arbitrary text (cut off, binary, half-quoted): reading them
    never raises, and every path found is one a command could name."""
    rng = random.Random(1)
    for i in range(3000):
        if i % 2:
            command = "".join(rng.choice(string.printable) for _ in range(rng.randint(0, 80)))
        else:
            command = " ".join(rng.choice(PIECES) for _ in range(rng.randint(0, 15)))
        for change in changes(command):
            assert change.path and not change.path.startswith("/dev/")
