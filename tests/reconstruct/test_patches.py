"""Patch application: V4A (Codex apply_patch), unified diffs, search/replace edits."""

from __future__ import annotations

import difflib
import random
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from trajforge.reconstruct.patches import (
    FileOp,
    PatchError,
    apply_edits,
    apply_unified,
    apply_v4a,
    parse_v4a,
)
from trajforge.records import Edit


def reader(files: dict[str, str]) -> Callable[[str], str | None]:
    return files.get


def v4a(body: str) -> str:
    return f"*** Begin Patch\n{body}\n*** End Patch\n"


PY = (
    "import os\n\n\nclass A:\n    def f(self):\n        return 1\n"
    "\n\nclass B:\n    def f(self):\n        return 1\n"
)


# ---------------------------------------------------------------- V4A


def test_v4a_add_delete_update_move_in_one_patch() -> None:
    patch = v4a(
        "*** Add File: new/hello.txt\n+hello\n+world\n"
        "*** Delete File: old.txt\n"
        "*** Update File: a.py\n@@\n-x = 1\n+x = 2\n"
        "*** Update File: src/m.py\n*** Move to: lib/m.py\n@@\n def g():\n-    pass\n+    return 3"
    )
    files = {"old.txt": "bye\n", "a.py": "x = 1\ny = 2\n", "src/m.py": "def g():\n    pass\n"}
    ops = apply_v4a(patch, reader(files))
    assert ops == [
        FileOp("new/hello.txt", "add", "hello\nworld\n"),
        FileOp("old.txt", "delete", None),
        FileOp("a.py", "update", "x = 2\ny = 2\n"),
        FileOp("src/m.py", "move", "def g():\n    return 3\n", "lib/m.py"),
    ]


def test_v4a_context_anchor_picks_the_right_occurrence() -> None:
    patch = v4a(
        "*** Update File: m.py\n@@ class B:\n"
        "     def f(self):\n-        return 1\n+        return 2"
    )
    (op,) = apply_v4a(patch, reader({"m.py": PY}))
    assert op.content == PY.replace(
        "class B:\n    def f(self):\n        return 1",
        "class B:\n    def f(self):\n        return 2",
    )
    assert op.content is not None and op.content.count("return 1") == 1


def test_v4a_stacked_anchors_and_multiple_hunks_search_forward() -> None:
    patch = v4a(
        "*** Update File: m.py\n"
        "@@ import os\n-import os\n+import sys\n"
        "@@ class B:\n@@     def f(self):\n-        return 1\n+        return 20\n"
    )
    (op,) = apply_v4a(patch, reader({"m.py": PY}))
    assert op.content is not None
    assert op.content.startswith("import sys\n")
    assert op.content.endswith("class B:\n    def f(self):\n        return 20\n")
    assert "class A:\n    def f(self):\n        return 1\n" in op.content


def test_v4a_second_hunk_searches_after_the_first() -> None:
    content = "a\nx\nb\nx\n"
    patch = v4a("*** Update File: f\n@@\n a\n-x\n+X1\n@@\n-x\n+X2")
    (op,) = apply_v4a(patch, reader({"f": content}))
    assert op.content == "a\nX1\nb\nX2\n"


def test_v4a_hermes_hint_anchor_and_move_file() -> None:
    patch = v4a(
        "*** Update File: m.py\n@@ class B @@\n"
        "     def f(self):\n-        return 1\n+        return 9\n"
        "*** Move File: m.py -> pkg/m.py"
    )
    ops = apply_v4a(patch, reader({"m.py": PY}))
    assert ops[0].content is not None and ops[0].content.endswith("        return 9\n")
    assert ops[0].content.count("return 1") == 1
    assert ops[1] == FileOp("m.py", "move", ops[0].content, "pkg/m.py")


def test_v4a_whitespace_tolerant_matching() -> None:
    content = "def f():   \n\treturn  1\nz\n"
    # trailing whitespace differs on line 1; line 2 differs in leading whitespace only
    patch = v4a("*** Update File: f.py\n@@\n def f():\n-return  1\n+    return 2")
    (op,) = apply_v4a(patch, reader({"f.py": content}))
    # like Codex, the matched region (context lines included) is rewritten from the patch
    assert op.content == "def f():\n    return 2\nz\n"


def test_v4a_unicode_punctuation_is_folded() -> None:
    content = "msg = \u201chello\u201d  # em\u2014dash\n"
    patch = v4a('*** Update File: f.py\n@@\n-msg = "hello"  # em-dash\n+msg = "bye"')
    (op,) = apply_v4a(patch, reader({"f.py": content}))
    assert op.content == 'msg = "bye"\n'


