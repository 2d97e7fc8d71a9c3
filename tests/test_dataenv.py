"""`trajforge dataenv`: tasks from tables, stored polars oracles re-executed in the sandbox."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.inprocess import run_main
from trajforge.errors import UsageError
from trajforge.reconstruct.dataenv import ORDER, build, default_inputs
from trajforge.reconstruct.dataenv.tables import BUNDLED
from trajforge.records import Task, load_record
from trajforge.registry import SANDBOXES, create
from trajforge.verifiers.answer import check_answer
from trajforge.verifiers.dataenv_run import validate_tasks

COUNT = 35
SEED = 3


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """Run ``trajforge dataenv ARGS`` through the real entry point, in this process."""
    return run_main(capsys, "dataenv", *args)


def _tasks(out: Path) -> dict[str, Task]:
    return {p.name: load_record(Task, p / "task.json") for p in sorted((out / "tasks").iterdir())}


def _need_local_sandbox() -> None:
    reason = create(SANDBOXES, "local", "sandbox backend").available()
    if reason is not None:
        pytest.skip(f"SKIPPED: the local sandbox is not available here: {reason}")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dataenv") / "out"
    report = build([], out, count=COUNT, seed=SEED)
    assert len(report.written) == COUNT
    return out


def test_build_writes_count_distinct_tasks(built: Path) -> None:
    tasks = _tasks(built)
    assert len(tasks) == COUNT
    assert len({t.instruction for t in tasks.values()}) == COUNT  # deduplicated
    for folder, task in tasks.items():
        assert folder == task.id and task.id.startswith("data-") and len(task.id) == 21
        assert task.family == "data" and task.verifier.kind == "answer"
        assert task.answer and task.validation.status == "pending"
        oracle = built / "tasks" / folder / "oracle"
        assert (oracle / "query.py").is_file()
        assert sorted(p.name for p in oracle.glob("perturbed_*.py"))
        workspace = sorted(p.name for p in (built / "tasks" / folder / "workspace").iterdir())
        assert workspace and all(name in task.instruction for name in workspace)


def test_every_template_family_and_level_is_represented(built: Path) -> None:
    configs = [t.provenance.config for t in _tasks(built).values()]
    assert {c["template"] for c in configs} == set(ORDER)
    assert {c["difficulty"] for c in configs} == {1, 2, 3}


def test_same_seed_same_ids_other_seed_other_ids(built: Path, tmp_path: Path) -> None:
    again = build([], tmp_path / "again", count=COUNT, seed=SEED)
    assert sorted(again.ids) == sorted(_tasks(built))
    explicit = build(default_inputs(), tmp_path / "explicit", count=COUNT, seed=SEED)
    assert sorted(explicit.ids) == sorted(again.ids)  # bundled tables given as DATA
    other = build([], tmp_path / "other", count=COUNT, seed=SEED + 1)
    assert set(other.ids) != set(again.ids)
    rerun = build([], tmp_path / "again", count=COUNT, seed=SEED)
    assert rerun.written == [] and sorted(rerun.existing) == sorted(again.ids)


def test_count_is_respected(tmp_path: Path) -> None:
    assert len(build([], tmp_path / "a", count=3, seed=1).ids) == 3
    assert len(list((tmp_path / "a" / "tasks").iterdir())) == 3
    with pytest.raises(UsageError, match="--count"):
        build([], tmp_path / "b", count=0)


def test_every_generated_task_validates_accepted(built: Path, tmp_path: Path) -> None:
    _need_local_sandbox()
    out = tmp_path / "out"
    shutil.copytree(built, out)
    summary = validate_tasks(out)
    assert summary.counts == {"accepted": COUNT}, [
        t for t in summary.tasks if t.status != "accepted"
    ]
    for task in _tasks(out).values():
        validation = task.validation
        assert validation.status == "accepted"
        cells = validation.controls
        assert cells["oracle"].result == "pass" and cells["empty"].result == "fail"
        said = [c for n, c in cells.items() if n.startswith("paraphrase:")]
        assert said and all(c.result == "pass" for c in said), said  # a rewording is accepted
        near = [c for n, c in cells.items() if n.startswith("perturbed:")]
        assert near and all(c.result == "fail" for c in near)
        queries = [c for n, c in cells.items() if n.startswith("query:")]
        assert queries and all(c.result == "fail" for c in queries)
        assert check_answer(task.answer or "", validation.evidence.oracle_stdout).passed


def test_the_docker_sandbox_runs_the_stored_queries(built: Path, tmp_path: Path) -> None:
    """The sandbox image carries polars (pinned wheels unpacked at build time), so data tasks
    validate in a container exactly as on the host."""
    reason = create(SANDBOXES, "docker", "sandbox backend").available()
    if reason is not None:
        pytest.skip(f"SKIPPED: the docker sandbox is not available here: {reason}")
    out = tmp_path / "out"
    shutil.copytree(built, out)
    summary = validate_tasks(out, backend="docker")
    assert summary.counts == {"accepted": COUNT}, [
        t for t in summary.tasks if t.status != "accepted"
    ]
    assert all(t.validation.evidence.oracle_stdout for t in _tasks(out).values())


def test_corrupted_oracles_are_rejected(built: Path, tmp_path: Path) -> None:
    _need_local_sandbox()
    out = tmp_path / "out"
    shutil.copytree(built, out)
    ids = sorted(_tasks(out))
    wrong, broken, weak = ids[0], ids[1], ids[2]
    query = out / "tasks" / wrong / "oracle" / "query.py"  # prints another value
    query.write_text(query.read_text().replace("show(result", "show(['no such value']"))
    query = out / "tasks" / broken / "oracle" / "query.py"  # crashes
    query.write_text(query.read_text() + "raise SystemExit(3)\n")
    oracle = out / "tasks" / weak / "oracle"  # a near miss that gives the same answer
    (oracle / "perturbed_1.py").write_text((oracle / "query.py").read_text())
    summary = validate_tasks(out)
    status = {t.id: t for t in summary.tasks}
    assert status[wrong].status == "rejected"
    assert "does not reproduce the answer" in status[wrong].reasons[0]
    assert status[broken].status == "rejected" and "exit status 3" in status[broken].reasons[0]
    assert status[weak].status == "rejected"
    assert any("perturbed query perturbed_1.py" in r for r in status[weak].reasons)
    assert summary.counts == {"accepted": COUNT - 3, "rejected": 3}
    assert _tasks(out)[wrong].validation.status == "rejected"  # written into task.json


def test_data_tasks_go_through_the_validate_stage(built: Path, tmp_path: Path) -> None:
    """One path: ``dataenv validate`` is the stage on the data family — a re-run is cached by
    content like any task; a changed oracle re-judges just that task; ``trajforge validate``
    and one task judged alone (an executor's worker) give the batch's verdicts."""
    from trajforge.verifiers.validate import run
    from trajforge.verifiers.validate.config import ValidateConfig
    from trajforge.verifiers.validate.context import ContextSpec, build_context

    _need_local_sandbox()
    out = tmp_path / "out"
    shutil.copytree(built, out)
    first = {t.id: t.status for t in validate_tasks(out).tasks}
    ctx = build_context(ContextSpec("local", ValidateConfig(), out_dir=str(out)))
    again = run.run(out, ctx)
    assert all(r.cached for r in again) and {r.id: r.status for r in again} == first
    changed = sorted(first)[0]
    query = out / "tasks" / changed / "oracle" / "query.py"
    query.write_text(query.read_text().replace("show(result", "show(['no such value']"))
    rows = {r.id: r for r in run.run(out, ctx)}
    assert [i for i, r in rows.items() if not r.cached] == [changed]
    assert rows[changed].status == "rejected"
    alone = run.validate_dir(out / "tasks" / sorted(first)[1], ctx)  # cached: same verdict
    assert alone.cached and alone.status == first[alone.id]
    stored = _tasks(out)[sorted(first)[1]].validation
    (out / "tasks" / alone.id / "task.json").write_text(
        (out / "tasks" / alone.id / "task.json").read_text().replace(stored.evidence.cache_key, "x")
    )
    judged = run.validate_dir(out / "tasks" / alone.id, ctx)
    assert not judged.cached and judged.status == first[alone.id]
    assert _tasks(out)[alone.id].validation.controls == stored.controls


def test_query_runs_alone_in_the_workspace(built: Path, tmp_path: Path) -> None:
    task = next(iter(_tasks(built).values()))
    work = tmp_path / "work"
    shutil.copytree(built / "tasks" / task.id / "workspace", work)
    shutil.copy(built / "tasks" / task.id / "oracle" / "query.py", work)
    run = subprocess.run(
        [sys.executable, "query.py"], cwd=work, capture_output=True, text=True, check=True
    )
    assert run.stdout.strip() == task.answer


def test_bundled_data_is_small_and_regenerates_identically(tmp_path: Path) -> None:
    files = [p for p in BUNDLED.iterdir() if p.suffix in (".csv", ".jsonl", ".parquet")]
    assert sum(p.stat().st_size for p in files) < 300_000
    subprocess.run([sys.executable, str(BUNDLED / "make_data.py"), str(tmp_path)], check=True)
    for path in files:
        assert (tmp_path / path.name).read_bytes() == path.read_bytes(), path.name


def test_own_tables_with_a_join(tmp_path: Path) -> None:
    sales = ["shop_id,day,units,revenue,kind"]
    for n in range(60):
        kind = ("a", "b", "c")[n % 3]
        sales.append(
            f"S{n % 7},2024-0{1 + n % 6}-{10 + n % 17},{n % 9 + 1},{n * 7.25 + 3:.2f},{kind}"
        )
    (tmp_path / "sales.csv").write_text("\n".join(sales) + "\n")
    shops = [
        json.dumps({"shop_id": f"S{n}", "city": ("Oslo", "Bergen")[n % 2], "title": f"Shop {n}"})
        for n in range(7)
    ]
    (tmp_path / "shops.jsonl").write_text("\n".join(shops) + "\n")
    report = build([tmp_path / "sales.csv", tmp_path / "shops.jsonl"], tmp_path / "out", count=20)
    assert len(report.ids) == 20
    assert {"filter", "join", "window"} <= set(report.families)


def test_cli_build_and_validate_json_and_exit_codes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    code, stdout, stderr = _cli(capsys, "build", "-o", str(out), "--count", "8", "--json")
    assert code == 0, stderr
    summary = json.loads(stdout)
    assert summary["tasks"] == summary["written"] == 8 and len(summary["ids"]) == 8
    _need_local_sandbox()
    code, stdout, stderr = _cli(capsys, "validate", str(out), "--json")
    assert code == 0, stderr
    assert json.loads(stdout)["counts"] == {"accepted": 8}
    first = sorted((out / "tasks").iterdir())[0]
    (first / "oracle" / "query.py").write_text("print('wrong')\n")
    code, stdout, _ = _cli(capsys, "validate", str(out))
    assert code == 1 and f"rejected {first.name}" in stdout


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("notes.txt", "a,b\n1,2\n", "unsupported data file type '.txt'"),
        ("bad.csv", 'a,b\n1,"x\n', "cannot read as csv"),
        ("empty.csv", "a,b\n", "the table is empty"),
        ("bad.jsonl", '{"a": 1}\n{oops\n', "cannot read as jsonl"),
        ("bad.parquet", "not parquet", "cannot read as parquet"),
    ],
)
def test_bad_data_file_is_a_clear_error(
    tmp_path: Path, name: str, content: str, message: str
) -> None:
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(UsageError) as exc:
        build([path], tmp_path / "out", count=3)
    assert str(exc.value).startswith(f"{path}: ") and message in str(exc.value)
    assert not (tmp_path / "out" / "tasks").exists()


def test_bad_data_file_exits_2_without_traceback(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"a": 1}\n{oops\n')
    result = subprocess.run(
        [sys.executable, "-m", "trajforge.cli.main", "dataenv", "build", str(path), "-o",
         str(tmp_path / "out")],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert result.returncode == 2
    assert f"error: {path}: cannot read as jsonl" in result.stderr
    assert "Traceback" not in result.stderr


def test_cli_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, stderr = _cli(capsys, "build", str(tmp_path / "nope.csv"), "-o", str(tmp_path / "o"))
    assert code == 2 and "no such data file" in stderr
    assert _cli(capsys, "build", "--count", "3")[0] == 2  # no -o
    assert _cli(capsys, "build", "-o", str(tmp_path / "o"), "--count", "0")[0] == 2
    code, _, stderr = _cli(capsys, "validate", str(tmp_path / "nothing"))
    assert code == 2 and "no tasks/ folder" in stderr
    tiny = tmp_path / "tiny.csv"
    tiny.write_text("x,y\n1,2\n3,4\n")
    code, _, stderr = _cli(capsys, "build", str(tiny), "-o", str(tmp_path / "t"), "--count", "4")
    assert code == 1 and "only 0 of 4" in stderr
