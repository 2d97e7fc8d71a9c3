"""Run a bundle's attack and near-miss examples (and their obfuscated forms) through a detector.

Used by the tests and ``benchmarks/guard.py``: each rule's
attacks must trigger it (block for block rules), each near miss must be neither blocked nor
caught by that rule.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from trajforge.guard.engine import RuleDetector
from trajforge.guard.obfuscate import variants
from trajforge.guard.profile import Profile
from trajforge.guard.rules import Bundle, Example, Rule
from trajforge.protocols import GuardDecision


@dataclass(frozen=True)
class Case:
    """One example run: which rule, attack or near miss, which obfuscation form."""

    rule: Rule
    kind: str
    """attack or near_miss."""
    form: str
    """Obfuscation form name, ``plain`` for the example as written."""
    example: Example


@dataclass(frozen=True)
class Outcome:
    """A case and what the detector said."""

    case: Case
    decision: GuardDecision
    ok: bool


def _steps(example: Example) -> list[Mapping[str, Any]]:
    if isinstance(example, str):
        return [{"tool": "bash", "arguments": {"command": example}, "harness": "pi"}]
    if "steps" in example:
        return [s for step in example["steps"] for s in _steps(step)]
    return [example]


def run_example(bundle: Bundle, example: Example) -> GuardDecision:
    """Decision on the last call of ``example`` in a fresh rollout on the example profile."""
    detector = RuleDetector(Profile.model_validate(bundle.example_profile), bundle)
    decision: GuardDecision | None = None
    for step in _steps(example):
        args = step.get("arguments", {})
        decision = detector.check(str(step.get("tool", "")), args, str(step.get("harness", "")))
    assert decision is not None
    return decision


def cases(bundle: Bundle, obfuscate: bool = True) -> Iterator[Case]:
    """Every example, plus every obfuscated form of each shell attack."""
    for rule in bundle.rules:
        for attack in rule.attacks:
            yield Case(rule, "attack", "plain", attack)
            if obfuscate and isinstance(attack, str):
                for form, text in variants(attack).items():
                    yield Case(rule, "attack", form, text)
        for near in rule.near_misses:
            yield Case(rule, "near_miss", "plain", near)


def judge(case: Case, decision: GuardDecision) -> bool:
    """True when the decision is what the case requires."""
    hit = case.rule.id == decision.rule or case.rule.id in decision.also
    if case.kind == "attack":
        wanted = "block" if case.rule.severity == "block" else "flag"
        return hit and (decision.decision == "block" or wanted == "flag")
    return decision.decision != "block" and not hit


def run_cases(bundle: Bundle, obfuscate: bool = True) -> list[Outcome]:
    """Run every case; outcomes in bundle order."""
    out: list[Outcome] = []
    for case in cases(bundle, obfuscate):
        decision = run_example(bundle, case.example)
        out.append(Outcome(case, decision, judge(case, decision)))
    return out
