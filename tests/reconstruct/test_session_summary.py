"""The per-session rows of ``trajforge reconstruct`` (``session_rows``), through the real CLI.

The repository sessions (``tests/fixtures/sessions/repos``) were recorded by pi and opencode
inside ``nodecalc`` and ``pyslug`` at their second commit (``tests/fixtures/repos.py``); only
``pyslug`` is given to ``--repos`` here, so its two sessions are found (by the folder name,
at that commit, by content) and the two ``nodecalc`` ones are not. Each of the four yields one
extend and one repair candidate and drops nothing: the ``pyslug`` workspace is the six files
of the commit, the ``nodecalc`` one the two files the session read. The real sessions of
``../shared/corpus/real`` give the drops: there the rows must add up to the run's counts.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.repos import SESSION_COMMIT, make_repo
from tests.support.inprocess import run_main
from trajforge.cli import reconstruct_cmd
from trajforge.reconstruct import pipeline
from trajforge.reconstruct.summary import ReconstructSummary, SessionOutcome
from trajforge.records import Reason

FIXTURES = Path(__file__).parents[1] / "fixtures" / "sessions"
REPO_SESSIONS = FIXTURES / "repos"
REAL = Path(__file__).parents[2].parent / "shared" / "corpus" / "real"
Capture = pytest.CaptureFixture[str]


@pytest.fixture(scope="module")
def pyslug(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A folder of checkouts holding only pyslug; the commit its sessions ran at."""
    root = tmp_path_factory.mktemp("checkouts")
    hashes = make_repo("pyslug", root / "pyslug")
    return root, hashes[SESSION_COMMIT]


def _json(capsys: Capture, *args: str) -> tuple[int, ReconstructSummary]:
    code, stdout, _ = run_main(capsys, "reconstruct", *args, "--json")
    return code, ReconstructSummary.model_validate(json.loads(stdout))


def _by_name(summary: ReconstructSummary) -> dict[str, SessionOutcome]:
    """Rows by ``harness-folder/file`` (``pi/pyslug.jsonl``)."""
    return {"/".join(Path(r.file).parts[-2:]): r for r in summary.session_rows}


def _assert_rows_add_up(summary: ReconstructSummary, out: Path) -> None:
    """Every episode is kept, dropped or failed; rows sum to the run's per-harness counts."""
    rows = summary.session_rows
    assert len(rows) == sum(summary.sessions.values())
    for row in rows:
        assert row.episodes == sum(row.kept.values()) + sum(row.dropped.values()) + row.failed
    for harness, counts in summary.triage.items():
        dropped: Counter[str] = Counter()
        kept: Counter[str] = Counter()
        for row in (r for r in rows if r.harness == harness):
            dropped.update({reason.value: n for reason, n in row.dropped.items()})
            kept.update(row.kept)
        assert dict(dropped) == counts.dropped, harness
        assert dict(kept) == summary.candidates.get(harness, {}), harness
    kept_total = sum(sum(r.kept.values()) for r in rows)
    assert kept_total == summary.written + summary.existing == len(list(out.glob("tasks/*")))


def test_rows_name_the_repository_found_and_not_found(
    pyslug: tuple[Path, str], tmp_path: Path, capsys: Capture
) -> None:
    root, commit = pyslug
    out = tmp_path / "o"
    code, summary = _json(capsys, str(REPO_SESSIONS), "-o", str(out), "--repos", str(root))
    assert code == 0
    rows = _by_name(summary)
    assert sorted(rows) == [
        "opencode/nodecalc.json",
        "opencode/pyslug.json",
        "pi/nodecalc.jsonl",
        "pi/pyslug.jsonl",
    ]
    for name in ("pi/pyslug.jsonl", "opencode/pyslug.json"):
        row = rows[name]
        assert (row.repo, row.found_by, row.commit_by) == ("found", "folder_name", "content_match")
        assert row.commit == commit and row.repository == str((root / "pyslug").resolve())
        assert (row.files.needed, row.files.recovered, row.files.missing) == (6, 6, 0)
    for name in ("pi/nodecalc.jsonl", "opencode/nodecalc.json"):
        row = rows[name]
        assert row.repo == "not_found"
        assert row.found_by is None and row.commit is None and row.repository is None
        assert (row.files.needed, row.files.recovered) == (2, 2)  # the two files it read
    for row in rows.values():
        assert (row.episodes, row.kept, row.dropped, row.failed) == (
            2, {"extend": 1, "repair": 1}, {}, 0,
        )  # fmt: skip
    assert rows["pi/pyslug.jsonl"].session == "01a230f6-28c2-74b3-be69-9f58cd2b5945"
    stored = json.loads((out / "reconstruct.json").read_text())
    assert stored["session_rows"] == summary.model_dump(mode="json")["session_rows"]
    _assert_rows_add_up(summary, out)


def test_table_prints_one_line_per_session(
    pyslug: tuple[Path, str], tmp_path: Path, capsys: Capture
) -> None:
    root, commit = pyslug
    args = ["reconstruct", str(REPO_SESSIONS), "-o", str(tmp_path / "o"), "--repos", str(root)]
    code, stdout, _ = run_main(capsys, *args)
    assert code == 0
    lines = stdout.splitlines()
    start = lines.index("sessions (4): repository, files recovered, episodes kept and dropped")
    assert lines[start + 1 : start + 5] == [
        "  opencode/nodecalc.json#…UGw0IQ5t  opencode  repo: not found  files 2/2 recovered"
        "  kept 2 (extend 1, repair 1)  dropped 0",
        f"  opencode/pyslug.json#…JsLWtj2w  opencode  repo: found by folder_name @{commit[:7]}"
        "  files 6/6 recovered  kept 2 (extend 1, repair 1)  dropped 0",
        "  pi/nodecalc.jsonl#…b967a79a  pi  repo: not found  files 2/2 recovered"
        "  kept 2 (extend 1, repair 1)  dropped 0",
        f"  pi/pyslug.jsonl#…cd2b5945  pi  repo: found by folder_name @{commit[:7]}"
        "  files 6/6 recovered  kept 2 (extend 1, repair 1)  dropped 0",
    ]


