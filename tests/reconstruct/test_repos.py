"""Repository and commit recovery (``--repos``, ``--repo-map``) on real pi and opencode sessions.

The sessions were recorded by the real harnesses inside the repositories of
``tests/fixtures/repos.py`` at their second commit (``generate_repo_sessions.py``); the tests
rebuild the same repositories (same hashes), now at their third commit, and check that
reconstruct finds the repository and that exact commit from what the session read.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.fixtures.generate_repo_sessions import RECORD_ROOT, SCENARIOS, record_pi
from tests.fixtures.repos import (
    CLOCK_BUGGY_LINE,
    CLOCK_FIXED_LINE,
    NODE_LOCK,
    SESSION_COMMIT,
    checkout,
    make_repo,
)
from tests.support.inprocess import run_main
from trajforge.reconstruct import pipeline
from trajforge.reconstruct.commits import MIN_MATCH, Read, choose
from trajforge.reconstruct.replay import replay
from trajforge.reconstruct.repos import RepoSearch, normalize_url, url_name
from trajforge.reconstruct.sessionrepo import recover
from trajforge.records import GitInfo, Session, Task, load_record
from trajforge.registry import FORMATS, create
from trajforge.verifiers.environments import repo_reason

SESSIONS = Path(__file__).parents[1] / "fixtures" / "sessions" / "repos"
HARNESS_FILES = {"pi": "{name}.jsonl", "opencode": "{name}.json"}


def _session(harness: str, name: str) -> Path:
    return SESSIONS / harness / HARNESS_FILES[harness].format(name=name)


def _tasks(out: Path) -> list[Task]:
    return [load_record(Task, p) for p in sorted((out / "tasks").glob("*/task.json"))]


def _repair(out: Path, harness: str, name: str | None = None) -> Task:
    """The repair task of ``harness`` (of project ``name``'s session when given)."""
    return next(
        t
        for t in _tasks(out)
        if t.family == "repair"
        and t.source.harness == harness
        and (name is None or Path(t.source.path).stem == name)
    )


def _parsed(path: Path, harness: str) -> Session:
    fmt = create(FORMATS, harness, "format")
    return next(s for s in fmt.parse(path) if isinstance(s, Session))


@pytest.fixture(scope="module")
def checkouts(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, list[str]]]:
    root = tmp_path_factory.mktemp("checkouts")
    hashes = {name: make_repo(name, root / name) for name in ("nodecalc", "pyslug")}
    return root, hashes


@pytest.fixture(scope="module")
def found(
    checkouts: tuple[Path, dict[str, list[str]]], tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, pipeline.ReconstructSummary]:
    out = tmp_path_factory.mktemp("out")
    search = RepoSearch(dirs=(str(checkouts[0]),))
    summary = pipeline.run([SESSIONS], out, pipeline.ReconstructSpec(repos=search))
    return out, summary


@pytest.mark.parametrize("harness", ["pi", "opencode"])
@pytest.mark.parametrize("name", ["nodecalc", "pyslug"])
def test_content_match_finds_the_session_commit_not_head(
    found: tuple[Path, pipeline.ReconstructSummary],
    checkouts: tuple[Path, dict[str, list[str]]],
    harness: str,
    name: str,
) -> None:
    out, _ = found
    root, hashes = checkouts
    task = _repair(out, harness, name)
    repo = task.source.repo
    assert repo is not None and repo.status == "found"
    assert repo.commit == hashes[name][SESSION_COMMIT] != hashes[name][-1]
    assert repo.commit_by == "content_match" and repo.found_by == "folder_name"
    assert repo.path == str((root / name).resolve()) and repo.branch == "main"
    assert (repo.compared, repo.matched, repo.match) == (2, 2, 1.0)
    assert repo.commits_searched == 3 and not repo.unmatched
    assert task.files.missing == ()


def test_workspace_is_the_repository_at_the_commit(
    found: tuple[Path, pipeline.ReconstructSummary],
) -> None:
    out, _ = found
    task = _repair(out, "pi", "nodecalc")
    folder = out / "tasks" / task.id
    workspace = folder / "workspace"
    # files the session never opened come from the commit, not from HEAD
    assert (workspace / "package-lock.json").read_text() == NODE_LOCK
    assert (workspace / "README.md").read_text() == "# nodecalc\n\nDuration helpers.\n"
    assert CLOCK_BUGGY_LINE in (workspace / "src/duration.js").read_text()
    assert "toMinutes" not in (workspace / "src/duration.js").read_text()
    assert CLOCK_FIXED_LINE in (folder / "oracle" / "src/duration.js").read_text()
    assert not (workspace / "node_modules").exists()


def test_summary_counts_sessions_by_repository_outcome(
    found: tuple[Path, pipeline.ReconstructSummary],
) -> None:
    _, summary = found
    assert summary.repos == {"pi": {"found": 2}, "opencode": {"found": 2}}
    stored = json.loads((found[0] / "reconstruct.json").read_text())
    assert stored["repos"] == summary.repos


