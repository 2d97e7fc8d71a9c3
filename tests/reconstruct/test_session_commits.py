"""Files the session committed are read back from its repository where replay lost track of
them (:mod:`trajforge.reconstruct.session_commits`).

The shape of pi-mono's ``before-compaction.jsonl`` (checked by reading it and the bundle's
history): the agent wrote ``bash-executor.ts``, ran ``npm run check`` (biome "Fixed 2 files":
which is unknown, so the file is unknown from there on), then committed "WP1: Create
bash-executor.ts …". The history was rebased before it was shared: the printed hash is not in
the bundle, a commit with the same subject and counts is. Every later task of the session
lacked the file (``workspace_incomplete``); its three ``npm run check`` repairs among them.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.reconstruct.events import Script
from tests.reconstruct.test_commit_recovery import T0, _git, _session
from trajforge.reconstruct import pipeline
from trajforge.reconstruct.repos import RepoSearch
from trajforge.reconstruct.sessionrepo import replay_session
from trajforge.records import Task, load_record

ROOT = "/home/me/proj"
APP = "export const app = 1;\nexport const b = 2;\nexport const c = 3;\n"
GEN = "export function gen(): string {\n\treturn 'x'\n}\n"
GEN_FIXED = "export function gen(): string {\n\treturn 'x';\n}\n"  # as the formatter left it
GEN_END = GEN_FIXED.replace("'x'", "'y'")
UTIL = "export const one = 1;\nexport const two = 2;\nexport const three = 3;\n"
"""Written as committed: the commit holding it is where the session's work begins."""
PERL = f"perl -pi -e 's/x.$/x;/' {ROOT}/src/gen.ts"
"""A command replay cannot follow: gen.ts is unknown after it."""


def _commit(repo: Path, message: str, files: dict[str, str], when: int) -> str:
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", message, when=when)
    return _git(repo, "rev-parse", "HEAD")


def _repo(tmp_path: Path, first: str = "Start") -> tuple[Path, list[str]]:
    """c0 the start; c1 the session's "Add gen" as it was shared (rebased: a new hash)."""
    repo = tmp_path / "repos" / "proj"
    repo.mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    shas = [_commit(repo, first, {"src/app.ts": APP, "src/a.ts": "a\nb\nc\n"}, T0)]
    shas.append(_commit(repo, "Add gen", {"src/gen.ts": GEN_FIXED, "src/util.ts": UTIL}, T0 + 600))
    return repo, shas


def _printed(repo: Path, sha: str, shown: str = "1234abc") -> str:
    """What ``git commit`` printed in the session: the branch, a hash, the subject, the counts
    (``shown``: the hash the session saw — not in the shared history once it was rebased)."""
    stat = _git(repo, "show", "--shortstat", "--format=", sha)
    subject = _git(repo, "log", "-1", "--format=%s", sha)
    return f"[main {shown}] {subject}\n {stat}\n create mode 100644 src/gen.ts\n"


def _script(commit_output: str) -> Script:
    return (
        Script()
        .user("add a gen() helper and make it return y")
        .read(f"{ROOT}/src/app.ts", APP)
        .write(f"{ROOT}/src/util.ts", UTIL)
        .write(f"{ROOT}/src/gen.ts", GEN)
        .shell(PERL, 0)
        .shell(f'cd {ROOT} && git add -A && git commit -m "Add gen"', 0, commit_output)
        .edit(f"{ROOT}/src/gen.ts", "'x'", "'y'")
    )


def _replayed(tmp_path: Path, script: Script):  # type: ignore[no-untyped-def]
    session = _session(script, ROOT)
    state, match = replay_session(session, ROOT, None, RepoSearch(dirs=(str(tmp_path / "repos"),)))
    return session, state, match


def test_a_rebased_commit_gives_back_a_file_replay_lost(tmp_path: Path) -> None:
    repo, shas = _repo(tmp_path)
    session, state, match = _replayed(tmp_path, _script(_printed(repo, shas[1])))
    assert match is not None and match.commit == shas[0]
    assert "1 of the session's commits found in it" in match.detail
    committed = next(i for i, e in enumerate(session.events) if "git commit" in (e.command or ""))
    assert "src/gen.ts" in state.state_at(committed).missing  # lost: the perl command
    after = state.state_at(committed + 1)  # the commit's result: the file as committed
    assert after.files["src/gen.ts"] == GEN_FIXED
    end = state.state_at(len(session.events))
    assert end.files["src/gen.ts"] == GEN_END and not end.missing


