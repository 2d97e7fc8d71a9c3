"""A yes/no question answered by a denial, from other people's data.

``corpus/real/claude/apanloco__random`` asks "hos is the random number generated seeded?" and the
answer opens "`crypto.getRandomValues()` (which we're using) isn't seeded like a traditional
PRNG". Its "no" is the denial: the key stores it (``Fact.denies``), so the checker accepts the
recorded answer, which never says "No". Before, the key's "no" asked for a leading "No", the
checker rejected the session's own answer, and the misspelled-name control
(``crypto.getRandomValues(X``) still read as the name: two ``answer_misjudged`` findings.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.validate.conftest import real_qa_task, validated_qa_task
from trajforge.records import AnswerKey, Fact
from trajforge.verifiers.answer_facts import check_key
from trajforge.verifiers.validate.qa_key import wrong_answers

REAL = Path(__file__).parents[3] / "shared" / "corpus" / "real" / "claude" / "apanloco__random"
NAME = Fact(kind="identifier", value="crypto.getRandomValues()", grounded_in="file:index.html")
DENIED = Fact(kind="polarity", value="no", grounded_in=NAME.value, denies="seeded")
KEY = AnswerKey(required=(DENIED, NAME), focus=("polarity",))


@pytest.mark.parametrize(
    ("answer", "passes"),
    [
        ("`crypto.getRandomValues()` isn't seeded like a PRNG: it reads the OS pool.", True),
        ("No. crypto.getRandomValues() draws from the OS entropy pool.", True),
        ("It is not really seeded by us; crypto.getRandomValues() does it.", True),
        ("Yes, crypto.getRandomValues() is seeded, just not by us.", False),
        ("crypto.getRandomValues() is seeded from the OS. It is not a PRNG you seed.", False),
        ("`crypto.getRandomValues()` isn't seeded.", True),
        ("It isn't seeded: Math.random() is used.", False),
    ],
)
def test_a_denied_no_is_stated_by_the_same_denial_or_a_leading_no(
    answer: str, passes: bool
) -> None:
    assert check_key(KEY, answer).passed is passes, check_key(KEY, answer).reason


def test_a_misspelled_name_is_another_name_to_the_checker() -> None:
    wrong = {c.control.value: text for c, text in wrong_answers(KEY, "seeded?").items()}
    assert wrong["name"] == "No; `crypto.getRandomValueX()`"
    assert not check_key(KEY, wrong["name"]).passed


def test_the_real_denial_is_accepted_and_every_control_behaves(tmp_path: Path) -> None:
    task = real_qa_task(REAL, tmp_path / "out")
    assert task.instruction == "hos is the random number generated seeded?"
    assert task.answer_key is not None
    assert [(f.kind, f.value, f.denies) for f in task.answer_key.required] == [
        ("polarity", "no", "seeded"),
        ("identifier", "crypto.getRandomValues()", None),
    ]
    v = validated_qa_task(tmp_path / "out").validation
    assert v.status == "accepted", v.reasons
    assert v.controls["oracle"].result == "pass" and v.controls["polarity:0"].result == "fail"
    assert v.controls["name:1"].result == "fail" and v.controls["guess:no"].result == "fail"
