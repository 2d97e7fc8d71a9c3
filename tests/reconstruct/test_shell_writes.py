"""Which files a recorded shell command wrote, read as the shell reads it; what a ``sed -i``
of ``s`` commands writes, read as GNU and BSD sed read it.

The first cases are commands from the real pi-mono session (macOS, so ``sed -i ''``), whose
crude reading once made '(c', '2>/dev/null', 's/main-new/main/g' and 'config)' "missing files"
and put files removed after a ``cd`` at the workspace root.
"""

from __future__ import annotations

import random
import shutil
import string
import subprocess
from pathlib import Path

import pytest

from trajforge.reconstruct.formats.pi import PiFormat
from trajforge.reconstruct.sed_call import sed_call
from trajforge.reconstruct.sed_script import parse
from trajforge.reconstruct.shell import is_mutating, redirect_targets, strip_comments
from trajforge.reconstruct.shell_globs import expand
from trajforge.reconstruct.shell_writes import Change, changes
from trajforge.records import Session

REAL = Path(__file__).parents[3] / "shared" / "corpus" / "pi-mono" / "before-compaction.jsonl"


def written_paths(command: str) -> list[str]:
    """Every file a command named and changed: destinations, and the sources a move removed
    (globs, which name no file until replay expands them, left out)."""
    paths: list[str] = []
    for change in changes(command):
        if change.glob:
            continue
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
    ("sed -i -E -e 's/a+/b/' f", ["f"]),
    ("sed -i '4s/a/b/' f", ["f"]),  # an address: still written, content unknown
    ("sed -n -i 's/a/b/p' f", ["f"]),
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


def _sed(command: str) -> Change:
    """The one change ``command`` makes."""
    (change,) = changes(command)
    return change


def sed_result(command: str, text: str) -> str | None:
    """The content replay computes for the file ``command`` edits, that held ``text``."""
    change = _sed(command)
    assert change.kind == "substitute" and change.script is not None, change
    return change.script.apply(text)


MARKDOWN_SED = (  # real: pi-mono large-session.jsonl (macOS sed)
    r"sed -i '' 's/new Markdown(\(.*\), 0, 0)/new Markdown(\1, 0, 0, undefined, "
    r"defaultMarkdownTheme)/g' packages/tui/test/markdown.test.ts"
)
SED_CASES = [
    # BSD -i '' (real pi-mono command), g: every match of the line
    (
        "sed -i '' 's/main-new/main/g' /U/p/src/cli.ts",
        "'./main-new.js' main-new\n",
        "'./main.js' main\n",
    ),
    # | delimiter, . in the RE matches any character (here the dots)
    (
        "sed -i '' 's|from \"../utils/config.js\"|from \"../config.js\"|g' core/a.ts",
        'import { A } from "../utils/config.js";\nimport "./utils/config.js";\n',
        'import { A } from "../config.js";\nimport "./utils/config.js";\n',
    ),
    # \(…\) and \1; .* is leftmost-longest, as POSIX says: the last ", 0, 0)" ends the match
    (
        MARKDOWN_SED,
        'const m = new Markdown("# Hi", 0, 0);\na(new Markdown(x, 0, 0), new Markdown(y, 0, 0));\n',
        'const m = new Markdown("# Hi", 0, 0, undefined, defaultMarkdownTheme);\n'
        "a(new Markdown(x, 0, 0), new Markdown(y, 0, 0, undefined, defaultMarkdownTheme));\n",
    ),
    # GNU -i; without g only the first match of each line; a last line without newline stays so
    ("sed -i 's/a/b/' f", "aa\na", "ba\nb"),
    ("sed -i 's/a/b/g' f", "aa\na", "bb\nb"),
    ("sed -i 's/a/b/2' f", "aaa\n", "aba\n"),
    ("sed -i 's/a/b/2g' f", "aaa\n", "abb\n"),
    # & and \&; a bracket expression; BRE's ( ) { } + ? | are literal
    ("sed -i 's/[0-9][0-9]*/<&>/g' f", "a1b22\n", "a<1>b<22>\n"),
    ("sed -i 's/x/\\&/' f", "x\n", "&\n"),
    ("sed -i 's/f(a|b)+{1}?/X/' f", "f(a|b)+{1}? y\n", "X y\n"),
    (r"sed -i 's/a\{2,3\}/X/g' f", "a aa aaaa\n", "a X Xa\n"),
    # -E: ERE groups, + and intervals
    ("sed -E -i 's/(fo+)bar/\\1-&/' f", "foobar x\n", "foo-foobar x\n"),
    ("sed -r -i -e 's/a{2}/X/g' f", "aaaaa\n", "XXa\n"),
    # GNU reads \n and \t in the replacement; I; -e twice and ; run in order on each line
    (r"sed -i 's/,/,\n\t/g' f", "a,b\n", "a,\n\tb\n"),
    ("sed -i 's/hello/bye/I' f", "HeLLo\n", "bye\n"),
    ("sed -i -e 's/a/b/' -e 's/b/c/' f", "a\n", "c\n"),
    ("sed -i.bak 's/a/b/;s/b/c/g' f", "ab\n", "cc\n"),
    # an empty match right after a match is no match (GNU)
    ("sed -i 's/x*/-/g' f", "abc\n", "-a-b-c-\n"),
    ("sed -i 's/b*/-/g' f", "abc\n", "-a-c-\n"),
    ("sed -i '' 's/a/b/' f", "", ""),
    # real pi-mono (before-compaction, event 893): a newline in the RE of a line-by-line
    # script matches nothing, whatever BSD makes of \t (the file was lost; it is unchanged)
    (
        "sed -i '' 's/addChild(new Spacer(1));\\n\\t\\t\\tthis.addChild(/this.showStatus(/g' f",
        "addChild(new Spacer(1));\n\t\t\tthis.addChild(x)\n",
        "addChild(new Spacer(1));\n\t\t\tthis.addChild(x)\n",
    ),
    ("sed -i 's/a\\nb/X/' f", "a\nb\n", "a\nb\n"),
    ("sed -i 's/a\\n*b/X/' f", "ab\n", "X\n"),  # a quantified newline may match none
]


