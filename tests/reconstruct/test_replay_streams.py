"""Replay of shell commands whose files come from another command, a loop, a brace list or a
glob: ``find … | xargs sed -i``, ``find -exec``, ``grep -rl … | while read f``, ``for f in
$(…)``, ``touch src/{a,b}.ts``; and in-place ``sed`` / ``perl`` however their options are
spelled. A file replay cannot be sure of is unknown after the command, never kept stale; one a
``sed`` of ``s`` commands leaves as it is stays known whether it was listed or not.
"""

from __future__ import annotations

import pytest

from trajforge.reconstruct.replay import replay
from trajforge.reconstruct.shell import is_mutating
from trajforge.reconstruct.shell_globs import braces
from trajforge.reconstruct.shell_writes import changes

from .events import Script

TREE = {
    "src/a.ts": "foo a\n",
    "src/b.ts": "bar b\n",
    "src/c.js": "foo c\n",
    "src/sub/d.ts": "foo d\n",
    "src/node_modules/m/x.ts": "foo x\n",
    "lib/e.ts": "foo e\n",
    "README.md": "foo readme\n",
}


def _after(command: str, exit_code: int = 0, tree: dict[str, str] | None = None) -> tuple[
    dict[str, str], set[str], set[str]
]:  # fmt: skip
    """(files whose content changed, files unknown, files gone) after ``command`` ran on
    ``tree``, the repository's known starting tree."""
    tree = TREE if tree is None else tree
    s = Script().shell(command, exit_code)
    end = replay(s.events, "/w", base=dict(tree), started_with=frozenset(tree)).state_at(1)
    changed = {p: t for p, t in end.files.items() if tree.get(p) != t}
    return changed, set(end.missing), set(tree) - set(end.files) - set(end.missing)


# 1. in-place sed / perl, however the options are spelled


@pytest.mark.parametrize(
    "command",
    [
        "sed -E -i 's/(foo) a/\\1 A/' src/a.ts",
        "sed -Ei 's/foo/FOO/g' src/*.ts",
        "sed -i -E 's/^import (.*) from/import \\1 from/' src/a.ts",
        "perl -pi -e 's/foo/bar/g' src/a.ts",
        "perl -0pi -e 's/\\n\\n+/\\n/g' src/a.ts",
        "perl -i -pe 's/foo/bar/' src/a.ts",
        "perl -p -i -e 's/foo/bar/' src/a.ts",
        "perl -0777 -pi -e 's/foo/bar/s' src/a.ts",
        "git ls-files -z | xargs -0 sed -E -i 's/a/b/'",
        "find . -name '*.ts' -exec perl -pi -e 's/a/b/' {} +",
        "find . -name '*.orig' -delete",
    ],
)
def test_in_place_edits_are_mutating_however_spelled(command: str) -> None:
    assert is_mutating(command)


@pytest.mark.parametrize(
    "command",
    [
        "perl -Ilib -e 'print 1' t.pl",
        "sed -n 's/a/b/p' f",
        "sed -e 's/i/x/' f",
        "find . -name '*.ts' -exec grep -l foo {} +",
        "git ls-files | xargs grep -n TODO",
    ],
)
def test_reading_commands_are_not_mutating(command: str) -> None:
    assert not is_mutating(command)


def test_sed_extended_after_its_options_is_computed_and_perl_is_unknown() -> None:
    changed, missing, _ = _after("sed -E -i 's/(fo)o a/\\1X/' src/a.ts")
    assert changed == {"src/a.ts": "foX\n"} and not missing
    for command in ("perl -0pi -e 's/foo/X/' src/a.ts", "perl -i -pe 's/foo/X/' src/*.ts"):
        changed, missing, _ = _after(command)
        assert not changed and "src/a.ts" in missing


