"""Commit recovery beyond "the commit that holds what the session read".

Real sessions start from dirty working trees, commit their own work (or have it committed
later), start new projects, and run in folders named unlike their checkout. The first half
builds small real git histories for each case; the second runs the shared corpus sessions
against clones of their repositories' bundles, with the outcomes checked by reading the
sessions and the histories (see the comments at each).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.reconstruct.events import Script
from trajforge.reconstruct.commits import Read, choose
from trajforge.reconstruct.evidence import collect
from trajforge.reconstruct.gitrepo import Blobs, Trees, commit_log, tree_ids
from trajforge.reconstruct.paths import session_root
from trajforge.reconstruct.replay import replay
from trajforge.reconstruct.repos import RepoSearch
from trajforge.reconstruct.sessionrepo import Recovered, recover, replay_session
from trajforge.records import Session, SessionHeader
from trajforge.registry import FORMATS, create

DAY = 86400
T0 = 1_767_000_000  # 2025-12-29


def _git(repo: Path, *args: str, when: int = T0) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "T",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "T",
        "GIT_COMMITTER_EMAIL": "t@example.com",
        "GIT_AUTHOR_DATE": f"@{when} +0000",
        "GIT_COMMITTER_DATE": f"@{when} +0000",
    }
    done = subprocess.run(
        ["git", "-C", str(repo), *args], env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def _history(repo: Path, commits: list[tuple[int, dict[str, str | None]]]) -> list[str]:
    """A repository whose commits (time, files: text, or None to delete) are made in order."""
    repo.mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    shas = []
    for n, (when, files) in enumerate(commits):
        for name, text in files.items():
            path = repo / name
            if text is None:
                path.unlink()
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-m", f"c{n}", when=when)
        shas.append(_git(repo, "rev-parse", "HEAD"))
    return shas


APP_1 = "def app():\n    return 1\n"
APP_2 = "def app():\n    return 2\n"
LIB_OLD = "def lib():\n    x = 1\n    return x\n"
LIB_NEW = "def lib():\n    x = 2\n    return x * 2\n"


def test_the_sessions_own_commit_is_not_its_start_its_parent_is(tmp_path: Path) -> None:
    """c2 is where the session ran; c3 holds lib.py as the session rewrote it (its commit), c4
    comes later. The recorded start is after all of them (pi writes its header late): the
    latest commit holding what the session read used to win (c4, the session's own work in
    it); now c3 and what descends from it are ruled out and its parent is the start."""
    shas = _history(
        tmp_path / "r",
        [
            (T0, {"app.py": APP_1, "lib.py": LIB_OLD}),
            (T0 + 60, {"app.py": APP_2}),
            (T0 + 3600, {"lib.py": LIB_NEW}),
            (T0 + 7200, {"README.md": "# r\n"}),
        ],
    )
    reads = {"app.py": Read(APP_2, False), "lib.py": Read(LIB_OLD, False)}
    started = T0 + 9000.0
    old = choose(tmp_path / "r", reads, started=started)
    assert old.commit == shas[1]  # lib.py as read: only c1, c2 hold both as read
    made = {"lib.py": frozenset({LIB_NEW.rstrip()})}
    reads = {"app.py": Read(APP_2, False)}  # a file the session never changed: c2..c4 tie
    assert choose(tmp_path / "r", reads, started=started).commit == shas[3]
    got = choose(tmp_path / "r", reads, started=started, outputs=made)
    assert got.commit == shas[1] and got.session_commit == shas[2]
    assert got.confident and got.score == 1.0 and shas[2][:12] in got.note


def test_dirty_working_tree_under_the_session_commit_is_found(tmp_path: Path) -> None:
    """The working tree was c0 plus uncommitted changes to notes.md and cli.py; the session
    edited lib.py and committed everything (c1). Without the session's outputs c1 wins on
    reads (it holds notes.md as read): the session's own work would be in every workspace.
    Two of three read files match no commit before c1; under the session's commit they are the
    working tree's own changes, listed and not scored."""
    notes_dirty = "# notes\n\n- a\n- b\n"
    cli_dirty = "import lib\n\nlib.lib()\nprint('dirty')\n"
    shas = _history(
        tmp_path / "r",
        [
            (T0, {"app.py": APP_1, "lib.py": LIB_OLD, "notes.md": "# notes\n", "cli.py": "x\n"}),
            (T0 + 3600, {"lib.py": LIB_NEW, "notes.md": notes_dirty}),
        ],
    )
    reads = {
        "app.py": Read(APP_1, False),
        "notes.md": Read(notes_dirty, False),  # committed later, with the session's work
        "cli.py": Read(cli_dirty, False),  # never committed as read
    }
    plain = choose(tmp_path / "r", reads, started=T0 + 60.0)
    assert plain.commit == shas[1] and plain.score == pytest.approx(2 / 3)
    assert choose(tmp_path / "r", {**reads, "lib.py": Read(LIB_OLD, False)}).score == 0.5
    made = {"lib.py": frozenset({LIB_NEW.rstrip()})}
    got = choose(tmp_path / "r", reads, started=T0 + 60.0, outputs=made)
    assert got.commit == shas[0] and got.confident and got.session_commit == shas[1]
    assert got.matched == ("app.py",) and got.unmatched == ()
    assert got.uncommitted == ("cli.py", "notes.md") and "2 with uncommitted" in got.note


