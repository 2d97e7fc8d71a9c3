"""A file of a dirty starting tree that the session only edited, recovered by undoing the
session's edits on the commit that holds them (:mod:`trajforge.reconstruct.undo_edits`).

The shape of pi-mono's ``large-session.jsonl`` (checked by reading it and the bundle's
history): the session started with uncommitted lines in ``text.ts`` (``setCustomBgFn``), saw
them only through ``grep -A``, edited them, and its work was committed afterwards. The parent of
that commit lacks the lines, so the edit's old text was "not found" and the file, in every later
episode, unknown.
"""

from __future__ import annotations

from pathlib import Path

from tests.reconstruct.events import Script
from tests.reconstruct.test_commit_recovery import T0, _history, _session
from trajforge.reconstruct.replay import replay
from trajforge.reconstruct.repos import RepoSearch
from trajforge.reconstruct.sessionrepo import recover, replay_session
from trajforge.reconstruct.undo_edits import Commit, recovered_starts, undo
from trajforge.records import Edit

ROOT = "/home/me/proj"
APP = "export function app(): number {\n\treturn 1;\n}\n"
LIB = "export const base = 1;\nexport const rate = 2;\nexport const limit = 3;\n"
TEXT_COMMITTED = "export class Text {\n\trender(): string {\n\t\treturn '';\n\t}\n}\n"
DIRTY = "\tsetBg(fn?: () => string): void {\n\t\tthis.bg = fn;\n\t}\n"
TEXT_DIRTY = TEXT_COMMITTED.replace("\trender()", DIRTY + "\n\trender()")
INVALIDATE = "\n\tinvalidate(): void {\n\t\tthis.cache = undefined;\n\t}\n"
TEXT_END = TEXT_DIRTY.replace(DIRTY, DIRTY + INVALIDATE)
LIB_END = LIB.replace("rate = 2", "rate = 5").replace("limit = 3", "limit = 7")


def _repo(tmp_path: Path) -> list[str]:
    """c0: the tree without the uncommitted lines; c1: the session's work committed."""
    return _history(
        tmp_path / "repos" / "proj",
        [
            (T0, {"src/app.ts": APP, "src/lib.ts": LIB, "src/text.ts": TEXT_COMMITTED}),
            (T0 + 3600, {"src/text.ts": TEXT_END, "src/lib.ts": LIB_END}),
        ],
    )


def _script(grep: str = DIRTY) -> Script:
    return (
        Script()
        .user("add invalidate() to Text and raise the rate and the limit")
        .read(f"{ROOT}/src/app.ts", APP)
        .shell(f"grep -A 3 setBg {ROOT}/src/text.ts", 0, grep)
        .read(f"{ROOT}/src/text.ts", grep, partial=True)
        .edit(f"{ROOT}/src/text.ts", DIRTY, DIRTY + INVALIDATE)
        .read(f"{ROOT}/src/lib.ts", LIB)
        .edit(f"{ROOT}/src/lib.ts", "rate = 2", "rate = 5")
        .edit(f"{ROOT}/src/lib.ts", "limit = 3", "limit = 7")
    )


def test_an_edited_uncommitted_file_is_recovered_and_the_edits_replay(tmp_path: Path) -> None:
    shas = _repo(tmp_path)
    session = _session(_script(), ROOT)
    search = RepoSearch(dirs=(str(tmp_path / "repos"),))
    state, match = replay_session(session, ROOT, None, search)
    assert match is not None and match.commit == shas[0]
    assert "recovered by undoing its edits" in match.detail and "src/text.ts" in match.detail
    assert state.divergences == []
    end = state.state_at(len(session.events))
    assert end.files["src/text.ts"] == TEXT_END and end.missing == frozenset()
    assert state.state_at(-1).files["src/text.ts"] == TEXT_DIRTY  # the dirty start
    # lib.ts was committed as read: its edits apply to the commit, nothing to recover
    assert "src/lib.ts" not in match.detail


def test_a_ranged_read_the_undone_start_does_not_hold_rejects_it(tmp_path: Path) -> None:
    _repo(tmp_path)
    session = _session(_script(grep=DIRTY.replace("this.bg", "this.other")), ROOT)
    got = recover(
        session, replay(session.events, ROOT), RepoSearch(dirs=(str(tmp_path / "repos"),))
    )
    assert got.base is not None and got.base["src/text.ts"] == TEXT_COMMITTED
    assert "recovered by undoing" not in got.match.detail


def test_a_file_the_session_also_wrote_is_not_recovered(tmp_path: Path) -> None:
    shas = _repo(tmp_path)
    events = _script().write(f"{ROOT}/src/text.ts", TEXT_END).events
    probe = replay(events, ROOT)
    where = Commit(tmp_path / "repos" / "proj", shas[1])
    assert recovered_starts(events, probe, {"src/text.ts": TEXT_COMMITTED}, where) == {}
    only_edits = replay(_script().events, ROOT)
    recovered = recovered_starts(
        _script().events, only_edits, {"src/text.ts": TEXT_COMMITTED}, where
    )
    assert recovered == {"src/text.ts": TEXT_DIRTY}


def test_an_edit_is_undone_only_where_its_new_text_is_found_once() -> None:
    twice = (Edit(old="a = 1", new="a = 2"),)
    assert undo("a = 2\nb = 3\n", [twice]) == "a = 1\nb = 3\n"
    assert undo("a = 2\na = 2\n", [twice]) is None  # which one the edit made is unknown
    assert undo("a = 1\n", [twice]) is None  # the commit does not hold the edit
    every = (Edit(old="x", new="y", replace_all=True),)
    assert undo("y y\n", [every]) is None  # replace_all: how many there were is unknown
    assert undo("c = 3\n", [(Edit(old="a", new=""),)]) is None  # a deletion: where is unknown
