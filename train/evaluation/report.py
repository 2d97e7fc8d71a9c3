"""``report.md`` and ``report.html`` of an eval run: per-family tables, charts, failures.

Both files are rendered from the same tables. Efficiency (calls per solved task) only ever
appears in the same row as the accuracy difference it has to be read with.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import Any

from trajforge.train.evaluation.metrics import ALL
from trajforge.train.evaluation.svg import Bar, bar_chart, strip_chart

Table = tuple[str, list[str], list[list[str]]]
Row = dict[str, Any]


def _f(value: float | None, digits: int = 2) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _ci(ci: Sequence[float] | None) -> str:
    return "–" if ci is None else f"[{ci[0]:+.2f}, {ci[1]:+.2f}]"


def _pct_ci(value: float | None, ci: Sequence[float] | None) -> str:
    band = "" if ci is None else f" [{ci[0]:.2f}, {ci[1]:.2f}]"
    return _f(value) + band


def accuracy_table(metrics: dict[str, Any], k: int) -> Table:
    """Success and pass@k per family, both arms, and the difference with its interval.

    Success is pass@1 (rewards are 0 or 1), so pass@1 gets no columns of its own.
    """
    head = [
        "family",
        "tasks",
        "base success",
        "adapter success",
        "Δ success",
        "CI",
        "CI ∌ 0",
        f"base pass@{k}",
        f"adapter pass@{k}",
    ]
    rows = []
    for family, group in metrics.items():
        b, a, d = group["base"], group["adapter"], group["difference"]
        rows.append(
            [
                family,
                str(b["tasks"]),
                _pct_ci(b["success_rate"], b["success_ci"]),
                _pct_ci(a["success_rate"], a["success_ci"]),
                _f(d["success_rate"], 2),
                _ci(d["success_ci"]),
                {True: "yes", False: "no", None: "–"}[d["ci_excludes_zero"]],
                _f(b[f"pass_at_{k}"]),
                _f(a[f"pass_at_{k}"]),
            ]
        )
    return "Accuracy per family (success = reward 1; CI: bootstrap over tasks)", head, rows


def efficiency_table(metrics: dict[str, Any]) -> Table:
    """Calls per solved task, next to the accuracy difference."""
    head = [
        "family",
        "Δ success",
        "CI",
        "base calls/success",
        "adapter calls/success",
        "Δ calls/success",
        "reading",
    ]
    rows = []
    for family, group in metrics.items():
        b, a, d = group["base"], group["adapter"], group["difference"]
        rows.append(
            [
                family,
                _f(d["success_rate"]),
                _ci(d["success_ci"]),
                _f(b["calls_per_success"], 1),
                _f(a["calls_per_success"], 1),
                _f(d["calls_per_success"], 1),
                d["efficiency"],
            ]
        )
    return "Efficiency, read only beside accuracy", head, rows


def cost_table(metrics: dict[str, Any]) -> Table:
    """Time, guard blocks, errors and attempt-to-attempt variance per family and arm."""
    head = [
        "family",
        "arm",
        "attempts",
        "scored",
        "errors",
        "timeouts",
        "wall s mean",
        "wall s median",
        "wall s p90",
        "calls mean",
        "blocked calls",
        "block rate",
        "blocked attempts",
        "reward variance",
    ]
    rows = []
    for family, group in metrics.items():
        for arm in ("base", "adapter"):
            m = group[arm]
            rows.append(
                [
                    family,
                    arm,
                    str(m["attempts"]),
                    str(m["scored"]),
                    str(m["errors"]),
                    str(m["timeouts"]),
                    _f(m["wall_s_mean"]),
                    _f(m["wall_s_median"]),
                    _f(m["wall_s_p90"]),
                    _f(m["calls_mean"], 1),
                    str(m["blocked_calls"]),
                    _f(m["block_rate"]),
                    _f(m["blocked_attempt_rate"]),
                    _f(m["reward_variance"], 3),
                ]
            )
    return "Time, guard blocks, errors and variance across repeated attempts", head, rows


def failures(rows: Sequence[Row]) -> dict[str, list[list[str]]]:
    """Attempts that did not succeed, per family, for manual inspection."""
    out: dict[str, list[list[str]]] = {}
    for r in rows:
        if r["success"]:
            continue
        why = "; ".join([*r["reasons"], *(f"blocked: {b}" for b in r["block_rules"])])
        answer = (r["answer"] or "").replace("\n", " ")[:120]
        out.setdefault(r["family"], []).append(
            [
                r["arm"],
                r["task"],
                str(r["attempt"]),
                r["status"],
                _f(r["reward"]),
                why or "verifier did not pass",
                answer,
                f"tasks/{r['task']}",
            ]
        )
    return out


FAILURE_HEAD = ["arm", "task", "attempt", "status", "reward", "why", "answer", "task folder"]


def _md_table(head: list[str], rows: list[list[str]]) -> str:
    def line(cells: list[str]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

    return "\n".join([line(head), line(["---"] * len(head)), *(line(r) for r in rows)])


def _inputs(info: dict[str, Any]) -> list[tuple[str, str]]:
    units = info["deployment_units"]
    pairs = [
        (
            f"arm {name}",
            f"{u['base_model']}@{u['base_revision']} + adapter "
            f"{u['adapter']}@{u['adapter_revision']}",
        )
        for name, u in units.items()
    ]
    unit = units["base"]
    return [
        (
            "dataset",
            f"{info['dataset']['path']} revision {info['dataset']['revision']} split "
            f"{info['dataset']['split']} (manifest sha256 {info['dataset']['sha256'][:12]})",
        ),
        ("harness", f"{unit['harness']} {unit['harness_version']}"),
        ("tool policy / guard bundle", f"{unit['tool_policy']} / {unit['guard_bundle']}"),
        ("budget", f"{info['budget']['max_steps']} steps, {info['budget']['timeout_s']} s"),
        ("sampling", ", ".join(f"{k}={v}" for k, v in info["sampling"].items())),
        ("attempts per task per arm (k)", str(info["k"])),
        *pairs,
    ]


def render_md(info: dict[str, Any], metrics: dict[str, Any], rows: Sequence[Row]) -> str:
    """The Markdown report."""
    parts = ["# trajforge eval: adapter vs base", ""]
    parts += [f"- **{k}**: {v}" for k, v in _inputs(info)]
    for title, head, body in (
        accuracy_table(metrics, info["k"]),
        efficiency_table(metrics),
        cost_table(metrics),
    ):
        parts += ["", f"## {title}", "", _md_table(head, body)]
    parts += ["", "## Failures per family", ""]
    listed = failures(rows)
    for family in [f for f in metrics if f != ALL]:
        parts += [f"### {family}", ""]
        found = listed.get(family)
        parts += [_md_table(FAILURE_HEAD, found) if found else "No failures.", ""]
    return "\n".join(parts) + "\n"


def charts(metrics: dict[str, Any], rows: Sequence[Row]) -> list[str]:
    """Success per family with intervals, calls and time distributions, block rate."""
    families = [f for f in metrics if f != ALL]
    success = [
        Bar(
            f, arm, metrics[f][arm]["success_rate"], *(metrics[f][arm]["success_ci"] or (None,) * 2)
        )
        for f in [*families, ALL]
        for arm in ("base", "adapter")
    ]
    blocks = [
        Bar(f, arm, metrics[f][arm]["block_rate"]) for f in families for arm in ("base", "adapter")
    ]

    def dist(key: str) -> dict[str, dict[str, list[float]]]:
        return {
            f: {
                arm: [float(r[key]) for r in rows if r["family"] == f and r["arm"] == arm]
                for arm in ("base", "adapter")
            }
            for f in families
        }

    return [
        bar_chart("Success rate per family (bootstrap CI over tasks)", success, "success", 1.0),
        strip_chart("Tool calls per attempt", dist("calls"), "calls"),
        strip_chart("Wall-clock time per attempt", dist("wall_s"), "seconds"),
        bar_chart("Blocked-call rate per family", blocks, "blocked / calls"),
    ]


def _html_table(head: list[str], rows: list[list[str]]) -> str:
    th = "".join(f"<th>{escape(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>"


STYLE = (
    "body{font-family:system-ui,sans-serif;margin:2em;max-width:1200px}"
    "table{border-collapse:collapse;margin:.5em 0 1.5em}"
    "td,th{border:1px solid #ccc;padding:3px 8px;font-size:13px;text-align:left}"
    "th{background:#f3f3f3}svg{margin:.5em 1em 1em 0}"
)


def render_html(info: dict[str, Any], metrics: dict[str, Any], rows: Sequence[Row]) -> str:
    """The HTML report with inline SVG charts."""
    parts = [
        f"<!doctype html><html><head><meta charset='utf-8'><title>trajforge eval</title>"
        f"<style>{STYLE}</style></head><body><h1>trajforge eval: adapter vs base</h1><ul>"
    ]
    parts += [f"<li><b>{escape(k)}</b>: {escape(v)}</li>" for k, v in _inputs(info)]
    parts.append("</ul>")
    for title, head, body in (accuracy_table(metrics, info["k"]), efficiency_table(metrics)):
        parts += [f"<h2>{escape(title)}</h2>", _html_table(head, body)]
    parts += ["<h2>Charts</h2>", *charts(metrics, rows)]
    title, head, body = cost_table(metrics)
    parts += [f"<h2>{escape(title)}</h2>", _html_table(head, body), "<h2>Failures per family</h2>"]
    listed = failures(rows)
    for family in [f for f in metrics if f != ALL]:
        found = listed.get(family)
        parts += [
            f"<h3>{escape(family)}</h3>",
            _html_table(FAILURE_HEAD, found) if found else "<p>No failures.</p>",
        ]
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