def test_a_new_project_starts_before_its_first_commit(tmp_path: Path) -> None:
    shas = _history(tmp_path / "r", [(T0 + 600, {"index.html": LIB_NEW})])
    made = {"index.html": frozenset({LIB_NEW.rstrip()})}
    got = choose(tmp_path / "r", {}, started=T0 + 0.0, outputs=made)
    assert got.empty_start and got.confident and got.commit is None
    assert got.session_commit == shas[0] and "starts empty" in got.note


def test_content_restored_from_long_ago_does_not_mark_old_commits(tmp_path: Path) -> None:
    """The session reverted lib.py to what c0 held ten days before it: c0 holding that content
    says nothing about c0 being after the session."""
    shas = _history(
        tmp_path / "r",
        [(T0, {"lib.py": LIB_NEW, "app.py": APP_1}), (T0 + 10 * DAY, {"lib.py": LIB_OLD})],
    )
    reads = {"app.py": Read(APP_1, False), "lib.py": Read(LIB_OLD, False)}
    made = {"lib.py": frozenset({LIB_NEW.rstrip()})}
    got = choose(tmp_path / "r", reads, started=T0 + 10 * DAY + 60.0, outputs=made)
    assert got.commit == shas[1] and got.session_commit is None and got.score == 1.0


def test_tree_walk_agrees_with_ls_tree(tmp_path: Path) -> None:
    _history(
        tmp_path / "r",
        [(T0, {"a/b/c.py": APP_1, "a/d.py": APP_2, "e.txt": "e\n"}), (T0 + 60, {"a/d.py": None})],
    )
    paths = ["a/b/c.py", "a/d.py", "e.txt", "a/missing.py", "a/b/c.py/x"]
    with Blobs(tmp_path / "r") as blobs:
        trees = Trees(blobs)
        for commit in commit_log(tmp_path / "r"):
            assert trees.lookup(commit.sha, paths) == tree_ids(tmp_path / "r", commit.sha, paths)


def test_a_file_the_start_lacks_was_created_during_the_session() -> None:
    """Edited before any read (content unknown): back-propagated to the start only when the
    starting tree may hold it; a recovered commit that lacks it says it came later (a ``mv``
    of a glob, a generator)."""
    events = Script().edit("moved/x.ts", "a", "b").events
    assert "moved/x.ts" in replay(events, None, {"a.ts": "a"}).state_at(-1).missing
    known = replay(events, None, {"a.ts": "a"}, frozenset({"a.ts"}))
    assert "moved/x.ts" not in known.state_at(-1).missing
    assert "moved/x.ts" in known.state_at(len(events)).missing


def _session(events: Script, cwd: str | None) -> Session:
    header = SessionHeader(
        harness="pi", session_id="s", source_path="s.jsonl", content_hash="0", cwd=cwd
    )
    return Session(header=header, events=tuple(events.events))


def test_a_renamed_project_is_found_by_content_in_every_checkout(tmp_path: Path) -> None:
    """Neither checkout is named like the recorded folder; the one whose history holds the
    files the session read is its repository, at the commit holding them as read."""
    alpha = _history(tmp_path / "repos" / "alpha", [(T0, {"src/app.py": APP_1, "lib.py": LIB_OLD})])
    beta = _history(
        tmp_path / "repos" / "beta",
        [(T0, {"pkg/core/app.py": APP_1, "pkg/core/lib.py": LIB_NEW}), (T0 + 60, {"x.md": "x\n"})],
    )
    assert alpha and beta
    where = "/Volumes/Work/old-name/core"
    script = Script().read(f"{where}/app.py", APP_1).read(f"{where}/lib.py", LIB_NEW)
    session = _session(script, where)
    search = RepoSearch(dirs=(str(tmp_path / "repos"),))
    got = recover(session, replay(session.events, where), search)
    assert got.match.status == "found" and got.match.subdir == "pkg/core"
    assert got.match.path == str((tmp_path / "repos" / "beta").resolve())
    assert got.match.commit == beta[1] and got.match.found_by == "content"
    assert "found by content" in got.match.detail
    lone = _session(Script().read(f"{where}/app.py", "print('elsewhere')\n"), where)
    alone = recover(lone, replay(lone.events, where), search)
    assert alone.match.status == "not_found" and "nor holds the files" in alone.match.detail


