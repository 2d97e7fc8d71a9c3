"""``trajforge guard``: check tool calls, audit recorded sessions, serve the blocking proxy."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import typer

from trajforge.cli.exits import EXIT_OK, EXIT_PARTIAL, EXIT_UNUSABLE

guard_app = typer.Typer(
    help="Deterministic tool-call guard: check, audit, serve.", no_args_is_help=True
)

PROFILE_HELP = "JSON protected set (tests, graders, reward paths, source ids) of the task."
BUNDLE_HELP = "Rule bundle TOML (default: the bundled guard/rules/default.toml)."


def _load(profile: Path | None, bundle: Path | None) -> tuple[Any, Any]:
    from trajforge.guard.engine import bundle_at
    from trajforge.guard.profile import load_profile

    return (load_profile(profile) if profile else None), bundle_at(bundle)


def _call_from(line: str, number: int) -> tuple[str, dict[str, Any], str]:
    """(tool, arguments, harness) from one stdin line; ValueError names the problem."""
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ValueError(f"stdin line {number}: not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError(f"stdin line {number}: expected an object with 'tool' and 'arguments'")
    tool, arguments = data.get("tool"), data.get("arguments", {})
    if not isinstance(tool, str) or not tool:
        raise ValueError(f"stdin line {number}: field 'tool' must be a non-empty string")
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError:
            arguments = {"command": arguments}
    if not isinstance(arguments, dict):
        raise ValueError(f"stdin line {number}: field 'arguments' must be an object")
    harness = data.get("harness") or ""
    return tool, arguments, str(harness)


@guard_app.command("check")
def check(
    profile: Path | None = typer.Option(None, "--profile", help=PROFILE_HELP),
    bundle: Path | None = typer.Option(None, "--bundle", help=BUNDLE_HELP),
    cwd: str | None = typer.Option(None, "--cwd", help="Starting directory (default: workspace)."),
    as_json: bool = typer.Option(True, "--json/--no-json", help="One JSON decision per line."),
) -> None:
    """Read JSON tool calls ({"tool", "arguments", "harness"}) on stdin, one per line, as one
    rollout; print one decision per line: {"decision", "rule", "reason", "bundle"}."""
    from trajforge.guard.engine import RuleDetector

    prof, bun = _load(profile, bundle)
    detector = RuleDetector(prof, bun, cwd=cwd)
    failed = 0
    for number, line in enumerate(sys.stdin, 1):
        if not line.strip():
            continue
        try:
            tool, arguments, harness = _call_from(line, number)
        except ValueError as exc:
            from trajforge.cli.common import err  # rich only when there is an error to show

            failed += 1
            err.print(f"[red]error:[/red] {exc}")
            row: dict[str, Any] = {"decision": "error", "rule": None, "reason": str(exc)}
        else:
            decision = detector.check(tool, arguments, harness)
            row = decision.model_dump(mode="json")
        if as_json:
            sys.stdout.write(json.dumps(row) + "\n")
        else:
            sys.stdout.write(f"{row['decision']}\t{row.get('rule') or '-'}\t{row['reason']}\n")
        sys.stdout.flush()
    raise typer.Exit(EXIT_PARTIAL if failed else EXIT_OK)


@guard_app.command("audit")
def audit_cmd(
    paths: list[Path] = typer.Argument(
        ..., help="Recorded sessions (any format reconstruct reads)."
    ),
    profile: Path | None = typer.Option(None, "--profile", help=PROFILE_HELP),
    bundle: Path | None = typer.Option(None, "--bundle", help=BUNDLE_HELP),
    report_dir: Path | None = typer.Option(
        None, "--report", help="Write audit.json and audit.md (per-rule counts, examples) here."
    ),
    examples: int = typer.Option(
        5, "--examples", min=0, help="Examples per rule and decision (blocked, flagged)."
    ),
    calibration: Path | None = typer.Option(
        None, "--calibration", help="Accepted blocks (default: <bundle>.calibration.toml)."
    ),
    show: int = typer.Option(10, "--show", help="Blocks / flags to list per session (text mode)."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
) -> None:
    """Run the detectors over recorded sessions: blocks and flags per session, and per rule how
    many calls it blocked and flagged with up to N scrubbed examples each."""
    from rich.markup import escape

    from trajforge.cli.common import out, print_json, progress
    from trajforge.errors import UsageError
    from trajforge.guard.audit import audit, report_json
    from trajforge.guard.audit_report import write_report
    from trajforge.guard.calibration import calibration_for
    from trajforge.reconstruct.inputs import expand_paths

    prof, bun = _load(profile, bundle)
    calib = calibration_for(bundle, calibration)
    inputs, _ = expand_paths(paths)
    bar = iter(progress(inputs, len(inputs), "audit", quiet=as_json))
    next(bar, None)

    def advance(_path: Path) -> None:
        next(bar, None)

    report = audit(paths, bun, prof, on_input=advance, examples=examples, calibration=calib)
    try:
        written = write_report(report, report_dir) if report_dir is not None else []
    except OSError as exc:
        raise UsageError(f"--report {report_dir}: cannot write: {exc.strerror}") from None
    if as_json:
        print_json(report_json(report))
    else:
        _print_report(report, show)
        for path in written:
            out.print(f"wrote {escape(str(path))}")
    errors = [s for s in report.sessions if s.error]
    if errors and len(errors) == len(report.sessions):
        raise typer.Exit(EXIT_UNUSABLE)
    raise typer.Exit(EXIT_PARTIAL if errors else EXIT_OK)


def _print_report(report: Any, show: int) -> None:
    from rich.markup import escape
    from rich.table import Table

    from trajforge.cli.common import err, out

    calls = report.calls or 1
    for session in report.sessions:
        if session.error:
            err.print(f"[red]error:[/red] {escape(session.error)}")
            continue
        out.print(
            f"[bold]{escape(session.source)}[/bold] ({session.harness}): {session.calls} calls, "
            f"{len(session.blocks)} blocked, {len(session.flags)} flagged"
        )
        for label, hits in (("BLOCK", session.blocks), ("flag", session.flags)):
            for hit in hits[:show]:
                out.print(escape(f"  {label} line {hit.line} [{hit.rule}] {hit.call[:100]}"))
    table = Table(title=f"rules (bundle {report.bundle}, {report.calls} calls)")
    columns = ("rule", "severity", "blocks", "flags", "also", "accepted", "unlisted", "block rate")
    for column in columns:
        left = column in ("rule", "severity")
        table.add_column(column, justify="left" if left else "right", no_wrap=column == "rule")
    for rule, entry in report.rules.items():
        if entry.blocks or entry.flags or entry.also:
            rate = f"{100 * entry.blocks / calls:.2f} %"
            counts = (entry.blocks, entry.flags, entry.also, entry.accepted, entry.unlisted)
            table.add_row(rule, entry.severity, *map(str, counts), rate)
    out.print(table)
    out.print(
        f"blocked {report.count('blocks')} / {report.calls} calls "
        f"({100 * report.count('blocks') / calls:.2f} %), flagged {report.count('flags')}"
    )


@guard_app.command("serve")
def serve(
    upstream: str = typer.Option(..., "--upstream", help="OpenAI-compatible base URL (…/v1)."),
    port: int = typer.Option(8100, "--port", help="Port to listen on (0: a free one)."),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on."),
    profile: Path | None = typer.Option(None, "--profile", help=PROFILE_HELP),
    bundle: Path | None = typer.Option(None, "--bundle", help=BUNDLE_HELP),
    log: Path | None = typer.Option(None, "--log", help="Append every decision here (JSONL)."),
    upstream_key_env: str | None = typer.Option(
        None, "--upstream-key-env", help="Env var holding the upstream API key (else passed on)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the listening address as JSON."),
) -> None:
    """Proxy chat completions, replacing blocked tool calls with notices (rollout id: the
    X-Rollout-Id header or the API key). GET /guard/rollouts/ID reports a rollout."""
    import os

    from trajforge.cli.common import out, print_json
    from trajforge.errors import UsageError
    from trajforge.guard.proxy import GuardProxy

    prof, bun = _load(profile, bundle)
    key = None
    if upstream_key_env:
        key = os.environ.get(upstream_key_env)
        if not key:
            raise UsageError(f"--upstream-key-env {upstream_key_env}: variable is not set")
    proxy = GuardProxy(upstream, bun, prof, log, key)
    try:
        server = proxy.serve(host, port)
    except OSError as exc:
        raise UsageError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    address = {"url": f"http://{host}:{server.server_address[1]}/v1", "bundle": bun.version}
    if as_json:
        print_json(address)
    else:
        out.print(f"guard proxy on {address['url']} → {upstream} (bundle {bun.version})")
    sys.stdout.flush()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


def register(app: typer.Typer) -> None:
    """Attach the ``guard`` group to the main app."""
    app.add_typer(guard_app, name="guard")