@pytest.mark.parametrize(("command", "text", "expected"), SED_CASES)
def test_sed_substitutions_are_computed_as_sed_does(command: str, text: str, expected: str) -> None:
    assert sed_result(command, text) == expected


UNKNOWN_SEDS = [
    "sed -i '' '/undefined,$/d' packages/tui/test/markdown.test.ts",  # real: d
    "sed -i '4s/a/b/' f",  # an address
    "sed -i '/x/s/a/b/' f",
    "sed -i 's/a/b/p' f",  # p writes the line twice into the file
    "sed -i 's/a/b/w out' f",
    "sed -n -i 's/a/b/' f",
    "sed -i -f fix.sed f",
    "sed -i 's/a/b/;d' f",
    r"sed -i 's/a\|b/X/' f",  # GNU alternation
    "sed -E -i 's/a|b/X/' f",  # leftmost-longest vs Python's first alternative
    r"sed -i 's/\(ab\)*/X/' f",  # a quantified group
    r"sed -i 's/\(a\)\1/X/' f",  # a back-reference in the RE
    r"sed -i 's/a/\U&/' f",
    "sed -i 's//x/' f",  # the last RE used
    'sed -i "s/a/$HOME/" f',  # the shell expands it
    "sed -i '' 's/a/\\t/' f",  # BSD sed reads \t as t, GNU as a tab: -i '' is BSD
    "sed -i '' 's/x*/-/g' f",  # empty matches repeated: how BSD steps over them is not known
    "sed -i 's|a\\|b|X|' f",  # an escaped delimiter that means something in an RE
    "sed -i 's/[/]/X/' f",  # the delimiter in a bracket expression
]


@pytest.mark.parametrize("command", UNKNOWN_SEDS)
def test_other_sed_scripts_leave_the_content_unknown(command: str) -> None:
    change = _sed(command)
    assert change.kind == "write" and change.script is None


def test_the_two_seds_must_agree() -> None:
    """``-i -E``: GNU reads an ERE; BSD takes ``-E`` as the backup suffix and reads a BRE.
    Known only where both give the same text."""
    command = "sed -i -E 's/a+/X/' f"
    assert sed_result(command, "bbb\n") == "bbb\n"
    assert sed_result(command, "aa+\n") is None  # GNU: X+, BSD: aX
    assert sed_result("sed -i '' 's/a/b/' f", "a") is None  # BSD may add the last newline
    assert _sed("sed -i.bak 's/a/b/' f").backup == ".bak"
    assert _sed("sed -i '' -e 's/a/b/' f").backup == ""
    assert _sed("sed -i -e 's/a/b/' f").backup == ""  # BSD would keep f-e, GNU nothing


