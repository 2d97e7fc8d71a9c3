"""The shipped bundle's version reaches every record that names the guard it ran through."""

from __future__ import annotations

import pytest

from trajforge.cli.split_cmd import versions
from trajforge.errors import UsageError
from trajforge.guard import bundle_version
from trajforge.guard.engine import RuleDetector
from trajforge.guard.rules import load_bundle
from trajforge.train.evaluation.arms import guard_version, unit_for
from trajforge.train.evaluation.config import ScriptedArm

PREVIOUS = "2025.11.1"  # the bundle before the precision fixes of issue 21


def test_decisions_manifests_and_deployment_units_carry_the_shipped_bundle() -> None:
    shipped = load_bundle().version
    assert shipped != PREVIOUS and bundle_version() == shipped
    assert RuleDetector().check("bash", {"command": "ls"}).bundle == shipped
    assert versions().guard_bundle == shipped  # dataset manifests
    unit = unit_for(
        ScriptedArm(kind="scripted", policy="replay"), ("pi", "0"), guard_version(None), {}
    )
    assert unit.guard_bundle == shipped  # eval deployment units (deployment_units.json, metrics)


def test_an_eval_pinned_to_the_previous_bundle_is_refused() -> None:
    with pytest.raises(UsageError, match=f"guard_bundle '{PREVIOUS}'"):
        guard_version(PREVIOUS)
    assert guard_version(load_bundle().version) == load_bundle().version