def test_table_is_bounded_and_json_has_every_row(
    tmp_path: Path, capsys: Capture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(reconstruct_cmd, "SESSION_LINES", 2)
    code, stdout, _ = run_main(capsys, "reconstruct", str(REPO_SESSIONS), "-o", str(tmp_path))
    assert code == 0
    lines = stdout.splitlines()
    start = next(n for n, line in enumerate(lines) if line.startswith("sessions (4)"))
    assert "repo: not looked for" in lines[start + 1] and "repo: not looked for" in lines[start + 2]
    assert lines[start + 3] == "  ... and 2 more, see --json"
    _, summary = _json(capsys, str(REPO_SESSIONS), "-o", str(tmp_path))
    assert len(summary.session_rows) == 4
    assert all(r.repo is None and r.found_by is None for r in summary.session_rows)
    assert summary.existing == 8 and sum(sum(r.kept.values()) for r in summary.session_rows) == 8


def test_workers_return_the_same_rows(
    pyslug: tuple[Path, str], tmp_path: Path, capsys: Capture
) -> None:
    """Rows are built where the session is replayed (a worker process with ``-j 2``)."""
    root, _ = pyslug
    runs = []
    for jobs in ("1", "2"):
        out = tmp_path / jobs
        args = (str(REPO_SESSIONS), "-o", str(out), "--repos", str(root), "-j", jobs)
        runs.append(_json(capsys, *args)[1].session_rows)
    assert runs[0] == runs[1] and len(runs[0]) == 4


def test_qa_duplicates_count_in_their_session_row(tmp_path: Path, capsys: Capture) -> None:
    """The same qa scenario from three harnesses: the first session keeps it, the others'
    copies are dropped as duplicates in their own rows, as in the run's triage counts."""
    inputs = [
        FIXTURES / "pi" / "qa.jsonl",
        FIXTURES / "opencode" / "qa.json",
        FIXTURES / "claude-code" / "qa.jsonl",
    ]
    out = tmp_path / "o"
    code, summary = _json(capsys, *map(str, inputs), "-o", str(out))
    assert code == 0
    rows = summary.session_rows
    assert [r.harness for r in rows] == ["pi", "opencode", "claude-code"]
    assert (rows[0].kept, rows[0].dropped) == ({"qa": 1}, {})
    for row in rows[1:]:
        assert (row.kept, row.dropped, row.episodes) == ({}, {"duplicate": 1}, 1)
    _assert_rows_add_up(summary, out)


def test_base_repo_row(pyslug: tuple[Path, str], tmp_path: Path, capsys: Capture) -> None:
    root, commit = pyslug
    session = REPO_SESSIONS / "pi" / "pyslug.jsonl"
    base = f"{root / 'pyslug'}@{commit}"
    _, summary = _json(capsys, str(session), "-o", str(tmp_path / "o"), "--base-repo", base)
    (row,) = summary.session_rows
    assert (row.repo, row.found_by, row.commit) == ("found", "base_repo", None)
    assert reconstruct_cmd.session_line(row).startswith(
        "pi/pyslug.jsonl#…cd2b5945  pi  repo: from --base-repo  files 6/6 recovered"
    )


def test_a_session_that_breaks_replay_is_a_row_with_its_error(
    tmp_path: Path, capsys: Capture, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*_: Any) -> None:
        raise RuntimeError("replay exploded")

    monkeypatch.setattr(pipeline, "replay_session", broken)  # inline: -j 1
    session = REPO_SESSIONS / "pi" / "pyslug.jsonl"
    code, summary = _json(capsys, str(session), "-o", str(tmp_path))
    assert code == 1
    (row,) = summary.session_rows
    assert row.error == "RuntimeError: replay exploded" and row.episodes == 0
    assert summary.failed_candidates[0].reason == row.error
    assert reconstruct_cmd.session_line(row).endswith("failed: RuntimeError: replay exploded")


@pytest.mark.skipif(not REAL.is_dir(), reason=f"real corpus not found at {REAL}")
def test_real_sessions_rows_add_up_to_the_run(tmp_path: Path, capsys: Capture) -> None:
    """Other people's sessions, their repositories not given: every row says not found; the
    drops by reason and the candidates kept per row add up to the run's counts."""
    empty = tmp_path / "repos"
    empty.mkdir()
    out = tmp_path / "o"
    _, summary = _json(capsys, str(REAL), "-o", str(out), "--repos", str(empty))
    rows = _by_name(summary)
    assert len(rows) >= 10 and all(r.repo == "not_found" for r in rows.values())
    assert sum(sum(r.dropped.values()) for r in rows.values()) > 0
    _assert_rows_add_up(summary, out)
    built = rows["apanloco__random/session.jsonl"]  # a new project from an empty folder
    assert built.kept.get("build", 0) >= 1 and built.files.needed >= 1
    for row in rows.values():
        if not row.kept and not row.failed and Reason.DUPLICATE not in row.dropped:
            assert row.files.needed == 0  # no candidate: no workspace to need
