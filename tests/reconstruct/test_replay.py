"""Replay: history, back-propagation, divergences, confinement, shell marks."""

from __future__ import annotations

import random

import pytest

from trajforge.reconstruct.paths import PathViolation, confine, session_root
from trajforge.reconstruct.replay import replay
from trajforge.reconstruct.shell import check_key, is_check, is_mutating
from trajforge.reconstruct.shell_writes import changes

from .events import Script


def test_file_read_late_existed_from_the_start() -> None:
    s = Script().user("go").write("new.py", "x = 1\n").read("old.py", "y = 2\n")
    state = replay(s.events, "/w")
    start = state.state_at(0)
    assert start.files == {"old.py": "y = 2\n"}  # back-propagated read
    end = state.state_at(len(s.events) - 1)
    assert end.files == {"new.py": "x = 1\n", "old.py": "y = 2\n"}


def test_edit_applies_and_failed_calls_change_nothing() -> None:
    s = (
        Script()
        .read("a.py", "def f():\n    return 1\n")
        .edit("a.py", "return 1", "return 2")
        .write("a.py", "broken", error=True)
        .edit("a.py", "return 2", "return 3", error=True)
    )
    state = replay(s.events, "/w")
    assert state.state_at(len(s.events) - 1).files["a.py"] == "def f():\n    return 2\n"
    assert state.divergences == []


def test_edit_whose_old_text_is_missing_is_a_divergence_not_a_crash() -> None:
    s = Script().read("a.py", "alpha\n").edit("a.py", "beta", "gamma")
    state = replay(s.events, "/w")
    assert len(state.divergences) == 1 and "a.py" in state.divergences[0]
    end = state.state_at(len(s.events) - 1)
    assert "a.py" in end.missing and "a.py" not in end.files


def test_edit_of_unread_file_marks_it_missing() -> None:
    s = Script().edit("/w/src/x.ts", "a", "b")
    end = replay(s.events, "/w").state_at(len(s.events) - 1)
    assert end.missing == {"src/x.ts"}


def test_partial_read_is_reported_not_written() -> None:
    s = Script().read("big.py", "line 1\n", partial=True)
    end = replay(s.events, "/w").state_at(1)
    assert end.partial == {"big.py"} and end.files == {}


def test_a_ranged_read_showing_lines_replay_lacks_makes_the_file_known_in_part() -> None:
    """The user edited the file by hand between two reads (pi-mono's large-session: chalk calls
    removed while the agent worked): a later ranged read shows a line replay's content does not
    hold, so from there the file is known only in part and an edit of it leaves it unknown,
    instead of replay's stale text being carried into every later task."""
    start = "a = chalk.dim('x')\nb = 2\nc = 3\nd = 4\n"
    s = (
        Script()
        .read("ui.ts", start)
        .read("ui.ts", "b = 2\nc = 3\n", partial=True)  # agrees: still known
        .read("ui.ts", "a = theme.fg('dim', 'x')\nb = 2\n", partial=True)  # a hand edit
        .edit("ui.ts", "c = 3", "c = 30")
    )
    state = replay(s.events, "/w")
    assert state.state_at(3).files["ui.ts"] == start
    assert state.state_at(5).partial == {"ui.ts"} and "ui.ts" not in state.state_at(5).files
    end = state.state_at(len(s.events) - 1)
    assert end.missing == {"ui.ts"} and not end.files
    assert any("ranged read of ui.ts" in d for d in state.divergences)


def test_a_ranged_read_cut_at_its_last_or_a_long_line_proves_nothing() -> None:
    """A reader may cut the last line of a range (a byte limit) or shorten a very long line:
    neither is a sign of change, so the file stays known."""
    long = "x = '" + "y" * 600 + "'"
    start = f"a = 1\nb = 2\n{long}\nc = 3\n"
    s = (
        Script()
        .read("m.py", start)
        .read("m.py", "a = 1\nb = 2\n" + long[:100] + "…\nc = 3\n", partial=True)
        .read("m.py", "a = 1\nb = ", partial=True)
    )
    state = replay(s.events, "/w")
    assert state.state_at(len(s.events) - 1).files == {"m.py": start}
    assert state.divergences == []


def test_paths_are_confined() -> None:
    s = (
        Script()
        .write("/etc/passwd", "root")
        .write("../escape.txt", "x")
        .write("~/.bashrc", "x")
        .write("/w/ok.txt", "fine")
    )
    state = replay(s.events, "/w")
    assert state.state_at(len(s.events) - 1).files == {"ok.txt": "fine"}
    assert len(state.violations) == 3


