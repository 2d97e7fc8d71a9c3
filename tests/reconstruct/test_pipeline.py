"""`trajforge reconstruct` end to end: real corpus, every fixture harness, bad input, secrets."""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from trajforge.reconstruct import pipeline
from trajforge.records import Task, load_record

CORPUS = Path(__file__).parents[2].parent / "shared" / "corpus" / "pi-mono"
FIXTURES = Path(__file__).parents[1] / "fixtures" / "sessions"
FAMILIES = {"build", "extend", "repair", "qa"}


def _cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "trajforge.cli.main", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
        check=False,
    )


def _tasks(out: Path) -> dict[str, Task]:
    return {p.parent.name: load_record(Task, p) for p in (out / "tasks").glob("*/task.json")}


@pytest.fixture(scope="module")
def corpus_out(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, pipeline.ReconstructSummary]:
    if not CORPUS.is_dir():
        pytest.skip(f"!! real corpus not found at {CORPUS} (expected ../shared beside the repo)")
    out = tmp_path_factory.mktemp("corpus")
    return out, pipeline.run([CORPUS], out)


def test_corpus_parses_without_warnings(
    corpus_out: tuple[Path, pipeline.ReconstructSummary],
) -> None:
    _, summary = corpus_out
    assert summary.exit_code() == 0
    assert summary.warnings == []
    assert summary.sessions == {"pi": 2}
    assert [i.format for i in summary.inputs] == ["pi", "pi"]


def test_corpus_fail_pass_episodes_match_hand_count(
    corpus_out: tuple[Path, pipeline.ReconstructSummary],
) -> None:
    """Verified by hand over the raw JSON: before-compaction has three unfiltered
    `npm run check` fail→pass cycles (lines 86→100, 138→150, 188→214); large-session's only
    unfiltered failing check (line 62) is never re-run unfiltered, so it yields none."""
    out, _ = corpus_out
    repairs = [t for t in _tasks(out).values() if t.family == "repair"]
    by_file: dict[str, int] = {}
    for task in repairs:
        name = Path(task.source.path).name
        by_file[name] = by_file.get(name, 0) + 1
        assert task.verifier.command == "npm run check"
        assert "npm run check" in task.instruction
    assert by_file == {"before-compaction.jsonl": 3}


def test_corpus_reports_unrecoverable_files(
    corpus_out: tuple[Path, pipeline.ReconstructSummary],
) -> None:
    out, _ = corpus_out
    tasks = list(_tasks(out).values())
    assert any(t.files.missing for t in tasks)  # the monorepo itself is not in the session
    assert any(t.files.partial for t in tasks)
    assert any(t.files.shell_commands for t in tasks)  # sed -i edits are marked


def test_every_fixture_harness_yields_every_family(tmp_path: Path) -> None:
    for harness in ("pi", "opencode", "hermes", "claude-code", "codex"):
        summary = pipeline.run([FIXTURES / harness], tmp_path / harness)
        assert summary.exit_code() == 0, summary.warnings
        assert set(summary.candidates[harness]) >= FAMILIES, f"{harness}: {summary.candidates}"


def test_the_same_question_from_every_harness_is_one_task(tmp_path: Path) -> None:
    """Each harness's fixtures play the same qa scenario: in one run it becomes one task, the
    other copies counted as duplicates of it."""
    summary = pipeline.run([FIXTURES], tmp_path)
    assert summary.exit_code() == 0, summary.warnings
    assert set(summary.sessions) == {"pi", "opencode", "hermes", "claude-code", "codex"}
    qa = [t for t in _tasks(tmp_path).values() if t.family == "qa"]
    assert len(qa) == 1 and qa[0].answer_key is not None
    duplicates = [d for d in summary.dropped if d.reason == "duplicate"]
    assert len(duplicates) >= 4 and all(qa[0].id in d.detail for d in duplicates)
    answers = [t.answer for t in _tasks(tmp_path).values() if t.answer]
    assert len(answers) == len(set(answers))


def test_fixture_tasks_have_the_scenario_files(tmp_path: Path) -> None:
    pipeline.run([FIXTURES / "pi"], tmp_path)
    tasks = _tasks(tmp_path)
    repair = next(t for t in tasks.values() if t.family == "repair")
    oracle = (tmp_path / "tasks" / repair.id / "oracle" / "calc.py").read_text()
    start = (tmp_path / "tasks" / repair.id / "workspace" / "calc.py").read_text()
    assert "return low" in oracle and "return high\n    if value > high" in start
    qa = next(t for t in tasks.values() if t.family == "qa")
    assert qa.answer is not None and "136.50" in qa.answer and qa.oracle is None
    build = next(t for t in tasks.values() if t.family == "build")
    assert sorted(p.name for p in (tmp_path / "tasks" / build.id / "oracle").iterdir()) == [
        "stats.py",
        "test_stats.py",
    ]


def test_same_input_same_ids_and_nothing_rewritten(tmp_path: Path) -> None:
    first = pipeline.run([FIXTURES / "codex"], tmp_path / "a")
    again = pipeline.run([FIXTURES / "codex"], tmp_path / "a")
    other = pipeline.run([FIXTURES / "codex"], tmp_path / "b")
    assert first.written > 0 and again.written == 0 and again.existing == first.written
    assert (
        set(_tasks(tmp_path / "a")) == set(_tasks(tmp_path / "b"))
        and other.written == first.written
    )