def test_text_beyond_ascii_is_known_when_both_locales_agree() -> None:
    """``.`` is one character in a UTF-8 locale, one byte in C: ``a.b`` matches ``a─b`` in
    one and not the other; ``a.*b`` matches it in both."""
    assert sed_result("sed -i 's/a.b/X/' f", "a─b\n") is None
    assert sed_result("sed -i 's/a.b/X/' f", "axb ─\n") == "X ─\n"
    assert sed_result("sed -i 's/a.*b/X/' f", "a─b\n") == "X\n"
    assert sed_result("sed -i 's/[[:alpha:]]b/X/' f", "éb\n") is None  # é: a letter in UTF-8
    assert sed_result("sed -i 's/─/-/g' f", "a─b─\n") == "a-b-\n"


def _dialects(args: list[str]) -> list[str]:
    call = sed_call(args)
    assert call is not None and call.script is not None and call.files == ("f",)
    return [program.dialect for program in call.script.readings]


def test_a_sed_call_is_read_as_the_seds_that_could_have_run_it() -> None:
    assert _dialects(["-i", "", "s/a/b/", "f"]) == ["bsd"]  # GNU: script '', files s/a/b/, f
    assert _dialects(["-i", "s/a/b/", "f"]) == ["gnu"]  # BSD: suffix s/a/b/, script f
    assert _dialects(["-i.bak", "s/a/b/", "f"]) == ["gnu", "bsd"]
    assert _dialects(["s/a/b/", "-i", "f"]) == ["gnu"]  # options after the script: GNU only
    assert _dialects(["-i", "-e", "s/a/b/", "-e", "s/b/c/", "f"]) == ["gnu"]  # BSD: file -e
    assert sed_call(["-n", "s/a/b/", "f"]) is None  # not in place
    assert sed_call(["-i", "s/a/b/"]) is None  # no file


GLOB_CASES = [
    ("rm src/*.ts", [("delete", "src/*.ts", None)]),
    (
        "cd src && rm -f ./gen/*.js tmp?.txt",
        [("delete", "src/gen/*.js", None), ("delete", "src/tmp?.txt", None)],
    ),
    ("mv theme/* modes/theme/", [("move", "modes/theme", "theme/*")]),
    ("cp -r a/[ab]*.ts b/", [("copy", "b", "a/[ab]*.ts")]),
    (
        "cd packages/coding-agent/src && sed -i '' 's/x/y/g' core/*.ts core/**/*.ts",
        [
            ("substitute", "packages/coding-agent/src/core/*.ts", None),
            ("substitute", "packages/coding-agent/src/core/**/*.ts", None),
        ],
    ),
    ("rm 'src/*.ts' src/\\*.js \"src/?.py\"", []),  # quoted or escaped: a literal name
    ('rm "$d"/*.ts ~/x/*.ts', [("delete", "~/x/*.ts", None)]),
    ("mv src/*.ts dest", []),  # one match renames, several move into dest: unknown
    ("cp a.ts dir/*.ts", []),  # a glob destination
    # bash expands a glob in every word, a redirection's target too
    (
        "touch *.ts; echo x > *.log; perl -pi -e 's/a/b/' *.py",
        [("touch", "*.ts", None), ("write", "*.log", None), ("write", "*.py", None)],
    ),
    ("rm src/*/../x.ts src/*/", []),
]


@pytest.mark.parametrize(("command", "expected"), GLOB_CASES)
def test_unquoted_globs_are_kept_as_patterns(
    command: str, expected: list[tuple[str, str, str | None]]
) -> None:
    found = [(c.kind, c.path, c.source) for c in changes(command) if c.glob]
    assert found == expected


KNOWN = [
    "core/a.ts", "core/b.tsx", "core/.hidden.ts", "core/sub/c.ts", "core/sub/deep/d.ts",
    "core/x/e.ts", "core/1.ts", "core/z.ts", "other/a.ts",
]  # fmt: skip


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("core/*.ts", ["core/1.ts", "core/a.ts", "core/z.ts"]),  # no dot file, no folder below
        ("core/**/*.ts", ["core/sub/c.ts", "core/x/e.ts"]),  # ** is * without globstar
        ("core/*", ["core/1.ts", "core/a.ts", "core/b.tsx", "core/sub", "core/x", "core/z.ts"]),
        ("core/.*.ts", ["core/.hidden.ts"]),
        ("core/[ab].ts*", ["core/a.ts", "core/b.tsx"]),
        ("core/[!a].ts", ["core/1.ts", "core/z.ts"]),
        ("core/[0-9].ts", ["core/1.ts"]),
        ("core/?.ts", ["core/1.ts", "core/a.ts", "core/z.ts"]),
        ("*/a.ts", ["core/a.ts", "other/a.ts"]),
        ("core/[a-z].ts", None),  # a letter range: its meaning follows the locale
        ("core/[[:alpha:]].ts", None),
    ],
)
def test_globs_expand_as_bash_without_globstar(pattern: str, expected: list[str] | None) -> None:
    assert expand(pattern, KNOWN) == expected


