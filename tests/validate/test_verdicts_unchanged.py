"""The validate redesign changes no verdict (issue 31): the fixture tasks validated here get the
status and the closed reasons they got before it.

``tests/fixtures/verdicts_before_redesign.json`` was written by validating every task the
fixture sessions give with the code as it stood before the redesign (commit ae9bc8b: control
names as strings, outcomes spelled ``passed`` / ``failed``, the report a dict), with
:func:`~tests.validate.conftest.local_context`'s settings: task id → [status, codes]. One id
was added since, with its task's old verdict: ``repair-f6875f2b7853d96e`` is
``repair-8e4a8053b1d60502`` renamed in session 23 (the Claude Code sample's request, cut off by
a rejected tool call, now joins the steer after it, which the repair's context quotes).
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.validate.conftest import tasks_of

BEFORE = Path(__file__).parents[1] / "fixtures" / "verdicts_before_redesign.json"


def test_the_validated_tasks_keep_their_ids_statuses_and_reasons(validated: Path) -> None:
    before = json.loads(BEFORE.read_text())
    now = {
        t.id: [str(t.validation.status), [str(c) for c in t.validation.codes]]
        for t in tasks_of(validated).values()
    }
    assert now and set(now) <= set(before), sorted(set(now) - set(before))
    assert now == {k: before[k] for k in now}


def test_each_validated_task_carries_its_familys_evidence(validated: Path) -> None:
    """Evidence is one record per family (issue 31): a code task's holds the check and its test
    sets, an answered task's what its answer rests on; no record carries another's fields."""
    kinds = {"qa": {"qa", "none"}, "data": {"data", "none"}}
    tasks = list(tasks_of(validated).values())
    for task in tasks:
        evidence = task.validation.evidence
        assert evidence.kind in kinds.get(task.family, {"code", "none"}), (task.id, evidence.kind)
        if task.validation.accepted and evidence.kind == "code":
            assert evidence.command and evidence.test_sets is not None, task.id
    assert {t.validation.evidence.kind for t in tasks if t.validation.accepted} >= {"code", "qa"}
