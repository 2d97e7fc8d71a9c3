"""pass@k, the bootstrap and the per-family metrics on hand-made attempt rows."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from trajforge.train.evaluation.metrics import bootstrap_ci, compute, pass_at_k
from trajforge.train.evaluation.svg import nice_max

BOOT = {"samples": 2000, "seed": 0, "confidence": 0.95}


def brute_pass_at_k(n: int, c: int, k: int) -> float:
    """Share of all k-subsets of n attempts (c correct) holding at least one correct one."""
    attempts = [True] * c + [False] * (n - c)
    subsets = list(itertools.combinations(range(n), k))
    return sum(any(attempts[i] for i in s) for s in subsets) / len(subsets)


@pytest.mark.parametrize(
    ("n", "c", "k"), [(5, 2, 1), (5, 2, 2), (6, 1, 3), (4, 0, 2), (3, 3, 1), (10, 3, 5), (2, 1, 2)]
)
def test_pass_at_k_is_the_unbiased_estimator(n: int, c: int, k: int) -> None:
    assert pass_at_k(n, c, k) == pytest.approx(brute_pass_at_k(n, c, k))


def test_pass_at_k_refuses_impossible_counts() -> None:
    for n, c, k in [(1, 0, 2), (3, 4, 1), (3, 1, 0)]:
        with pytest.raises(ValueError, match="pass@k needs"):
            pass_at_k(n, c, k)


def test_bootstrap_interval() -> None:
    assert bootstrap_ci([], **BOOT) is None
    assert bootstrap_ci([1.0, 1.0, 1.0], **BOOT) == (1.0, 1.0)
    values = [0.0, 1.0] * 50  # mean 0.5, standard error 0.05
    low, high = bootstrap_ci(values, **BOOT) or (0.0, 0.0)
    assert low < 0.5 < high
    assert 0.15 < high - low < 0.25  # ≈ 2 × 1.96 × 0.05
    assert bootstrap_ci(values, **BOOT) == (low, high)  # seeded: reproducible
    narrow = bootstrap_ci(values, samples=2000, seed=0, confidence=0.6) or (0.0, 0.0)
    assert narrow[1] - narrow[0] < high - low


def row(
    arm: str,
    task: str,
    family: str,
    reward: float | None,
    calls: int,
    status: str = "ok",
    blocked: int = 0,
) -> dict[str, Any]:
    return {
        "arm": arm,
        "task": task,
        "family": family,
        "attempt": 0,
        "status": status,
        "reward": reward,
        "success": None if reward is None else reward >= 1.0,
        "calls": calls,
        "blocked": blocked,
        "wall_s": 1.0,
    }


def test_metrics_per_family_skip_unscored_attempts() -> None:
    rows = [
        row("base", "r1", "repair", 1.0, 8),
        row("base", "r1", "repair", 0.0, 8),
        row("base", "q1", "qa", 0.0, 2, "blocked", blocked=1),
        row("adapter", "r1", "repair", 1.0, 4),
        row("adapter", "r1", "repair", None, 0, "error"),
        row("adapter", "q1", "qa", 1.0, 1),
        row("adapter", "q1", "qa", 1.0, 1),
    ]
    metrics = compute(rows, 2, BOOT)
    assert list(metrics) == ["all", "repair", "qa"]
    repair = metrics["repair"]
    assert repair["base"]["success_rate"] == 0.5 and repair["base"]["pass_at_2"] == 1.0
    assert repair["adapter"]["errors"] == 1 and repair["adapter"]["scored"] == 1
    assert repair["adapter"]["success_rate"] == 1.0
    assert repair["adapter"]["pass_at_2"] is None  # only one scored attempt: pass@2 undefined
    assert repair["base"]["reward_variance"] == 0.25
    assert metrics["qa"]["base"]["block_rate"] == 0.5
    assert metrics["qa"]["base"]["blocked_attempt_rate"] == 1.0
    diff = metrics["all"]["difference"]
    assert diff["paired_tasks"] == 2 and diff["success_rate"] == 0.75  # (0.5 + 1.0) / 2
    assert repair["difference"]["calls_per_success"] == -4.0
    assert repair["difference"]["efficiency"].startswith("fewer calls per solved task")


def test_fewer_calls_from_a_worse_arm_is_not_a_gain() -> None:
    rows = [row("base", f"t{i}", "build", 1.0, 10) for i in range(4)]
    rows += [row("adapter", f"t{i}", "build", 1.0 if i == 0 else 0.0, 2) for i in range(4)]
    diff = compute(rows, 1, BOOT)["build"]["difference"]
    assert diff["success_rate"] == -0.75 and diff["calls_per_success"] == -8.0
    assert diff["ci_excludes_zero"] is True
    assert "not counted as a gain" in diff["efficiency"]


def test_axis_tops_are_round() -> None:
    assert [nice_max(v) for v in (0.0, 0.3, 1.0, 2.7, 3.3, 7.0, 42.0)] == [
        1.0,
        0.5,
        1.0,
        5.0,
        5.0,
        10.0,
        50.0,
    ]


@pytest.mark.parametrize("k", [1, 3])
def test_accuracy_table_names_each_pass_at_column_once(k: int) -> None:
    from trajforge.train.evaluation.report import accuracy_table

    rows = [
        row(arm, f"t{i}", "extend", 1.0 if arm == "adapter" else 0.0, 3)
        for i in range(3)
        for arm in ("base", "adapter")
        for _ in range(k)
    ]
    _, head, body = accuracy_table(compute(rows, k, BOOT), k)
    assert len(head) == len(set(head)) == len(body[0])
    assert [h for h in head if "pass@" in h] == [f"base pass@{k}", f"adapter pass@{k}"]