def test_v4a_end_of_file_matches_the_last_occurrence() -> None:
    content = "x\ny\nx\n"
    patch = v4a("*** Update File: f\n@@\n-x\n+z\n*** End of File")
    (op,) = apply_v4a(patch, reader({"f": content}))
    assert op.content == "x\ny\nz\n"


def test_v4a_pure_addition_appends_like_codex() -> None:
    patch = v4a("*** Update File: f\n@@\n+tail")
    (op,) = apply_v4a(patch, reader({"f": "a\nb"}))
    assert op.content == "a\nb\ntail\n"  # Codex also ends the file with a newline


def test_v4a_trailing_blank_context_stands_for_the_final_newline() -> None:
    patch = v4a("*** Update File: f\n@@\n a\n-b\n+c\n \n")
    (op,) = apply_v4a(patch, reader({"f": "a\nb\n"}))
    assert op.content == "a\nc\n"


def test_v4a_crlf_patch_and_crlf_file() -> None:
    patch = v4a("*** Update File: w.txt\n@@\n one\n-two\n+TWO").replace("\n", "\r\n")
    (op,) = apply_v4a(patch, reader({"w.txt": "one\r\ntwo\r\nthree\r\n"}))
    assert op.content == "one\r\nTWO\r\nthree\r\n"


def test_v4a_heredoc_wrapper_and_unprefixed_context() -> None:
    patch = "<<'EOF'\n" + v4a("*** Update File: f\n@@\na\n-b\n+B") + "EOF\n"
    (op,) = apply_v4a(patch, reader({"f": "a\nb\n"}))
    assert op.content == "a\nB\n"


def test_v4a_later_sections_see_earlier_ones() -> None:
    patch = v4a("*** Add File: n.py\n+x = 1\n*** Update File: n.py\n@@\n-x = 1\n+x = 2")
    ops = apply_v4a(patch, reader({}))
    assert ops[-1] == FileOp("n.py", "update", "x = 2\n")


def test_v4a_add_file_tolerates_blank_lines_inside() -> None:
    (f,) = parse_v4a(v4a("*** Add File: a.md\n+# T\n\n+body\n\n"))
    assert f.content == "# T\n\nbody\n"


def test_v4a_update_unknown_file_names_it() -> None:
    with pytest.raises(PatchError, match=r"content of src/x\.py unknown"):
        apply_v4a(v4a("*** Update File: src/x.py\n@@\n-a\n+b"), reader({}))


def test_v4a_update_after_delete_in_same_patch() -> None:
    patch = v4a("*** Delete File: f\n*** Update File: f\n@@\n-a\n+b")
    with pytest.raises(PatchError, match="deleted earlier in this patch"):
        apply_v4a(patch, reader({"f": "a\n"}))


def test_v4a_missing_lines_error_names_file_and_hunk() -> None:
    patch = v4a("*** Update File: f.py\n@@\n-a\n+b\n@@\n-nothere\n+c")
    with pytest.raises(PatchError, match=r"f\.py: hunk 2: expected lines not found:\n  nothere"):
        apply_v4a(patch, reader({"f.py": "a\n"}))


def test_v4a_missing_anchor_for_pure_addition() -> None:
    with pytest.raises(PatchError, match=r"f\.py: hunk 1: context '@@ class Z' not found"):
        apply_v4a(v4a("*** Update File: f.py\n@@ class Z\n+x"), reader({"f.py": "a\n"}))


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        ("hello world", "no '\\*\\*\\* Begin Patch' line"),
        (v4a("*** Frobnicate File: x"), "patch line 2: expected '\\*\\*\\* Add File:'"),
        (v4a("*** Update File: x.py"), "patch line 2: '\\*\\*\\* Update File: x.py' has no hunks"),
        (v4a("*** Add File: x.py\n+ok\nnot-a-plus"), "patch line 4: .* must start with '\\+'"),
        (v4a("*** Delete File:"), "patch line 2: .* without a path"),
        (v4a("*** Move File: a.py"), "needs 'old/path -> new/path'"),
        (v4a("*** Update File: x\n@@ def f():"), "x: hunk 1 has an '@@' anchor but no lines"),
        (v4a("*** Update File: x\n@@\n*** End of File"), "End of File' after an empty hunk"),
    ],
)
def test_v4a_malformed_patches_give_clear_errors(patch: str, message: str) -> None:
    with pytest.raises(PatchError, match=message):
        apply_v4a(patch, reader({"x": "a\n", "x.py": "a\n", "a.py": "a\n"}))


def test_parse_v4a_structure() -> None:
    files = parse_v4a(
        v4a(
            "*** Update File: a\n*** Move to: b\n"
            "@@ def f():\n-    pass\n+    return 1\n*** End of File"
        )
    )
    (f,) = files
    assert (f.action, f.path, f.move_to, f.line) == ("move", "a", "b", 2)
    (chunk,) = f.chunks
    assert chunk.anchors == ("def f():",)
    assert chunk.old == ("    pass",) and chunk.new == ("    return 1",) and chunk.eof