def test_shell_commands_are_kept_as_a_sandbox_re_runs_them() -> None:
    """pi-mono's file move: ``cd /Users/badlogic/workspaces/pi-mono/packages/coding-agent/src
    && mv …`` and BSD ``sed -i ''`` — validation re-runs them from the workspace's root in a
    sandbox (GNU sed), where the session's root does not exist: they are kept relative to the
    root, and a command run below it (a recorded cwd) starts with ``cd`` there."""
    s = (
        Script()
        .read("src/a.ts", "x\n")
        .shell("cd /w/src && mv a.ts b.ts && sed -i '' 's|x|y|g' b.ts", 0)
        .shell("cd /w && npm run check", 1)
        .shell("sed -E -i \"\" 's/y/z/' b.ts", 0, cwd="/w/src")
        .shell("cp /w-old/b.ts /w/c.ts", 0)
        .shell("cp /srv/w/d.ts /w/d.ts", 0)
    )
    commands = [c for _, c in replay(s.events, "/w").shell_commands]
    assert commands == [
        "cd src && mv a.ts b.ts && sed -i 's|x|y|g' b.ts",
        "cd src && sed -E -i 's/y/z/' b.ts",
        "cp /w-old/b.ts c.ts",
        "cp /srv/w/d.ts d.ts",
    ]


def test_v4a_patch_updates_adds_and_deletes() -> None:
    patch = (
        "*** Begin Patch\n*** Update File: a.py\n@@\n-x = 1\n+x = 2\n"
        "*** Add File: b.py\n+print('b')\n*** Delete File: c.py\n*** End Patch\n"
    )
    s = Script().read("a.py", "x = 1\n").read("c.py", "gone\n").patch(patch)
    end = replay(s.events, "/w").state_at(len(s.events) - 1)
    assert end.files == {"a.py": "x = 2\n", "b.py": "print('b')\n"}


def test_shell_mutations_are_marked() -> None:
    s = Script().read("a.txt", "1\n").shell("sed -i 's/1/2/' a.txt", 0).shell("sed -i 1d a.txt", 0)
    state = replay(s.events, "/w")
    assert state.shell_commands == [(3, "sed -i 's/1/2/' a.txt"), (5, "sed -i 1d a.txt")]
    assert state.state_at(3).files == {"a.txt": "2\n"}  # an s command: computed
    assert state.state_at(5).missing == {"a.txt"}  # d: not followed


def test_base_files_seed_the_workspace() -> None:
    s = Script().edit("a.py", "1", "2")
    state = replay(s.events, "/w", base={"a.py": "v = 1\n", "b.py": "b\n"})
    assert state.state_at(-1).files == {"a.py": "v = 1\n", "b.py": "b\n"}
    assert state.state_at(len(s.events) - 1).files["a.py"] == "v = 2\n"


@pytest.mark.parametrize(
    ("path", "expected"),
    [("/w/a/b.py", "a/b.py"), ("a/./b.py", "a/b.py"), ("a/../b.py", "b.py")],
)
def test_confine_accepts(path: str, expected: str) -> None:
    assert confine(path, "/w") == expected


@pytest.mark.parametrize("path", ["/w2/x", "../x", "a/../../x", "", "~/x", "/w", "a\x00b"])
def test_confine_rejects(path: str) -> None:
    with pytest.raises(PathViolation):
        confine(path, "/w")


def test_windows_drive_paths_are_absolute() -> None:
    # codex on Windows (cwd C:\repos\BattleCity) reading C:\Users\tassa\.agents\…: a drive
    # path was read as a relative one, "inside" every workspace
    root = session_root("C:\\repos\\BattleCity", [])
    assert confine("C:\\repos\\BattleCity\\src\\x.ts", root) == "src/x.ts"
    assert confine("c:/repos/BattleCity/a.ts", root) == "a.ts"  # the drive letter's case
    for outside in ("C:\\Users\\tassa\\.agents\\SKILL.md", "D:\\repos\\BattleCity\\a.ts", "/w/a"):
        with pytest.raises(PathViolation):
            confine(outside, root)
    s = Script().write("C:\\repos\\BattleCity\\src\\app.ts", "export {}\n")
    assert replay(s.events, root).state_at(len(s.events) - 1).files == {"src/app.ts": "export {}\n"}


def test_session_root_falls_back_to_common_directory() -> None:
    s = Script().write("/home/u/p/src/a.py", "").write("/home/u/p/test/b.py", "")
    assert session_root(None, s.events) == "/home/u/p"
    assert session_root("/x/y/", s.events) == "/x/y"


