"""The task runtime inside the sandbox: the running interpreter wherever it lives, and a check
that names what is missing before any task is judged."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from trajforge.protocols import Sandbox
from trajforge.verifiers.sandbox.runtime import check_runtime, needs_of

INSIDE = textwrap.dedent(
    """
    import json, sys, tempfile
    from pathlib import Path
    from trajforge.protocols import Limits
    from trajforge.verifiers.sandbox import get_sandbox

    ws = Path(tempfile.mkdtemp(dir=sys.argv[1]))
    probe = (
        "import sys, polars, pytest; open('/tmp/scratch', 'w').write('x'); "
        "print(sys.prefix)"
    )
    seen = []
    with get_sandbox("local").session(ws, Limits(timeout_s=60)) as box:
        for _ in range(2):  # the second run follows a reset, which clears /tmp around it
            run = box.run(["python3", "-c", probe])
            seen.append([run.exit_code, run.stdout.strip(), run.stderr.strip()[-300:]])
            box.reset()
    print(json.dumps(seen))
    """
)


def make_venv(where: Path) -> Path:
    """A virtual environment seeing this interpreter's packages (trajforge included), after its
    own: a ``.pth`` file adds each package folder on this interpreter's path, in order. (With
    ``--system-site-packages`` alone, a venv made from a venv sees the base interpreter's
    packages, not the outer venv's: on a fresh machine, where trajforge lives only in the
    user's venv, it would not import.)"""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    site = next((where / "lib").glob("python3*/site-packages"))
    outer = [p for p in sys.path if Path(p).name in ("site-packages", "dist-packages")]
    lines = [f"import site; site.addsitedir({p!r})" for p in outer if Path(p).is_dir()]
    (site / "zz_outer.pth").write_text("\n".join(lines) + "\n")
    return where / "bin" / "python"


def test_a_venv_under_tmp_is_the_runtime_inside(local_sandbox: Sandbox, tmp_path: Path) -> None:
    assert str(tmp_path).startswith("/tmp/"), tmp_path  # the case the sandbox hides by default
    python = make_venv(tmp_path / "venv")
    proc = subprocess.run(
        [str(python), "-c", INSIDE, str(tmp_path)], capture_output=True, text=True, timeout=180
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    runs = json.loads(proc.stdout.splitlines()[-1])
    for exit_code, prefix, stderr in runs:
        assert exit_code == 0, stderr
        assert prefix == str(tmp_path / "venv")  # not /usr, not a fallback interpreter
    assert (tmp_path / "venv" / "pyvenv.cfg").is_file()  # the reset left the venv alone


def test_this_interpreter_has_the_whole_runtime(local_sandbox: Sandbox) -> None:
    check_runtime(local_sandbox, "local", ("pytest", "polars"))


def test_families_say_what_they_need() -> None:
    assert needs_of(["qa"]) == ()
    assert needs_of(["repair", "qa"]) == ("pytest",)
    assert needs_of(["data", "build"]) == ("pytest", "polars")


def test_a_runtime_without_polars_is_named_before_any_task(
    local_sandbox: Sandbox, tmp_path: Path
) -> None:
    python = make_venv(tmp_path / "venv")
    site = next((tmp_path / "venv" / "lib").glob("python3*/site-packages"))
    (site / "polars.py").write_text("raise ImportError('No module named polars')\n")
    code = (
        "from trajforge.errors import TaskEnvironmentError\n"
        "from trajforge.verifiers.sandbox import get_sandbox\n"
        "from trajforge.verifiers.sandbox.runtime import check_runtime\n"
        "try:\n"
        "    check_runtime(get_sandbox('local'), 'local', ['pytest', 'polars'])\n"
        "except TaskEnvironmentError as exc:\n"
        "    print(exc)\n"
    )
    proc = subprocess.run([str(python), "-c", code], capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr[-2000:]
    message = proc.stdout.strip()
    assert "cannot run polars" in message and "No module named polars" in message, message
    assert f"{python} -m pip install polars" in message  # the fix, for this interpreter
    assert "no task was judged" in message


def test_validate_stops_on_a_broken_runtime_and_judges_nothing(
    local_sandbox: Sandbox, tmp_path: Path
) -> None:
    repair = Path(__file__).parents[1] / "fixtures" / "sessions" / "pi" / "repair.jsonl"
    out = tmp_path / "out"
    cli = [sys.executable, "-m", "trajforge.cli.main"]
    assert subprocess.run([*cli, "reconstruct", str(repair), "-o", str(out)]).returncode == 0
    before = {p: p.read_bytes() for p in out.rglob("task.json")}
    assert before
    python = make_venv(tmp_path / "venv")
    site = next((tmp_path / "venv" / "lib").glob("python3*/site-packages"))
    (site / "pytest.py").write_text("raise ImportError('No module named pytest')\n")
    proc = subprocess.run(
        [str(python), "-m", "trajforge.cli.main", "validate", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 2, proc.stderr
    assert "cannot run pytest" in proc.stderr and "pip install pytest" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert {p: p.read_bytes() for p in out.rglob("task.json")} == before  # nothing judged
