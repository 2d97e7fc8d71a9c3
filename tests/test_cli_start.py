"""The CLI starts without importing what it does not run (issue 22: start in <= 0.2 s).

Timing lives in ``benchmarks/cli.py``; these tests check the cause instead: which modules a
fresh ``trajforge --help`` and one ``trajforge guard check`` call import, that the root listing
shown without importing any command equals the one built from the real commands, and that
every command still answers ``--help`` with its options.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import typer

from tests.support.inprocess import run_main
from trajforge.cli.lazy import LazyGroup, load_module
from trajforge.cli.main import COMMANDS, app

HEAVY = ("openai", "polars", "torch", "transformers", "datasets", "jinja2", "docker")
"""Top-level packages that cost 0.05-1 s to import and that no start-up path needs: the
command that uses one imports it inside its function."""
HEAVY_TOO = ("numpy", "pyarrow", "huggingface_hub", "ray", "vllm", "trl", "peft")
"""Also heavy, pulled in by the same commands (split, train, eval); kept out the same way."""

PROBE = """
import json, sys
sys.argv = ["trajforge", *json.loads(sys.argv[1])]
from trajforge.cli.main import main
try:
    main()
except SystemExit as exc:
    code = exc.code
sys.stdout.flush()
sys.stderr.write(json.dumps({"code": code, "modules": sorted(sys.modules)}) + "\\n")
"""


def _imported(args: list[str], stdin: str = "") -> tuple[set[str], str]:
    """Modules a fresh interpreter holds after ``trajforge ARGS`` exits; and its stdout."""
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(args)],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )
    report = json.loads(proc.stderr.strip().splitlines()[-1])
    assert report["code"] in (0, None), proc.stderr
    return set(report["modules"]), proc.stdout


def _heavy(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if m.split(".")[0] in names)


def _commands(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m.startswith("trajforge.cli.") and m.endswith("_cmd"))


def test_help_imports_no_heavy_module_and_no_command() -> None:
    modules, out = _imported(["--help"])
    assert "reconstruct" in out and "guard" in out  # the listing is there
    assert _heavy(modules, HEAVY + HEAVY_TOO) == []
    assert _commands(modules) == []
    assert "pydantic" not in modules  # no record is needed to list the commands


def test_guard_check_imports_only_the_guard() -> None:
    call = {"tool": "bash", "arguments": {"command": "ls -la"}, "harness": "pi"}
    modules, out = _imported(["guard", "check"], stdin=json.dumps(call) + "\n")
    assert json.loads(out)["decision"] == "allow"
    assert _heavy(modules, HEAVY + HEAVY_TOO) == []
    assert _commands(modules) == ["trajforge.cli.guard_cmd"]
    # rich is imported only when a line is bad and an error has to be shown
    assert _heavy(modules, ("rich",)) == []
    # the records load lazily: the guard needs the base records and the closed vocabularies
    # (a seam's outcome names its status), not tasks, validations or rollouts
    assert sorted(m for m in modules if m.startswith("trajforge.records.")) == [
        "trajforge.records.base",
        "trajforge.records.controls",
    ]


def test_every_record_name_resolves_from_its_module() -> None:
    import importlib

    import trajforge.records as records

    assert set(records._WHERE) == set(records.__all__)
    for name in records.__all__:
        module = importlib.import_module(f"trajforge.records.{records._WHERE[name]}")
        assert getattr(records, name) is getattr(module, name), name
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        records.Nope  # noqa: B018


def _root_help(group: LazyGroup, capsys: pytest.CaptureFixture[str]) -> str:
    with group.make_context("trajforge", [], resilient_parsing=True) as ctx:
        group.format_help(ctx, ctx.make_formatter())
    return capsys.readouterr().out


def test_listing_without_imports_equals_the_real_commands(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The registry's one-line summaries are what the commands' own help says."""
    group = typer.main.get_group(app)
    assert isinstance(group, LazyGroup)
    listed = _root_help(group, capsys)
    for name in COMMANDS:
        group.load(name)
    assert _root_help(group, capsys) == listed
    assert all(name in listed for name in COMMANDS)


def test_every_registered_command_is_in_the_registry() -> None:
    """A command a module's register() adds but COMMANDS does not name would never be reached."""
    for module in {entry.module for entry in COMMANDS.values()}:
        added = set(load_module(module))
        named = {name for name, entry in COMMANDS.items() if entry.module == module}
        assert added == named, module


def test_every_command_module_is_in_the_registry() -> None:
    """A module under trajforge/cli with a register() that COMMANDS does not name is dead."""
    cli = Path(__file__).resolve().parents[1] / "trajforge" / "cli"
    with_register = {
        "." + path.stem
        for path in cli.glob("*.py")
        if re.search(r"^def register\(", path.read_text(), re.MULTILINE)
    }
    assert with_register - {entry.module for entry in COMMANDS.values()} == set()


@pytest.mark.parametrize("name", list(COMMANDS))
def test_each_command_shows_its_options(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_main(capsys, name, "--help")
    assert code == 0
    assert f"{name} [OPTIONS]" in out
    assert "--help" in out
    assert ("--json" in out) or ("Commands" in out)  # a command's options, or a group's list


def test_unknown_command_is_a_usage_error_with_a_suggestion(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, _, err = run_main(capsys, "reconstrut")
    assert code == 2
    assert "Did you mean 'reconstruct'?" in err


def test_an_error_message_is_printed_as_written() -> None:
    """Error texts are ours, not rich markup: "[reconstruct]" stays on the line."""
    code = (
        "from trajforge.cli.main import _report\n"
        "from trajforge.errors import UsageError\n"
        "raise SystemExit(_report(UsageError('f.toml: [reconstruct] takes repos = [...]')))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 2
    assert "f.toml: [reconstruct] takes repos = [...]" in proc.stderr