@pytest.mark.parametrize(
    "command",
    [
        "pytest -q",
        "python3 -m pytest tests/",
        "npm run check",
        "npx tsc --noEmit",
        "cd pkg && go test ./...",
        "cargo test",
        "yarn test",
        "npm test 2>&1 | tail -20",
    ],
)
def test_check_commands(command: str) -> None:
    assert is_check(command)


@pytest.mark.parametrize("command", ["ls -la", "cat README.md", "git status", "echo pytest-ish"])
def test_not_check_commands(command: str) -> None:
    assert not is_check(command)


def test_check_key_strips_output_filters() -> None:
    assert check_key("npm run check 2>&1 | tail -30") == "npm run check"
    assert check_key("npm  run   check") == "npm run check"


def test_mutating_commands_and_targets() -> None:
    assert is_mutating("sed -i 's/a/b/' x.py")
    assert is_mutating("echo hi > out.txt")
    assert not is_mutating("grep -n foo x.py 2>&1")
    assert not is_mutating("ls > /dev/null")
    assert [c.path for c in changes("sed -i 's/a/b/' x.py y.py")] == ["x.py", "y.py"]
    assert [c.path for c in changes("cat a | tee b.txt")] == ["b.txt"]


def _end(s: Script, root: str = "/w") -> tuple[dict[str, str], frozenset[str]]:
    snap = replay(s.events, root).state_at(len(s.events) - 1)
    return snap.files, snap.missing


def test_a_move_carries_known_content_and_removes_the_source() -> None:
    s = Script().read("a.py", "A\n").read("b.py", "B\n")
    s.shell("mkdir -p pkg && mv a.py b.py pkg/", 0)
    files, missing = _end(s)
    assert files == {"pkg/a.py": "A\n", "pkg/b.py": "B\n"} and not missing


def test_a_moved_folder_takes_its_known_files_along() -> None:
    s = Script().read("src/tools/x.ts", "X\n").shell("cd src && mv tools core/", 0)
    files, _ = _end(s)
    assert files == {"src/core/tools/x.ts": "X\n"}


def test_a_copy_keeps_the_source_and_a_failed_move_knows_nothing() -> None:
    s = Script().read("a.py", "A\n").shell("cp a.py b.py", 0).shell("mv b.py c.py", 1)
    files, missing = _end(s)
    assert files == {"a.py": "A\n"} and missing == {"b.py", "c.py"}


def test_removed_files_are_gone_not_missing() -> None:
    """``rm`` of a file the session never read: it existed (content unknown) until then and
    is gone after, so a task starting after the rm does not need it."""
    s = Script().user("go").shell("cd /w/src && rm old.ts && rm -rf gen", 0).read("src/gen/y", "Y")
    state = replay(s.events, "/w")
    assert state.state_at(0).missing == {"src/old.ts"}
    after = state.state_at(len(s.events) - 1)
    assert "src/old.ts" not in after.missing and after.files == {"src/gen/y": "Y"}


def test_a_copy_into_the_home_folder_is_outside_the_workspace() -> None:
    s = Script().read("dark.json", "{}").shell("cp dark.json ~/.pi/themes/t.json", 0)
    state = replay(s.events, "/w")
    assert state.state_at(len(s.events) - 1).files == {"dark.json": "{}"}
    assert any("~/.pi/themes/t.json" in v for v in state.violations + state.divergences)


def test_random_moves_copies_and_removals_never_raise_and_stay_confined() -> None:
    rng = random.Random(2)
    names = ["a.py", "src/c.py", "src", "src/", ".", "..", "~/x", "/w/d.py", "/etc/passwd", "''"]
    ops = ["mv", "cp", "cp -r", "rm", "rm -rf", "touch", "sed -i ''", "cd"]
    for _ in range(300):
        s = Script().read("a.py", "A\n").read("src/c.py", "C\n")
        for _ in range(rng.randint(1, 4)):
            words = " ".join(rng.sample(names, rng.randint(0, 3)))
            s.shell(f"{rng.choice(ops)} {words} && {rng.choice(ops)} {words}", rng.choice([0, 1]))
        state = replay(s.events, "/w")
        for index in range(len(s.events)):
            snap = state.state_at(index)
            for path in [*snap.files, *snap.missing]:
                assert not path.startswith(("/", "~", "..")), path


# sed -i of s commands: the new content computed when the old one is known


