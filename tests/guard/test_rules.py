"""Every rule's attacks (and their obfuscated forms) trigger it; every near miss passes."""

from __future__ import annotations

from pathlib import Path

import pytest

from trajforge.errors import RecordError
from trajforge.guard.engine import bundle_at
from trajforge.guard.examples import cases, judge, run_example
from trajforge.guard.obfuscate import FORMS
from trajforge.guard.rules import load_bundle

BUNDLE = bundle_at()


def test_every_rule_has_a_rationale_and_examples() -> None:
    ids = [r.id for r in BUNDLE.rules]
    assert len(ids) == len(set(ids)), "rule ids must be unique"
    for rule in BUNDLE.rules:
        assert rule.rationale
        if rule.special != "integrity":  # integrity is checked on the workspace, not on calls
            assert rule.attacks and rule.near_misses, f"{rule.id}: needs attacks and near misses"


@pytest.mark.parametrize("rule", BUNDLE.rules, ids=lambda r: r.id)
def test_rule_examples(rule: object) -> None:
    failures = []
    for case in cases(BUNDLE):
        if case.rule is not rule:
            continue
        decision = run_example(BUNDLE, case.example)
        if not judge(case, decision):
            failures.append(f"{case.kind}/{case.form}: {case.example!r:.120} -> {decision}")
    assert not failures, "\n".join(failures)


def test_generator_covers_every_form() -> None:
    attack = "cat tests/hidden/test_hidden.py"
    forms = {
        c.form for c in cases(BUNDLE) if c.example != attack and c.rule.id == "tests.read-hidden"
    }
    assert set(FORMS) <= forms
    assert len(FORMS) >= 12


def test_bad_bundle_errors_name_file_rule_and_field(tmp_path: Path) -> None:
    bad = tmp_path / "b.toml"
    bad.write_text('version = "x"\n[[rules]]\nid = "a.b"\nseverity = "deny"\nrationale = "r"\n')
    with pytest.raises(RecordError, match=r"b\.toml: field 'rules\.0\(a\.b\)\.severity'"):
        load_bundle(bad)
    bad.write_text(
        'version = "x"\n[[rules]]\nid = "a.b"\nseverity = "flag"\nrationale = "r"\n'
        'effects = ["read"]\ntarget = "("\n'
    )
    with pytest.raises(RecordError, match=r"rule a\.b: bad regex"):
        load_bundle(bad)
    bad.write_text("version = ")
    with pytest.raises(RecordError, match="not valid TOML"):
        load_bundle(bad)