# ---------------------------------------------------------------- unified diffs


def git_diff(tmp_path: Path, before: dict[str, str], after: dict[str, str]) -> str:
    """A real ``git diff`` between two trees (renames detected)."""
    repo = tmp_path / "repo"
    repo.mkdir()

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
            check=True,
            capture_output=True,
            text=True,
        ).stdout

    git("init", "-q")
    for name, text in before.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_bytes(text.encode())
    git("add", "-A")
    git("commit", "-qm", "before", "--allow-empty")
    for name in before:
        (repo / name).unlink()
    for name, text in after.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_bytes(text.encode())
    git("add", "-A")
    return git("diff", "--cached", "-M")


def test_unified_real_git_diff_multi_file(tmp_path: Path) -> None:
    long = "".join(f"line {i}\n" for i in range(40))
    before = {"a.py": long, "gone.txt": "bye\n", "mv/old.py": long + "end\n", "n.txt": "x"}
    after = {
        "a.py": long.replace("line 3\n", "LINE 3\n").replace("line 30\n", ""),
        "new/file.txt": "fresh\n",
        "mv/new.py": long + "END\n",
        "n.txt": "x\ny",
    }
    diff = git_diff(tmp_path, before, after)
    ops = {op.path: op for op in apply_unified(diff, reader(before))}
    assert ops["a.py"] == FileOp("a.py", "update", after["a.py"])
    assert ops["gone.txt"] == FileOp("gone.txt", "delete", None)
    assert ops["new/file.txt"] == FileOp("new/file.txt", "add", "fresh\n")
    assert ops["mv/old.py"] == FileOp("mv/old.py", "move", after["mv/new.py"], "mv/new.py")
    assert ops["n.txt"].content == "x\ny"  # "\ No newline at end of file" on both sides


def test_unified_hunk_applies_near_a_shifted_line() -> None:
    content = "".join(f"{i}\n" for i in range(30))
    shifted = "extra\nextra\n" + content
    diff = "--- a/f\n+++ b/f\n@@ -10,3 +10,3 @@\n 9\n-10\n+TEN\n 11\n"
    (op,) = apply_unified(diff, reader({"f": shifted}))
    assert op.content == shifted.replace("\n10\n", "\nTEN\n")


def test_unified_fuzz_drops_mismatched_outer_context() -> None:
    content = "a\nb\nc\nd\ne\n"
    diff = "--- f\n+++ f\n@@ -1,5 +1,5 @@\n A!\n b\n-c\n+C\n d\n E!\n"
    (op,) = apply_unified(diff, reader({"f": content}))
    assert op.content == "a\nb\nC\nd\ne\n"


def test_unified_miscounted_hunk_and_path_argument() -> None:
    diff = "@@ -1,2 +1,2 @@\n x\n-y\n+Y\n z\n"  # says 2 lines, has 3; no file headers
    (op,) = apply_unified(diff, reader({"p.txt": "x\ny\nz\n"}), path="p.txt")
    assert op == FileOp("p.txt", "update", "x\nY\nz\n")


def test_unified_crlf_file_keeps_crlf() -> None:
    diff = "--- a/w\r\n+++ b/w\r\n@@ -1,2 +1,2 @@\r\n a\r\n-b\r\n+B\r\n"
    (op,) = apply_unified(diff, reader({"w": "a\r\nb\r\n"}))
    assert op.content == "a\r\nB\r\n"


def test_unified_insertion_after_line() -> None:
    diff = "--- a/f\n+++ b/f\n@@ -2,0 +3,2 @@\n+n1\n+n2\n"
    (op,) = apply_unified(diff, reader({"f": "1\n2\n3\n"}))
    assert op.content == "1\n2\nn1\nn2\n3\n"


def test_unified_errors() -> None:
    with pytest.raises(PatchError, match="not a unified diff"):
        apply_unified("just words", reader({}))
    with pytest.raises(PatchError, match="hunk without a file name"):
        apply_unified("@@ -1 +1 @@\n-a\n+b\n", reader({}))
    with pytest.raises(PatchError, match=r"content of f unknown"):
        apply_unified("--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n", reader({}))
    with pytest.raises(PatchError, match=r"f: hunk 1 \(diff line 3\): lines not found near line 1"):
        apply_unified("--- a/f\n+++ b/f\n@@ -1 +1 @@\n-zz\n+b\n", reader({"f": "a\n"}))
    with pytest.raises(PatchError, match="binary diffs"):
        apply_unified(
            "diff --git a/i.png b/i.png\nBinary files a/i.png and b/i.png differ\n", reader({})
        )


# ---------------------------------------------------------------- search/replace edits