def test_recorded_cwd_not_here_is_found_by_content_or_mapped(
    checkouts: tuple[Path, dict[str, list[str]]], tmp_path: Path
) -> None:
    recorded = RECORD_ROOT / "nodecalc"
    assert not recorded.exists()  # the recording folder is gone: no name or path places it
    elsewhere = tmp_path / "elsewhere"
    hashes = make_repo("nodecalc", elsewhere / "work-copy")
    session = _session("pi", "nodecalc")
    plain = pipeline.run(
        [session],
        tmp_path / "a",
        pipeline.ReconstructSpec(repos=RepoSearch(dirs=(str(elsewhere),))),
    )
    assert plain.repos == {"pi": {"found": 1}}  # its history holds the files the session read
    by_content = _repair(tmp_path / "a", "pi").source.repo
    assert by_content is not None and by_content.commit == hashes[SESSION_COMMIT]
    assert by_content.found_by == "content" and "found by content" in by_content.detail
    mapped = RepoSearch(mapping=((str(recorded), str(elsewhere / "work-copy")),))
    pipeline.run([session], tmp_path / "b", pipeline.ReconstructSpec(repos=mapped))
    repo = _repair(tmp_path / "b", "pi").source.repo
    assert repo is not None and repo.status == "found" and repo.found_by == "repo_map"
    assert repo.commit == hashes[SESSION_COMMIT]


def test_remote_url_names_the_checkout(tmp_path: Path) -> None:
    hashes = make_repo("pyslug", tmp_path / "clone-7", remote="git@example.com:fx/PySlug.git")
    pipeline.run(
        [_session("opencode", "pyslug")],
        tmp_path / "o",
        pipeline.ReconstructSpec(repos=RepoSearch(dirs=(str(tmp_path),))),
    )
    repo = _repair(tmp_path / "o", "opencode").source.repo
    assert repo is not None and repo.found_by == "remote_name"
    assert repo.commit == hashes[SESSION_COMMIT] and repo.url == "git@example.com:fx/PySlug.git"


def test_no_repository_is_repo_not_found_with_the_fix(
    checkouts: tuple[Path, dict[str, list[str]]], tmp_path: Path
) -> None:
    only_py = tmp_path / "only"
    make_repo("pyslug", only_py / "pyslug")
    summary = pipeline.run(
        [_session("pi", "nodecalc")],
        tmp_path / "o",
        pipeline.ReconstructSpec(repos=RepoSearch(dirs=(str(only_py),))),
    )
    task = _repair(tmp_path / "o", "pi")
    repo = task.source.repo
    assert repo is not None and repo.status == "not_found" and repo.commit is None
    assert str(RECORD_ROOT / "nodecalc") in repo.detail and "--repo-map" in repo.detail
    assert summary.repos == {"pi": {"not_found": 1}}
    assert "src/duration.js" in task.files.recovered and "package.json" not in task.files.recovered


def test_other_history_of_the_same_name_is_commit_ambiguous(tmp_path: Path) -> None:
    """A checkout named nodecalc in which no commit holds what the session read."""
    impostor = tmp_path / "repos" / "nodecalc"
    make_repo("pyslug", impostor)
    pipeline.run(
        [_session("pi", "nodecalc")],
        tmp_path / "o",
        pipeline.ReconstructSpec(repos=RepoSearch(dirs=(str(tmp_path / "repos"),))),
    )
    repo = _repair(tmp_path / "o", "pi").source.repo
    assert repo is not None and repo.status == "ambiguous"
    assert "--base-repo" in repo.detail and repo.compared == 0


def test_recorded_commit_and_url_win_over_content(
    checkouts: tuple[Path, dict[str, list[str]]],
) -> None:
    """A Codex-style session_meta.git (URL + commit): the recorded commit is used as is."""
    root, hashes = checkouts
    session = _parsed(_session("pi", "nodecalc"), "pi")
    git = GitInfo(repository_url="https://example.com/x/other.git", commit=hashes["nodecalc"][0])
    header = session.header.model_copy(update={"git": git})
    derived = session.model_copy(update={"header": header})
    probe = replay(derived.events, header.cwd)
    got = recover(derived, probe, RepoSearch(dirs=(str(root),)))
    assert got.match.commit == hashes["nodecalc"][0] and got.match.commit_by == "recorded"
    assert got.match.status == "found" and got.match.url == git.repository_url
    assert set(got.match.unmatched) == {"src/duration.js", "test/duration.test.js"}
    # the working tree differed from the recorded commit: the session's reads are the start
    assert got.base is not None and CLOCK_BUGGY_LINE in got.base["src/duration.js"]