# --- the shared corpus, against clones of its repositories' bundles ---------------------------

CORPUS = Path(__file__).parents[2].parent / "shared" / "corpus"
BUNDLES = {
    "pi-mono": "badlogic__pi-mono",
    "dark-factory": "victoryforphil__dark-factory",
    "random": "apanloco__random",
    "trl": "rycerzes__trl",
}
DARK = CORPUS / "real" / "opencode" / "victoryforphil__dark-factory"
needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason="shared corpus not mounted")


@pytest.fixture(scope="module")
def repos(tmp_path_factory: pytest.TempPathFactory) -> RepoSearch:
    root = tmp_path_factory.mktemp("repos")
    for name, bundle in BUNDLES.items():
        source = CORPUS / "repos" / f"{bundle}.bundle"
        subprocess.run(
            ["git", "clone", "-q", "--no-checkout", str(source), str(root / name)], check=True
        )
    return RepoSearch(dirs=(str(root),))


def _parsed(path: Path, harness: str) -> Session:
    fmt = create(FORMATS, harness, "format")
    return next(s for s in fmt.parse(path) if isinstance(s, Session))


def _recovered(session: Session, search: RepoSearch) -> Recovered:
    root = session_root(session.header.cwd, session.events)
    return recover(session, replay(session.events, root), search)


@needs_corpus
def test_pi_session_that_committed_its_work_starts_before_it(repos: RepoSearch) -> None:
    """before-compaction ran from 22:41Z (its header says 00:53Z) and committed 25 times, the
    bundle ending at its WP16 (98163ad). The start is 9499712, the parent of 65435ea (its first
    commit: refactor.md as it wrote it); WP16 put WP11's print-mode.ts into the workspace of
    an episode at WP2, and files it later moved with shell globs counted as missing from the
    start. Files it copied in a `for` loop are known after it."""
    session = _parsed(CORPUS / "pi-mono" / "before-compaction.jsonl", "pi")
    state, match = replay_session(session, session.header.cwd, None, repos)
    assert match is not None and match.status == "found"
    assert match.commit == "94997128d62c097bded34c313bc6fa1974934c64"
    assert (match.matched, match.compared) == (7, 7) and "65435ea03dca" in match.detail
    early = state.state_at(100)
    assert "packages/coding-agent/src/modes/print-mode.ts" not in early.files
    # written at event 75 (WP1); `npm run check` at event 81 ran `biome check --write .`
    # ("Fixed 2 files": WP1's commit holds it with its imports sorted): its text is known only
    # as it was before (the same code, its layout unsure) until the session commits it (event
    # 87, "[refactor 3f30550] WP1: …"); the bundle holds that commit rebased (3a57585: same
    # subject and counts), and the file is read back from it
    executor = "packages/coding-agent/src/core/bash-executor.ts"
    assert [v.origin for v in state.history[executor][:3]] == ["write", "formatted", "commit"]
    assert "of the session's commits found in it" in match.detail
    wp1 = ["git", "-C", str(Path(repos.dirs[0]) / "pi-mono"), "show", f"3a57585:{executor}"]
    assert early.files[executor] == subprocess.run(wp1, capture_output=True, text=True).stdout
    assert state.state_at(84).files[executor] != early.files[executor]  # as written, unsorted
    # copied by `for f in *.ts; do … cp "$f" ../modes/interactive/components/` (event 692):
    # known, as its source is; its imports rewritten by sed at 722, then `npm run check` at 729
    # ran biome over it ("Fixed 8 files" of the 32 the session had changed): kept as before,
    # its layout unsure, and the sed at 731 that fixes its import applies to it. The macOS sed
    # at 893 (`s/…;\n\t\t\tthis.…(/this.showStatus(/g`) needs a newline in a line: it changes
    # nothing, and interactive-mode.ts stays known (it was lost there)
    copied = "packages/coding-agent/src/modes/interactive/components/oauth-selector.ts"
    final = state.state_at(len(session.events))
    assert copied in state.state_at(700).files and copied in final.files
    assert '"../../../core/oauth/storage.js"' in final.files[copied]
    interactive = "packages/coding-agent/src/modes/interactive/interactive-mode.ts"
    assert state.state_at(892).files[interactive] == state.state_at(894).files[interactive]


@needs_corpus
def test_pi_session_on_a_dirty_tree_is_found_under_its_commit(repos: RepoSearch) -> None:
    """large-session started on d2205bf (WIP theming) plus uncommitted work that its own
    "Release v0.8.0" (b12918e) committed: 13 of 21 files it read match no commit before it."""
    got = _recovered(_parsed(CORPUS / "pi-mono" / "large-session.jsonl", "pi"), repos)
    match = got.match
    assert match.status == "found" and match.commit == "d2205bf0e22d80cc0c785d20662cd89edc8cbd1d"
    assert (match.matched, match.compared, len(match.unmatched)) == (8, 8, 13)
    assert "b12918e71f70" in match.detail and "uncommitted" in match.detail
    assert got.base is not None  # the session's reads, not the commit, for the dirty files
    assert "getSelectListTheme" in got.base["packages/coding-agent/src/theme/theme.ts"]