# 2. find / grep -l piped into xargs, find -exec and -delete


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        # find's -name matches at any depth, dot files and node_modules too
        (
            "find . -name '*.ts' | xargs sed -i 's/foo/FOO/'",
            {"src/a.ts", "src/sub/d.ts", "src/node_modules/m/x.ts", "lib/e.ts"},
        ),
        ("find src -name '*.ts' -exec sed -i 's/foo/FOO/g' {} +", {"src/a.ts", "src/sub/d.ts",
                                                                   "src/node_modules/m/x.ts"}),
        (
            "find src -type f -name '*.ts' -not -path '*/node_modules/*' -exec sed -i "
            "'s/foo/FOO/' {} \\;",
            {"src/a.ts", "src/sub/d.ts"},
        ),
        (
            "find src -maxdepth 1 \\( -name '*.ts' -o -name '*.js' \\) -print0 | "
            "xargs -0 sed -i 's/foo/FOO/'",
            {"src/a.ts", "src/c.js"},
        ),
        # grep -l of a fixed string picks exactly the files holding it
        (
            "grep -rl foo src --include='*.ts' | xargs sed -i 's/foo/FOO/g'",
            {"src/a.ts", "src/sub/d.ts", "src/node_modules/m/x.ts"},
        ),
        ("grep -rl foo lib | xargs -I{} sed -i 's/foo/FOO/' {}", {"lib/e.ts"}),
    ],
)  # fmt: skip
def test_listed_files_are_computed_when_the_listing_is_decided(
    command: str, expected: set[str]
) -> None:
    changed, missing, _ = _after(command)
    assert set(changed) == expected and not missing
    assert all(t == TREE[p].replace("foo", "FOO") for p, t in changed.items())


def test_a_listing_replay_cannot_decide_leaves_what_it_may_pick_unknown() -> None:
    """A regular expression, ``-mtime`` or an unknown list: every file it may pick that the
    script would change is unknown; one the script leaves as it is stays known."""
    changed, missing, _ = _after("grep -rl 'fo*' src | xargs sed -i 's/foo/FOO/g'")
    assert not changed and missing == {"src/a.ts", "src/c.js", "src/sub/d.ts",
                                       "src/node_modules/m/x.ts"}  # fmt: skip
    changed, missing, _ = _after("find src -name '*.ts' -mtime -1 | xargs rm")
    assert missing == {"src/a.ts", "src/b.ts", "src/sub/d.ts", "src/node_modules/m/x.ts"}
    changed, missing, _ = _after("cat files.txt | xargs perl -pi -e 's/foo/FOO/'")
    assert missing == {p for p in TREE if p != "README.md"} | {"README.md"}


def test_find_delete_and_listed_removals() -> None:
    _, missing, gone = _after("find . -name '*.js' -delete")
    assert gone == {"src/c.js"} and not missing
    _, missing, gone = _after("grep -rl foo src | xargs rm -f")
    assert gone == {"src/a.ts", "src/c.js", "src/sub/d.ts", "src/node_modules/m/x.ts"}


# 3. while read and for loops over a listing


@pytest.mark.parametrize(
    "command",
    [
        "grep -rl foo src | while read f; do sed -i 's/foo/FOO/' \"$f\"; done",
        "grep -rl foo src | while IFS= read -r file; do sed -i 's/foo/FOO/' \"$file\"; done",
        "for f in $(grep -rl foo src); do sed -i 's/foo/FOO/' $f; done",
        "sed -i 's/foo/FOO/' $(grep -rl foo src)",
        "sed -i 's/foo/FOO/' \"$(grep -rl foo src)\"",  # one word when quoted: at least these
    ],
)
def test_loops_and_substitutions_over_a_listing(command: str) -> None:
    changed, missing, _ = _after(command)
    listed = {"src/a.ts", "src/c.js", "src/sub/d.ts", "src/node_modules/m/x.ts"}
    assert set(changed) | missing == listed and set(changed) <= listed


def test_a_loop_over_a_list_replay_cannot_read_never_keeps_stale_content() -> None:
    """``done < files.txt``: any file may be in the list; the body's sed changes those that
    hold ``foo`` (unknown), the others are as they were."""
    changed, missing, _ = _after("while read f; do sed -i 's/foo/FOO/' \"$f\"; done < files.txt")
    assert not changed and missing == {p for p, t in TREE.items() if "foo" in t}
    changed, missing, _ = _after('for f in $FILES; do rm "$f"; done')
    assert missing == set(TREE)


def test_a_loop_variable_inside_a_longer_word_matches_what_fits_around_it() -> None:
    """``"${f%.ts}.js"``: the name is computed from the variable; any .js file under the
    folder may be overwritten, nothing else."""
    _, missing, _ = _after('for f in src/*.ts; do cp "$f" "${f%.ts}.js"; done')
    assert missing == {"src/c.js"}