def test_real_macos_seds_are_computed_on_known_files() -> None:
    """Commands from the real pi-mono sessions (macOS sed, ``-i ''``), run from the root and
    with an absolute path."""
    markdown = 'const a = new Markdown("# A", 0, 0);\nconst b = new Markdown(text, 1, 1);\n'
    s = (
        Script()
        .read("packages/tui/test/markdown.test.ts", markdown)
        .read("/w/src/cli.ts", 'import { main } from "./main-new.js";\nmain-new();\n')
        .shell(
            r"sed -i '' 's/new Markdown(\(.*\), 0, 0)/new Markdown(\1, 0, 0, undefined, "
            r"defaultMarkdownTheme)/g' packages/tui/test/markdown.test.ts",
            0,
            "(no output)",
        )
        .shell("sed -i '' 's/main-new/main/g' /w/src/cli.ts", 0, "(no output)")
    )
    files, missing = _end(s)
    assert not missing
    assert files["packages/tui/test/markdown.test.ts"] == (
        'const a = new Markdown("# A", 0, 0, undefined, defaultMarkdownTheme);\n'
        "const b = new Markdown(text, 1, 1);\n"
    )
    assert files["src/cli.ts"] == 'import { main } from "./main.js";\nmain();\n'


@pytest.mark.parametrize(
    ("command", "exit_code", "output"),
    [
        ("sed -i '' 's/a/b/' f.txt", 0, ""),  # known: the control case
        ("sed -i '' '/a/d' f.txt", 0, ""),  # another command than s
        ("sed -i '' '1s/a/b/' f.txt", 0, ""),  # an address
        ("sed -i '' 's/a/b/' f.txt && npm test", 1, ""),  # it may not have run
        ("sed -i '' 's/a/b/' f.txt; echo done", 0, 'sed: 1: "s/a/b/": bad flag\ndone\n'),
        ("sed -i '' 's/a/b/' g.txt", 0, ""),  # a file replay never saw
    ],
)
def test_sed_stays_unknown_unless_sure(command: str, exit_code: int, output: str) -> None:
    s = Script().read("f.txt", "a\n").shell(command, exit_code, output)
    files, missing = _end(s)
    if command == "sed -i '' 's/a/b/' f.txt":
        assert files == {"f.txt": "b\n"} and not missing
    else:
        assert "f.txt" in missing or "g.txt" in missing
        assert files.get("f.txt") != "b\n"


def test_a_sed_backup_keeps_the_old_content() -> None:
    s = Script().read("f.txt", "a\n").shell("sed -i.orig 's/a/b/' f.txt", 0)
    assert _end(s)[0] == {"f.txt": "b\n", "f.txt.orig": "a\n"}


def test_gnu_sed_without_expression_flag_is_marked_mutating() -> None:
    """``sed -E -i`` (the flag after -E) changes files even though the command-line pattern
    of mutating commands misses it."""
    s = Script().read("f.txt", "aa\n").shell("sed -E -i 's/a+/b/' f.txt", 0)
    state = replay(s.events, "/w")
    assert state.shell_commands == [(3, "sed -E -i 's/a+/b/' f.txt")]
    assert state.state_at(3).files == {"f.txt": "b\n"}


# globs in sed -i, rm, mv and cp: expanded against the files replay knows

PI_MONO = {
    "packages/coding-agent/src/utils/config.ts": "export const APP = 1;\n",
    "packages/coding-agent/src/core/agent.ts": 'import { APP } from "../utils/config.js";\n',
    "packages/coding-agent/src/core/model.ts": "export const M = 1;\n",
    "packages/coding-agent/src/core/tools/bash.ts": 'import { X } from "../utils/config.js";\n',
    "packages/coding-agent/src/core/tools/deep/grep.ts": 'import "../utils/config.js";\n',
    "packages/coding-agent/src/core/.eslintrc.ts": 'import "../utils/config.js";\n',
    "packages/coding-agent/src/main.ts": 'import { APP } from "./utils/config.js";\n',
}