@needs_corpus
def test_a_file_the_user_edited_by_hand_is_not_kept_stale(repos: RepoSearch) -> None:
    """large-session read tui-renderer.ts whole at event 35; the user then removed chalk calls
    by hand ("i manually removed almost all chalk uses"). The ranged read at event 60 shows
    `theme.fg("dim", …)` where replay's text has `chalk.dim(…)`: from there the file is known
    only in part, and unknown once edited, instead of replay's stale text standing in for it
    until an edit failed at event 841."""
    session = _parsed(CORPUS / "pi-mono" / "large-session.jsonl", "pi")
    state, match = replay_session(session, session.header.cwd, None, repos)
    assert match is not None and match.status == "found"
    renderer = "packages/coding-agent/src/tui/tui-renderer.ts"
    assert (
        'chalk.dim("Current model does not support thinking")' in state.state_at(40).files[renderer]
    )
    assert renderer in state.state_at(60).partial
    assert renderer in state.state_at(741).missing  # edited at 85 and 90 without its text
    assert any(d.startswith(f"event 60: a ranged read of {renderer}") for d in state.divergences)


@needs_corpus
@pytest.mark.parametrize(
    ("path", "harness", "commit", "first"),
    [
        # core/ was a new, untracked app; the gitter sub-agent committed it (357e8b6)
        (DARK / "session__crisp-garden__ses_39bc72f63ffeQb8egYBpyTrCNr.json", "opencode",
         "ac3e7698e3d81a8f183b679ac8ff2993d475e74c", "357e8b6486ca"),
        # benchmarks/ uncommitted at 09:44Z; committed with the session's edits at 14:56Z
        (CORPUS / "real" / "pi" / "rycerzes__trl" / "session.jsonl", "pi",
         "5be03d095a24c2748cc145266d658200aba30556", "80f5438cb9d7"),
    ],
)  # fmt: skip
def test_untracked_work_committed_later_tells_the_start(
    repos: RepoSearch, path: Path, harness: str, commit: str, first: str
) -> None:
    match = _recovered(_parsed(path, harness), repos).match
    assert match.status == "found" and match.commit == commit and first in match.detail


@needs_corpus
def test_a_new_project_starts_empty(repos: RepoSearch) -> None:
    """random: `git init` in the session; its root commit holds index.html as it wrote it."""
    session = _parsed(
        CORPUS / "real" / "claude" / "apanloco__random" / "session.jsonl", "claude-code"
    )
    got = _recovered(session, repos)
    assert got.match.status == "found" and got.match.commit is None and got.base == {}
    assert "e2aec0db2613" in got.match.detail


@needs_corpus
def test_a_session_under_another_folder_name_is_found_by_content(repos: RepoSearch) -> None:
    """quiet-meadow, its folder moved to a backup volume under another name."""
    session = _parsed(
        DARK / "session__quiet-meadow__ses_39c0a3da8ffeFQWvKTGUJWivpv.json", "opencode"
    )
    old, new = "/Users/alex/repos/vfp/dark-factory", "/Volumes/Backup/df-old"

    def moved(text: str | None) -> str | None:
        return text.replace(old, new) if text else text

    events = tuple(
        e.model_copy(update={"path": moved(e.path), "cwd": moved(e.cwd)}) for e in session.events
    )
    header = session.header.model_copy(update={"cwd": new})
    renamed = session.model_copy(update={"header": header, "events": events})
    match = _recovered(renamed, repos).match
    assert match.status == "found" and match.commit == "e1e91b28110fefa31ba9f44d4c4c6b29e9ee8783"
    assert match.found_by == "content" and "found by content" in match.detail
    for other in ("definitelyreal__speakfree", "CryptoSodi__Battle-Cities"):
        folder = next((CORPUS / "real").glob(f"*/{other}"))
        path = next(p for p in folder.iterdir() if p.suffix in (".jsonl", ".json"))
        harness = "codex" if "codex" in path.name else "claude-code"
        assert _recovered(_parsed(path, harness), repos).match.status == "not_found"


def test_collect_outputs_leave_out_small_and_unchanged_contents() -> None:
    events = (
        Script()
        .read("a.py", APP_1)
        .edit("a.py", "return 1", "return 1")  # unchanged
        .write("__init__.py", "")
        .write("b.py", LIB_NEW)
        .events
    )
    found = collect(replay(events, None))
    assert set(found.reads) == {"a.py"} and found.outputs == {"b.py": frozenset({LIB_NEW.rstrip()})}