def test_a_file_first_seen_after_a_listing_that_may_have_changed_it_is_unknown_before() -> None:
    """No repository: the listing may have picked a file replay learns of only later."""
    s = (
        Script()
        .read("src/seen.ts", "foo\n")
        .shell("find src -name '*.ts' | xargs sed -i 's/foo/FOO/'", 0)
        .read("src/later.ts", "FOO\n")
        .read("docs/other.md", "foo\n")
    )
    state = replay(s.events, "/w")
    before = state.state_at(1)
    assert before.files == {"src/seen.ts": "foo\n", "docs/other.md": "foo\n"}
    assert before.missing == {"src/later.ts"}
    assert state.state_at(3).files["src/seen.ts"] == "FOO\n"


# 4. brace lists and globs in touch, tee, redirections


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("src/{a,b}.ts", ["src/a.ts", "src/b.ts"]),
        ("f{,.bak}", ["f", "f.bak"]),
        ("x{1..3}", ["x1", "x2", "x3"]),
        ("v{08..10}", ["v08", "v09", "v10"]),
        ("{a..c}", ["a", "b", "c"]),
        ("a{b,c{d,e}}f", ["abf", "acdf", "acef"]),
        ("{}", ["{}"]),  # find's placeholder
        ("{a}", ["{a}"]),
        ("${x}", ["${x}"]),
        ("{1..100000}", ["{1..100000}"]),  # too many: left as it is (no file)
    ],
)
def test_brace_expansion_as_bash_does(word: str, expected: list[str]) -> None:
    assert braces(word) == expected


def test_touch_keeps_known_content_and_brace_lists_expand() -> None:
    changed, missing, _ = _after("touch src/{a,new}.ts")
    assert not changed and missing == {"src/new.ts"}
    changed, missing, _ = _after("cp src/a.ts{,.bak} && mv lib/e{,2}.ts")
    assert changed == {"src/a.ts.bak": "foo a\n", "lib/e2.ts": "foo e\n"} and not missing


def test_globs_in_tee_touch_and_redirections_expand_against_the_known_tree() -> None:
    changed, missing, _ = _after("echo x | tee -a src/*.js >/dev/null")
    assert not changed and missing == {"src/c.js"}
    changed, missing, _ = _after("touch src/*.ts")
    assert not changed and not missing
    _, missing, _ = _after("echo '# x' >> lib/*.ts")
    assert missing == {"lib/e.ts"}
    assert [c.path for c in changes("echo x > src/{a,b}.ts")] == []  # an ambiguous redirect


@pytest.mark.parametrize(
    "command",
    [
        "find src -name '*.ts' -exec sh -c 'sed -i \"s/foo/FOO/\" \"$1\"' _ {} \\;",
        "bash -c \"cd src && sed -i 's/foo/FOO/' a.ts sub/d.ts\"",
    ],
)
def test_a_script_run_by_sh_c_is_read_as_the_command_line_it_is(command: str) -> None:
    changed, missing, _ = _after(command)
    assert {"src/a.ts", "src/sub/d.ts"} <= set(changed) and not missing


def test_quoted_separators_are_words_not_operators() -> None:
    """``find \\( … \\) -exec … \\;``: the escaped parentheses and semicolon are find's."""
    found = changes("find . \\( -name '*.ts' \\) -exec sed -i 's/a;b/c/' {} \\; -print")
    assert [(c.kind, c.path, c.select is not None) for c in found] == [("substitute", ".", True)]


# an unknown change the next full read shows: known from the change on


def test_a_change_of_unknown_content_holds_what_the_next_read_shows() -> None:
    s = (
        Script()
        .read("a.py", "x = 1\n")
        .shell("perl -pi -e 's/1/2/' a.py", 0)
        .user("next")
        .read("a.py", "x = 2\n")
        .shell("perl -pi -e 's/2/3/' a.py", 0)
    )
    state = replay(s.events, "/w")
    assert state.state_at(4).files == {"a.py": "x = 2\n"}  # between the perl and the read
    assert state.state_at(len(s.events) - 1).missing == {"a.py"}  # nothing shows it after