GNU_SED = shutil.which("sed")
_ATOMS = {
    False: ["a", "b", ".", "[ab]", "[^a]", r"\(a\)", r"\(.*\)", r"\.", "(", "+", "|", "{", "─"],
    True: ["a", "b", ".", "[ab]", "[^a]", "(a)", "(.*)", r"\.", r"\(", "[0-9]", "─", "[é─]", "$"],
}  # fmt: skip
_QUANTS = {False: ["", "", "*", r"\{1,2\}"], True: ["", "", "*", "+", "?", "{0,2}"]}
_TEXTS = ["abc\naab\nx(a)y\n", "a.b*c\n1ab2\n\n", "─a─\n(é)x\n", "a+b?c|d{1}\n", "no newline ab"]


def _random_script(rng: random.Random, extended: bool) -> str:
    commands = []
    for _ in range(rng.randint(1, 2)):
        atoms = rng.randint(1, 4)
        regex = "".join(
            rng.choice(_ATOMS[extended]) + rng.choice(_QUANTS[extended]) for _ in range(atoms)
        )
        regex = rng.choice(["", "^"]) + regex + rng.choice(["", "$"])
        replacement = "".join(
            rng.choice(["X", "&", r"\1", r"\&", r"\n", "[&]", ""]) for _ in range(2)
        )
        commands.append(f"s/{regex}/{replacement}/{rng.choice(['', 'g', '2', '2g', 'I'])}")
    return ";".join(commands)


def _gnu_sed(script: str, extended: bool, text: str, locale: str) -> str | None:
    args = [GNU_SED or "sed", *(["-E"] if extended else []), "-e", script]
    done = subprocess.run(args, input=text.encode(), capture_output=True, env={"LC_ALL": locale})
    return done.stdout.decode("utf-8", "replace") if done.returncode == 0 else None


@pytest.mark.skipif(
    GNU_SED is None
    or "GNU" not in subprocess.run([GNU_SED, "--version"], capture_output=True, text=True).stdout,
    reason="needs GNU sed",
)
def test_computed_content_is_what_gnu_sed_writes_in_either_locale() -> None:
    """Random scripts of the subset and around it: whenever replay computes a content, real
    GNU sed writes that content, in the C locale and in a UTF-8 one."""
    rng = random.Random(3)
    computed = 0
    for _ in range(400):
        extended = rng.random() < 0.4
        script, text = _random_script(rng, extended), rng.choice(_TEXTS)
        program = parse(script, extended, "gnu")
        got = program.apply(text) if program is not None else None
        if got is None:
            continue
        computed += 1
        for locale in ("C", "C.UTF-8"):
            assert got == _gnu_sed(script, extended, text, locale), (script, extended, text, locale)
    assert computed > 100


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        # a loop's body runs once per word of its list (the real shape: for f in …; do sed …)
        ('for f in src/a.ts src/b.ts; do sed -i "s/x/y/g" "$f"; done',
         [("substitute", "src/a.ts"), ("substitute", "src/b.ts")]),
        ("for f in a b; do cp \"$f\" \"${f}.bak\"; done",
         [("copy", "a.bak"), ("copy", "b.bak")]),
        # a glob in the list is expanded where the files are read, under the loop's cd
        ("cd pkg && for f in core/*.ts; do sed -i '' 's|a|b|' $f; done",
         [("substitute", "pkg/core/*.ts")]),
        # the program after a keyword is the program
        ("if true; then rm x.txt; fi", [("delete", "x.txt")]),
        # a list replay cannot read: the body may change any file (a selection, anywhere)
        ("for f in $(ls); do rm $f; done", [("delete", ".")]),
        ("sed -i s/a/b/ $f", []),
    ],
)  # fmt: skip
def test_for_loops_run_their_body_once_per_word(
    command: str, expected: list[tuple[str, str]]
) -> None:
    assert [(c.kind, c.path) for c in changes(command)] == expected
