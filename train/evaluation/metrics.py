"""Metrics per arm and per family, and the adapter-minus-base difference with bootstrap CIs.

Success = reward 1 (every hidden test passed). Unscored attempts (reward None: the rollout
failed before it could be scored) are counted as errors and left out of every rate. Intervals
resample tasks (the unit the dataset was sampled in), paired across arms: both arms ran the
same tasks.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from trajforge.records import FAMILIES, RolloutStatus

ALL = "all"
Row = dict[str, Any]


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k (Chen et al. 2021): 1 - C(n-c, k) / C(n, k); needs n >= k."""
    if k < 1 or n < k or c < 0 or c > n:
        raise ValueError(f"pass@k needs 1 <= k <= n and 0 <= c <= n (n={n}, c={c}, k={k})")
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def bootstrap_ci(
    values: Sequence[float], samples: int, seed: int, confidence: float
) -> tuple[float, float] | None:
    """Percentile interval of the mean of ``values``, resampled with replacement (None if empty)."""
    data = np.asarray(values, dtype=float)
    if data.size == 0:
        return None
    rng = np.random.default_rng(seed)
    means = data[rng.integers(0, data.size, size=(samples, data.size))].mean(axis=1)
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(means, [tail, 1.0 - tail])
    return float(low), float(high)


def _mean(values: Sequence[float]) -> float | None:
    return float(np.mean(values)) if values else None


def _quantile(values: Sequence[float], q: float) -> float | None:
    return float(np.quantile(values, q)) if values else None


def per_task(rows: Sequence[Row]) -> dict[str, list[Row]]:
    """Rows grouped by task id."""
    out: dict[str, list[Row]] = {}
    for row in rows:
        out.setdefault(row["task"], []).append(row)
    return out


def task_success(rows: Sequence[Row]) -> float | None:
    """Share of a task's scored attempts that succeeded (None when none was scored)."""
    scored = [r for r in rows if r["reward"] is not None]
    return sum(bool(r["success"]) for r in scored) / len(scored) if scored else None


def _pass_k(tasks: dict[str, list[Row]], k: int) -> float | None:
    values = []
    for rows in tasks.values():
        scored = [r for r in rows if r["reward"] is not None]
        if len(scored) >= k:
            values.append(pass_at_k(len(scored), sum(bool(r["success"]) for r in scored), k))
    return _mean(values)


def _variance(tasks: dict[str, list[Row]]) -> float | None:
    """Mean over tasks of the variance of the reward across their repeated attempts."""
    values = []
    for rows in tasks.values():
        rewards = [float(r["reward"]) for r in rows if r["reward"] is not None]
        if len(rewards) >= 2:
            values.append(float(np.var(rewards)))
    return _mean(values)


def arm_metrics(rows: Sequence[Row], k: int, boot: dict[str, Any]) -> dict[str, Any]:
    """Accuracy, cost and safety figures of one arm on one family (or all)."""
    tasks = per_task(rows)
    scored = [r for r in rows if r["reward"] is not None]
    wins = [r for r in scored if r["success"]]
    successes = [s for s in (task_success(t) for t in tasks.values()) if s is not None]
    calls = sum(int(r["calls"]) for r in rows)
    walls = [float(r["wall_s"]) for r in rows if r["status"] != RolloutStatus.ERROR or r["wall_s"]]
    return {
        "tasks": len(tasks),
        "attempts": len(rows),
        "scored": len(scored),
        "errors": sum(r["status"] == RolloutStatus.ERROR for r in rows),
        "timeouts": sum(r["status"] == RolloutStatus.TIMEOUT for r in rows),
        "success_rate": len(wins) / len(scored) if scored else None,
        "success_ci": bootstrap_ci(successes, **boot),
        "mean_reward": _mean([float(r["reward"]) for r in scored]),
        "pass_at_1": _pass_k(tasks, 1),
        f"pass_at_{k}": _pass_k(tasks, k),
        "calls_per_success": _mean([float(r["calls"]) for r in wins]),
        "calls_mean": _mean([float(r["calls"]) for r in rows]),
        "wall_s_mean": _mean(walls),
        "wall_s_median": _quantile(walls, 0.5),
        "wall_s_p90": _quantile(walls, 0.9),
        "blocked_calls": sum(int(r["blocked"]) for r in rows),
        "block_rate": sum(int(r["blocked"]) for r in rows) / calls if calls else 0.0,
        "blocked_attempt_rate": (
            sum(r["status"] == RolloutStatus.BLOCKED for r in rows) / len(rows) if rows else 0.0
        ),
        "reward_variance": _variance(tasks),
    }


def _paired(base: Sequence[Row], adapter: Sequence[Row]) -> list[float]:
    """Per-task success(adapter) - success(base) over tasks scored in both arms."""
    left, right = per_task(base), per_task(adapter)
    diffs = []
    for task in sorted(set(left) & set(right)):
        b, a = task_success(left[task]), task_success(right[task])
        if a is not None and b is not None:
            diffs.append(a - b)
    return diffs


def _efficiency(base: dict[str, Any], adapter: dict[str, Any], low: float | None) -> str:
    """Calls per solved task, read only beside accuracy."""
    b, a = base["calls_per_success"], adapter["calls_per_success"]
    if a is None or b is None:
        return "not comparable: an arm solved nothing"
    if a >= b:
        return "no efficiency gain"
    if low is not None and low < 0:
        return "fewer calls, but accuracy is not shown to hold: not counted as a gain"
    return "fewer calls per solved task at equal or better accuracy"


def difference(
    base_rows: Sequence[Row],
    adapter_rows: Sequence[Row],
    pair: dict[str, dict[str, Any]],
    boot: dict[str, Any],
) -> dict[str, Any]:
    """adapter - base: success rate with a paired bootstrap CI, calls only beside it."""
    diffs = _paired(base_rows, adapter_rows)
    ci = bootstrap_ci(diffs, **boot)
    base, adapter = pair["base"], pair["adapter"]
    calls = (
        adapter["calls_per_success"] - base["calls_per_success"]
        if adapter["calls_per_success"] is not None and base["calls_per_success"] is not None
        else None
    )
    return {
        "paired_tasks": len(diffs),
        "success_rate": _mean(diffs),
        "success_ci": ci,
        "ci_excludes_zero": None if ci is None else bool(ci[0] > 0 or ci[1] < 0),
        "calls_per_success": calls,
        "efficiency": _efficiency(base, adapter, None if ci is None else ci[0]),
    }


def families_of(rows: Sequence[Row]) -> list[str]:
    """Families present, in the canonical order."""
    present = {r["family"] for r in rows}
    return [f for f in FAMILIES if f in present] + sorted(present - set(FAMILIES))


def compute(rows: Sequence[Row], k: int, boot: dict[str, Any]) -> dict[str, Any]:
    """``metrics.json``: per family (and all) → per arm figures + the difference."""
    groups: dict[str, Any] = {}
    for family in [ALL, *families_of(rows)]:
        subset = [r for r in rows if family == ALL or r["family"] == family]
        by_arm = {arm: [r for r in subset if r["arm"] == arm] for arm in ("base", "adapter")}
        pair = {arm: arm_metrics(part, k, boot) for arm, part in by_arm.items()}
        groups[family] = {
            **pair,
            "difference": difference(by_arm["base"], by_arm["adapter"], pair, boot),
        }
    return groups