def _secret_session(tmp_path: Path) -> tuple[Path, list[str]]:
    """A pi fixture with secrets planted in a request, a written file and a command output."""
    hf = "hf_" + "Q7xK2mN9pL4vB8cR1tY6wE3zA5sD0fGhJ"
    aws = "AKIA" + "J7Q2M4X9T1R8B6N3"
    lines = (FIXTURES / "pi" / "build.jsonl").read_text().splitlines()
    planted = []
    for line in lines:
        record = json.loads(line)
        message = record.get("message", {})
        if message.get("role") == "user":
            message["content"][0]["text"] += f" My token is {hf}."
        for block in message.get("content", []) if isinstance(message.get("content"), list) else []:
            if block.get("type") == "toolCall" and block.get("name") == "write":
                block["arguments"]["content"] += f"\nAWS_KEY = '{aws}'\n"
        planted.append(json.dumps(record))
    path = tmp_path / "secret.jsonl"
    path.write_text("\n".join(planted) + "\n")
    return path, [hf, aws]


def test_secrets_never_reach_the_output(tmp_path: Path) -> None:
    session, secrets = _secret_session(tmp_path)
    result = _cli("reconstruct", str(session), "-o", str(tmp_path / "out"), "--json")
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert sum(summary["redactions"].values()) >= 2
    written = [p.read_text() for p in (tmp_path / "out").rglob("*") if p.is_file()]
    assert written
    for secret in secrets:
        assert all(secret not in text for text in written)
        assert secret not in result.stdout + result.stderr


def test_mixed_directory_with_bad_inputs_exits_1_and_keeps_valid(tmp_path: Path) -> None:
    dump = tmp_path / "dump"
    dump.mkdir()
    shutil.copy(FIXTURES / "pi" / "repair.jsonl", dump / "good.jsonl")
    shutil.copy(
        FIXTURES / "codex" / sorted(p.name for p in (FIXTURES / "codex").glob("*.jsonl"))[0],
        dump / "codex.jsonl",
    )
    text = (FIXTURES / "pi" / "qa.jsonl").read_text()
    (dump / "truncated.jsonl").write_text(text[: len(text) - 40])
    (dump / "garbage.jsonl").write_bytes(b"\x00\xff\xfe binary \x01\n{not json\n")
    (dump / "empty.jsonl").write_text("")
    (dump / "other.json").write_text('{"hello": "world"}')
    with gzip.open(dump / "gz.jsonl.gz", "wt") as fh:
        fh.write((FIXTURES / "pi" / "build.jsonl").read_text())
    result = _cli("reconstruct", str(dump), "-o", str(tmp_path / "out"))
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert "truncated.jsonl:" in result.stderr  # warning names file and line
    for name in ("garbage.jsonl", "empty.jsonl", "other.json"):
        assert name in result.stderr
    families = {t.family for t in _tasks(tmp_path / "out").values()}
    assert {"repair", "build", "qa"} <= families


def test_nothing_readable_exits_2(tmp_path: Path) -> None:
    (tmp_path / "junk.jsonl").write_text("garbage\n")
    result = _cli(
        "reconstruct",
        str(tmp_path / "junk.jsonl"),
        str(tmp_path / "missing.jsonl"),
        "-o",
        str(tmp_path / "out"),
    )
    assert result.returncode == 2
    assert "Traceback" not in result.stderr and "missing.jsonl" in result.stderr


def test_bad_usage_exits_2_without_traceback(tmp_path: Path) -> None:
    result = _cli("reconstruct", str(FIXTURES), "-o", str(tmp_path), "--format", "cursor")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "known" in result.stderr


def test_forced_format_rejects_other_formats(tmp_path: Path) -> None:
    summary = pipeline.run([FIXTURES / "codex"], tmp_path, pipeline.ReconstructSpec(fmt="pi"))
    assert summary.exit_code() == 2
    assert all(i.error for i in summary.inputs)


def test_base_repo_at_revision_seeds_the_workspace(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.email=t@t", "-c", "user.name=t"]
    (repo / "calc.py").write_text("OLD\n")
    (repo / "extra.txt").write_text("kept\n")
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "base"], check=True)
    rev = subprocess.run(
        [*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True
    ).stdout.strip()
    (repo / "extra.txt").write_text("changed later\n")
    result = _cli(
        "reconstruct",
        str(FIXTURES / "pi" / "repair.jsonl"),
        "-o",
        str(tmp_path / "o"),
        "--base-repo",
        f"{repo}@{rev}",
    )
    assert result.returncode == 0, result.stderr
    repair = next(t for t in _tasks(tmp_path / "o").values() if t.family == "repair")
    workspace = tmp_path / "o" / "tasks" / repair.id / "workspace"
    assert (workspace / "extra.txt").read_text() == "kept\n"
    bad = _cli(
        "reconstruct",
        str(FIXTURES / "pi"),
        "-o",
        str(tmp_path / "x"),
        "--base-repo",
        f"{repo}@nosuchrev",
    )
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