def test_the_printed_hash_is_used_when_the_history_has_it(tmp_path: Path) -> None:
    _, shas = _repo(tmp_path)
    printed = f"[main {shas[1][:7]}] Add gen\n"  # no counts: the hash alone decides
    session, state, _ = _replayed(tmp_path, _script(printed))
    assert state.state_at(len(session.events)).files["src/gen.ts"] == GEN_END


@pytest.mark.parametrize(
    "wrong", ["counts", "subject", "no counts"], ids=["other counts", "other subject", "bare"]
)
def test_a_copy_that_differs_is_not_taken(tmp_path: Path, wrong: str) -> None:
    repo, shas = _repo(tmp_path)
    printed = _printed(repo, shas[1])
    printed = {
        "counts": printed.replace("2 files changed", "3 files changed"),
        "subject": printed.replace("Add gen", "Add gem"),
        "no counts": printed.splitlines()[0] + "\n",  # rebased and no counts: not told apart
    }[wrong]
    session, state, match = _replayed(tmp_path, _script(printed))
    assert match is not None and "commits found" not in match.detail
    assert "src/gen.ts" in state.state_at(len(session.events)).missing


def test_a_commit_unlike_what_replay_knows_is_not_used(tmp_path: Path) -> None:
    repo, shas = _repo(tmp_path)
    script = (
        Script()
        .read(f"{ROOT}/src/app.ts", APP)
        .write(f"{ROOT}/src/util.ts", UTIL)
        .write(f"{ROOT}/src/gen.ts", GEN_FIXED.replace("'x'", "'z'"))  # known, and unlike c1
        .shell(f'cd {ROOT} && git commit -am "Add gen"', 0, _printed(repo, shas[1]))
    )
    session, state, _ = _replayed(tmp_path, script)
    assert any("the commit holds src/gen.ts unlike replay" in d for d in state.divergences)
    assert state.state_at(len(session.events)).files["src/gen.ts"] == GEN_FIXED.replace(
        "'x'", "'z'"
    )


def test_a_commit_of_the_starting_history_is_not_the_sessions(tmp_path: Path) -> None:
    """c0 has the same subject and counts as the session's commit, but the session started
    from it: only c1 is a copy of what the session committed."""
    repo, shas = _repo(tmp_path, first="Add gen")
    assert _git(repo, "show", "--shortstat", "--format=", shas[0]) == _git(
        repo, "show", "--shortstat", "--format=", shas[1]
    )
    session, state, _ = _replayed(tmp_path, _script(_printed(repo, shas[1])))
    assert state.state_at(len(session.events)).files["src/gen.ts"] == GEN_END


CORPUS = Path(__file__).parents[2].parent / "shared" / "corpus"
SESSION = CORPUS / "pi-mono" / "before-compaction.jsonl"
BUNDLE = CORPUS / "repos" / "badlogic__pi-mono.bundle"
REPAIRS = {"repair-e8db4819ce182747", "repair-00dfadc499967f7c", "repair-277303cd52dca321"}


@pytest.mark.slow
def test_the_real_sessions_npm_check_repairs_are_complete(tmp_path: Path) -> None:
    if not SESSION.is_file() or not BUNDLE.is_file():
        pytest.skip(f"SKIPPED: the shared corpus (pi-mono session and bundle) is not at {CORPUS}")
    repos = tmp_path / "repos"
    clone = ["git", "clone", "-q", str(BUNDLE), str(repos / BUNDLE.stem)]
    subprocess.run(clone, check=True, timeout=600)
    spec = pipeline.ReconstructSpec(repos=RepoSearch(dirs=(str(repos),)))
    pipeline.run([SESSION], tmp_path / "out", spec)
    tasks = {p.name: p for p in (tmp_path / "out" / "tasks").iterdir()}
    assert set(tasks) >= REPAIRS, sorted(tasks)
    for name in REPAIRS:
        task = load_record(Task, tasks[name] / "task.json")
        assert task.verifier.command == "npm run check", name
        assert task.files.missing == () and task.files.partial == (), (name, task.files)
        assert task.source.repo is not None and "commits found in it" in task.source.repo.detail
    # bash-executor.ts: written, "fixed" by biome (its layout unsure), then committed as WP1
    workspace = tasks["repair-e8db4819ce182747"] / "workspace"
    executor = workspace / "packages" / "coding-agent" / "src" / "core" / "bash-executor.ts"
    assert "export function executeBash(" in executor.read_text()