def test_choose_scores_and_ties(checkouts: tuple[Path, dict[str, list[str]]]) -> None:
    root, hashes = checkouts
    repo = root / "nodecalc"
    readme = Read("# nodecalc\n\nDuration helpers.", partial=False)  # trailing newline trimmed
    tie = choose(repo, {"README.md": readme}, started=None)
    assert tie.commit == hashes["nodecalc"][1] and tie.score == 1.0  # c1 and c2: latest of them
    early = choose(repo, {"README.md": readme}, started=1767700000.0)  # 2026-01-06
    assert early.commit == hashes["nodecalc"][0]  # c2 is after the start
    part = Read('return `${h}:${m}:${String(s).padStart(2, "0")}`;', partial=True)
    assert choose(repo, {"src/duration.js": part}).commit == hashes["nodecalc"][1]
    half = choose(repo, {"README.md": readme, "src/duration.js": Read("nope", False)})
    assert half.score == 0.5 < MIN_MATCH and not half.confident


def test_repos_and_repo_map_on_the_command_line(
    checkouts: tuple[Path, dict[str, list[str]]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root, _ = checkouts
    config = tmp_path / "r.toml"
    config.write_text(f'[reconstruct]\nrepos = ["{root}"]\n')
    args = ["reconstruct", str(_session("pi", "pyslug")), "-o", str(tmp_path / "o"), "--json"]
    code, stdout, _ = run_main(capsys, *args, "--config", str(config))
    assert code == 0 and json.loads(stdout)["repos"] == {"pi": {"found": 1}}
    code, _, stderr = run_main(capsys, *args, "--repos", str(tmp_path / "nope"))
    assert code == 2 and "--repos" in stderr and "not a directory" in stderr
    code, _, stderr = run_main(capsys, *args, "--repo-map", "no-equals-sign")
    assert code == 2 and "OLD_PREFIX=DIR" in stderr and "Traceback" not in stderr


@pytest.mark.parametrize(
    ("url", "key"),
    [
        ("https://github.com/CryptoSodi/Battle-Cities.git", "github.com/cryptosodi/battle-cities"),
        ("git@github.com:CryptoSodi/Battle-Cities.git", "github.com/cryptosodi/battle-cities"),
        ("ssh://git@github.com:22/CryptoSodi/Battle-Cities", "github.com/cryptosodi/battle-cities"),
        ("https://user:tok@gitlab.com/a/b/c/", "gitlab.com/a/b/c"),
    ],
)
def test_remote_urls_compare_by_host_owner_name(url: str, key: str) -> None:
    assert normalize_url(url) == key
    assert url_name(url) == key.rsplit("/", 1)[-1]


REAL = Path(__file__).parents[2].parent / "shared" / "corpus" / "real"


def test_real_dumps_without_their_repositories_say_so(tmp_path: Path) -> None:
    """Real sessions whose repositories are not given: every task that changed existing files
    is repo_not_found (never a silent workspace_incomplete or an oracle failing for a missing
    package.json); a new project built from an empty folder (apanloco/random) stands alone."""
    if not REAL.is_dir():
        pytest.skip(f"SKIPPED: the shared real corpus is not at {REAL}")
    empty = tmp_path / "repos"
    empty.mkdir()
    summary = pipeline.run(
        [REAL], tmp_path / "o", pipeline.ReconstructSpec(repos=RepoSearch(dirs=(str(empty),)))
    )
    assert summary.repos and all(set(c) == {"not_found"} for c in summary.repos.values())
    tasks = _tasks(tmp_path / "o")
    changed = [t for t in tasks if t.family in ("repair", "extend")]
    assert len(changed) >= 5  # the real dumps do hold edits of existing files
    for task in changed:
        reason = repo_reason(task)
        assert reason is not None and reason.reason == "repo_not_found", (task.id, reason)
        assert task.source.repo is not None and task.source.repo.commit is None
    builds = [t for t in tasks if t.family == "build"]
    assert builds and all(Path(t.source.path).parent.name == "apanloco__random" for t in builds)
    for task in builds:  # only what the session itself lost can reject a new project
        unknown = set(task.files.missing) - set(task.files.shell_modified)
        assert (repo_reason(task) is None) == (not unknown), task.id


@pytest.mark.slow
def test_live_pi_session_in_a_checkout_is_found_by_its_cwd(tmp_path: Path) -> None:
    """pi recorded now, inside a checkout that is still here: found by the cwd it recorded."""
    repo = tmp_path / "repos" / "work"
    hashes = make_repo("nodecalc", repo)
    checkout(repo, hashes[SESSION_COMMIT])
    subprocess.run(["npm", "ci", "--ignore-scripts", "--no-audit"], cwd=repo, check=True)
    session = record_pi(SCENARIOS["nodecalc"], repo, {}, tmp_path / "home")
    pipeline.run(
        [session],
        tmp_path / "o",
        pipeline.ReconstructSpec(repos=RepoSearch(dirs=(str(tmp_path / "repos"),))),
    )
    task = _repair(tmp_path / "o", "pi")
    assert task.source.repo is not None and task.source.repo.found_by == "cwd"
    assert task.source.repo.commit == hashes[SESSION_COMMIT] and task.source.repo.match == 1.0
    assert "node_modules/ms/index.js" not in task.files.recovered  # ignored files stay out