def test_edits_apply_in_order() -> None:
    edits = [Edit(old="a = 1", new="a = 10"), Edit(old="a = 10\nb", new="c")]
    out = apply_edits("a = 1\nb = 2\n", edits)
    assert out == "c = 2\n"


def test_edit_replace_all_and_crlf_fallback() -> None:
    assert apply_edits("x x x", [Edit(old="x", new="y", replace_all=True)]) == "y y y"
    assert apply_edits("a\r\nb\r\n", [Edit(old="a\nb", new="A\nB")]) == "A\r\nB\r\n"


def test_edit_empty_old_creates_content_of_empty_file() -> None:
    assert apply_edits("", [Edit(old="", new="hello\n")]) == "hello\n"
    with pytest.raises(PatchError, match="empty old text"):
        apply_edits("something", [Edit(old="", new="x")])


def test_edit_not_found_and_ambiguous_messages() -> None:
    long = "y" * 200
    with pytest.raises(PatchError, match=rf"edit 2: old text not found: '{'y' * 80}'$"):
        apply_edits("abc", [Edit(old="a", new="b"), Edit(old=long, new="z")])
    with pytest.raises(PatchError, match=r"edit 1: old text occurs 2 times .*'dup'"):
        apply_edits("dup dup", [Edit(old="dup", new="x")])


# ---------------------------------------------------------------- round trips on random edits


def random_pair(rng: random.Random) -> tuple[str, str]:
    before = [f"line {rng.randrange(10**6)} {rng.choice(['a', 'bb', 'ccc'])}" for _ in range(60)]
    after = list(before)
    for _ in range(rng.randint(1, 6)):
        at = rng.randrange(len(after))
        kind = rng.choice(["replace", "insert", "delete"])
        if kind == "replace":
            after[at] = f"changed {rng.randrange(10**6)}"
        elif kind == "insert":
            after[at:at] = [f"new {rng.randrange(10**6)}" for _ in range(rng.randint(1, 3))]
        elif len(after) > 5:
            del after[at : at + rng.randint(1, 3)]
    return "".join(f"{x}\n" for x in before), "".join(f"{x}\n" for x in after)


def v4a_from(path: str, before: str, after: str) -> str:
    """A Codex-style V4A update built from difflib's grouped opcodes (3 lines of context)."""
    a, b = before.splitlines(), after.splitlines()
    out = [f"*** Update File: {path}"]
    for group in difflib.SequenceMatcher(None, a, b).get_grouped_opcodes(3):
        out.append("@@")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out += [f" {x}" for x in a[i1:i2]]
                continue
            out += [f"-{x}" for x in a[i1:i2]] + [f"+{x}" for x in b[j1:j2]]
        if group[-1][2] == len(a):
            out.append("*** End of File")
    return v4a("\n".join(out))


@pytest.mark.parametrize("seed", range(40))
def test_round_trip_random_edits(seed: int) -> None:
    rng = random.Random(seed)
    before, after = random_pair(rng)
    udiff = "".join(
        difflib.unified_diff(before.splitlines(True), after.splitlines(True), "a/f.txt", "b/f.txt")
    )
    assert apply_unified(udiff, reader({"f.txt": before})) == [FileOp("f.txt", "update", after)]
    patch = v4a_from("f.txt", before, after)
    assert apply_v4a(patch, reader({"f.txt": before})) == [FileOp("f.txt", "update", after)]
    # the same diff still applies when the file has drifted by a few lines at the top
    drifted = "header 1\nheader 2\n" + before
    (op,) = apply_unified(udiff, reader({"f.txt": drifted}))
    assert op.content == "header 1\nheader 2\n" + after


def test_unified_plain_diff_u_with_timestamps_patches_the_known_file() -> None:
    diff = (
        "--- f.py.orig\t2024-01-01 10:00:00.000000000 +0000\n"
        "+++ f.py\t2024-01-01 10:01:00.000000000 +0000\n"
        "@@ -1 +1 @@\n-a\n+b\n"
    )
    assert apply_unified(diff, reader({"f.py": "a\n"})) == [FileOp("f.py", "update", "b\n")]


def test_unified_git_pure_rename_and_mode_change() -> None:
    diff = (
        "diff --git a/x.sh b/x.sh\nold mode 100644\nnew mode 100755\n"
        "diff --git a/o.txt b/n.txt\nsimilarity index 100%\nrename from o.txt\nrename to n.txt\n"
    )
    ops = apply_unified(diff, reader({"o.txt": "same\n"}))
    assert ops == [FileOp("o.txt", "move", "same\n", "n.txt")]


def test_unified_git_new_empty_file() -> None:
    diff = "diff --git a/e.txt b/e.txt\nnew file mode 100644\nindex 0000000..e69de29\n"
    assert apply_unified(diff, reader({})) == [FileOp("e.txt", "add", "")]
