"""Small inline SVG charts for the eval report (no plotting dependency, nothing to download)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

WIDTH, HEIGHT = 640, 260
LEFT, RIGHT, TOP, BOTTOM = 56, 16, 28, 48
COLOURS = {"base": "#8c8c8c", "adapter": "#2b6cb0"}


@dataclass(frozen=True)
class Bar:
    """One bar: a group label (family), a series (arm), a value and an optional interval."""

    group: str
    series: str
    value: float | None
    low: float | None = None
    high: float | None = None


def _frame(title: str, body: list[str], y_max: float, y_label: str) -> str:
    plot_h = HEIGHT - TOP - BOTTOM
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{escape(title)}">',
        f'<text x="{LEFT}" y="18" font-size="13" font-weight="bold">{escape(title)}</text>',
    ]
    for i in range(5):
        value = y_max * i / 4
        y = TOP + plot_h - plot_h * i / 4
        parts.append(
            f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y:.1f}" y2="{y:.1f}" stroke="#e2e2e2"/>'
            f'<text x="{LEFT - 6}" y="{y + 4:.1f}" font-size="10" text-anchor="end">'
            f"{value:.3g}</text>"
        )
    parts.append(
        f'<text x="12" y="{TOP + plot_h / 2:.0f}" font-size="10" '
        f'transform="rotate(-90 12 {TOP + plot_h / 2:.0f})" text-anchor="middle">'
        f"{escape(y_label)}</text>"
    )
    parts.extend(body)
    parts.append(_legend())
    parts.append("</svg>")
    return "".join(parts)


def _legend() -> str:
    items = []
    for i, (name, colour) in enumerate(COLOURS.items()):
        x = WIDTH - RIGHT - 150 + i * 75
        items.append(
            f'<rect x="{x}" y="8" width="10" height="10" fill="{colour}"/>'
            f'<text x="{x + 14}" y="17" font-size="11">{name}</text>'
        )
    return "".join(items)


def nice_max(value: float) -> float:
    """The smallest 1 / 2 / 2.5 / 5 × 10^n at or above ``value`` (axis top)."""
    if value <= 0:
        return 1.0
    scale = 10 ** math.floor(math.log10(value))
    return next(m * scale for m in (1, 2, 2.5, 5, 10) if m * scale >= value)


def _y(value: float, y_max: float) -> float:
    plot_h = HEIGHT - TOP - BOTTOM
    return TOP + plot_h - plot_h * (value / y_max if y_max else 0.0)


def bar_chart(title: str, bars: Sequence[Bar], y_label: str, y_max: float | None = None) -> str:
    """Grouped bars (one group per family, one bar per arm) with interval whiskers."""
    groups = list(dict.fromkeys(b.group for b in bars))
    series = list(COLOURS)
    top = y_max or nice_max(max([b.high or b.value or 0.0 for b in bars] + [0.0]))
    slot = (WIDTH - LEFT - RIGHT) / max(len(groups), 1)
    width = slot * 0.7 / len(series)
    body = []
    for g, group in enumerate(groups):
        x0 = LEFT + g * slot + slot * 0.15
        body.append(
            f'<text x="{LEFT + (g + 0.5) * slot:.1f}" y="{HEIGHT - BOTTOM + 16}" font-size="11" '
            f'text-anchor="middle">{escape(group)}</text>'
        )
        for s, name in enumerate(series):
            bar = next((b for b in bars if b.group == group and b.series == name), None)
            if bar is None or bar.value is None:
                continue
            x, y = x0 + s * width, _y(bar.value, top)
            body.append(
                f'<rect x="{x:.1f}" y="{y:.1f}" width="{width - 2:.1f}" '
                f'height="{_y(0, top) - y:.1f}" fill="{COLOURS[name]}">'
                f"<title>{escape(group)} {name}: {bar.value:.3g}</title></rect>"
                f'<text x="{x + (width - 2) / 2:.1f}" y="{y - 3:.1f}" font-size="10" '
                f'text-anchor="middle">{bar.value:.2f}</text>'
            )
            if bar.low is not None and bar.high is not None:
                cx = x + (width - 2) / 2
                body.append(
                    f'<line x1="{cx:.1f}" x2="{cx:.1f}" y1="{_y(bar.low, top):.1f}" '
                    f'y2="{_y(bar.high, top):.1f}" stroke="#000" stroke-width="1.5"/>'
                )
    return _frame(title, body, top, y_label)


def strip_chart(title: str, values: dict[str, dict[str, list[float]]], y_label: str) -> str:
    """Every attempt's value as a dot, per family and arm (a distribution at a glance)."""
    groups = list(values)
    flat = [v for per_arm in values.values() for vs in per_arm.values() for v in vs]
    top = nice_max(max([*flat, 0.0]))
    slot = (WIDTH - LEFT - RIGHT) / max(len(groups), 1)
    body = []
    for g, group in enumerate(groups):
        body.append(
            f'<text x="{LEFT + (g + 0.5) * slot:.1f}" y="{HEIGHT - BOTTOM + 16}" font-size="11" '
            f'text-anchor="middle">{escape(group)}</text>'
        )
        for s, name in enumerate(COLOURS):
            centre = LEFT + g * slot + slot * (0.3 + 0.4 * s)
            for i, value in enumerate(values[group].get(name, [])):
                jitter = ((i * 7) % 11 - 5) * slot * 0.012
                body.append(
                    f'<circle cx="{centre + jitter:.1f}" cy="{_y(value, top):.1f}" r="3" '
                    f'fill="{COLOURS[name]}" fill-opacity="0.7"><title>{name}: {value:.3g}'
                    "</title></circle>"
                )
    return _frame(title, body, top, y_label)