def test_the_real_pi_mono_move_and_globbed_sed_on_a_known_tree() -> None:
    """Real pi-mono commands (macOS, bash without globstar): config.ts moves up, then every
    core file's import of it is rewritten. ``core/**/*.ts`` is ``core/*/*.ts``: one folder
    down, not two; ``*`` skips dot files."""
    s = (
        Script()
        .shell("cd packages/coding-agent/src && mv utils/config.ts .", 0)
        .shell(
            "cd packages/coding-agent/src\n\n"
            "# Fix imports in core/ (../utils/config -> ../config)\n"
            "sed -i '' 's|from \"../utils/config.js\"|from \"../config.js\"|g' core/*.ts "
            "core/**/*.ts\n",
            0,
        )
    )
    state = replay(s.events, "/w", base=PI_MONO, started_with=frozenset(PI_MONO))
    end = state.state_at(len(s.events) - 1)
    src = "packages/coding-agent/src/"
    assert not end.missing
    assert end.files[src + "config.ts"] == "export const APP = 1;\n"
    assert src + "utils/config.ts" not in end.files
    assert end.files[src + "core/agent.ts"] == 'import { APP } from "../config.js";\n'
    assert end.files[src + "core/tools/bash.ts"] == 'import { X } from "../config.js";\n'
    assert end.files[src + "core/model.ts"] == "export const M = 1;\n"
    unchanged = ["core/tools/deep/grep.ts", "core/.eslintrc.ts", "main.ts"]
    assert all(end.files[src + p] == PI_MONO[src + p] for p in unchanged)


def test_globbed_rm_and_mv_follow_the_known_tree() -> None:
    tree = {"src/a.gen.ts": "A", "src/b.gen.ts": "B", "src/keep.ts": "K", "theme/dark.json": "D"}
    s = Script().shell("rm src/*.gen.ts && mkdir -p ui/theme && mv theme/* ui/theme/", 0)
    state = replay(s.events, "/w", base=tree, started_with=frozenset(tree))
    assert state.state_at(len(s.events) - 1).files == {
        "src/keep.ts": "K",
        "ui/theme/dark.json": "D",
    }


def test_a_glob_matching_a_file_known_only_by_name_leaves_it_unknown() -> None:
    """The starting tree lists a file replay holds no text of (binary or huge): the glob
    reaches it, and what sed made of it is unknown."""
    tree = {"core/a.ts": "x\n"}
    s = Script().shell("sed -i 's/x/y/' core/*.ts", 0)
    state = replay(s.events, "/w", base=tree, started_with=frozenset({"core/a.ts", "core/b.ts"}))
    end = state.state_at(len(s.events) - 1)
    assert end.files == {"core/a.ts": "y\n"} and end.missing == {"core/b.ts"}


def test_a_glob_in_a_folder_replay_does_not_know_stays_unknown() -> None:
    """No repository: replay knows only the files the session saw. A glob over a folder it
    saw nothing of changes nothing it knows; a file there read later is unknown before the
    sed, not known from the start, and after the sed holds what the read shows (nothing
    changed it between them)."""
    s = (
        Script()
        .read("src/seen.ts", "x\n")
        .shell("sed -i '' 's/x/y/g' lib/*.ts src/*.ts", 0)
        .read("lib/later.ts", "y\n")
    )
    state = replay(s.events, "/w")
    sed_done = 3
    before, after = state.state_at(1), state.state_at(sed_done)
    assert before.files == {"src/seen.ts": "x\n"} and before.missing == {"lib/later.ts"}
    assert after.files == {"src/seen.ts": "y\n", "lib/later.ts": "y\n"} and not after.missing
    assert state.state_at(len(s.events) - 1).files["lib/later.ts"] == "y\n"


def test_quoted_globs_and_folder_matches_are_not_expanded() -> None:
    tree = {"src/a.ts": "x\n", "src/sub/b.ts": "x\n"}
    s = Script().shell("rm 'src/*.ts'; sed -i 's/x/y/' src/*", 0)
    state = replay(s.events, "/w", base=tree, started_with=frozenset(tree))
    end = state.state_at(len(s.events) - 1)
    assert end.missing == {"src/a.ts"}  # sed on a folder fails: nothing about a.ts is sure
    assert end.files == {"src/sub/b.ts": "x\n"}


def test_a_glob_replay_cannot_expand_exactly_leaves_what_it_may_match_unknown() -> None:
    """``[a-z]`` follows the locale's collation in bash: every known file it may match is
    unknown after it, moved ones at both ends; the others are untouched."""
    tree = {"core/a.ts": "x\n", "core/B.ts": "x\n", "core/ab.ts": "x\n", "lib/c.ts": "x\n"}
    s = Script().shell("sed -i 's/x/y/' core/[a-z].ts && mv lib/[a-c].ts out/", 0)
    state = replay(s.events, "/w", base=tree, started_with=frozenset(tree))
    end = state.state_at(len(s.events) - 1)
    assert end.files == {"core/ab.ts": "x\n"}
    assert end.missing == {"core/a.ts", "core/B.ts", "lib/c.ts", "out/c.ts"}
