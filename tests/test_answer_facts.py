"""The fact checker of reconstructed qa tasks: paraphrases pass, wrong values fail."""

from __future__ import annotations

import pytest

from trajforge.reconstruct.facts import Grounds, answer_key
from trajforge.verifiers.answer_facts import MAX_NAMES, check_key

SETTINGS = "import os\n\nMAX_WORKERS = 8\nTIMEOUT = 30\n"
POOL = (
    "from pool.settings import MAX_WORKERS\n\n\nclass Pool:\n"
    "    def __init__(self, workers=None):\n"
    "        self.workers = MAX_WORKERS if workers is None else workers\n"
)
FILES = {"pool/settings.py": SETTINGS, "pool/pool.py": POOL}
QUESTION = "How many worker threads does the pool start by default, and which setting controls it?"
ANSWER = (
    "It starts 8 workers by default, from MAX_WORKERS in pool/settings.py "
    "(used when workers is None)."
)


@pytest.fixture(scope="module")
def key():  # type: ignore[no-untyped-def]
    made = answer_key(QUESTION, ANSWER, Grounds(FILES, {}))
    assert made is not None
    return made


def test_the_key_is_the_facts_the_question_asks_for(key) -> None:  # type: ignore[no-untyped-def]
    assert [(f.kind, f.value) for f in key.required] == [
        ("number", "8"),
        ("identifier", "MAX_WORKERS"),
    ]
    assert ("path", "pool/settings.py") in [(f.kind, f.value) for f in key.others]


@pytest.mark.parametrize(
    "given",
    [
        ANSWER,
        "8 — MAX_WORKERS in pool/settings.py",
        "eight workers by default (MAX_WORKERS)",
        "The default is 8, set by `max_workers`... I mean `MAX_WORKERS`.",
        "**8** (`MAX_WORKERS`)",
    ],
)
def test_paraphrases_pass(key, given: str) -> None:  # type: ignore[no-untyped-def]
    check = check_key(key, given)
    assert check.passed, check.reason


@pytest.mark.parametrize(
    ("given", "why"),
    [
        ("4 workers, from MAX_WORKERS", "expected the number 8"),
        ("30 (TIMEOUT)", "expected the number 8"),
        ("4 or 8 workers (MAX_WORKERS)", "alternatives"),
        ("8 workers, not MAX_WORKERS but TIMEOUT", "negated"),
        ("MAX_WORKERS", "expected the number 8"),
        ("", "empty"),
        (QUESTION, "expected the number 8"),
        ("It could be 8 or maybe 16 (MAX_WORKERS)", "alternatives"),
    ],
)
def test_wrong_answers_fail(key, given: str, why: str) -> None:  # type: ignore[no-untyped-def]
    check = check_key(key, given)
    assert not check.passed and why in check.reason, check.reason


def test_a_number_computed_by_a_command_is_grounded_by_value() -> None:
    made = answer_key(
        "What is the total of the amount column in sales.csv?",
        "The total of the amount column is 136.50.",
        Grounds({"sales.csv": "day,amount\nmon,12.50\n"}, {"python3 sum.py": "136.5\n"}),
    )
    assert made is not None
    assert [(f.value, f.grounded_in) for f in made.required] == [
        ("136.50", "output:python3 sum.py")
    ]
    assert check_key(made, "136.5").passed and not check_key(made, "137").passed


def test_a_yes_no_question_needs_its_polarity_and_evidence() -> None:
    files = {"run.sh": "NUM_REPEATS=${NUM_REPEATS:-1}\npython grpo.py\npython async_grpo.py\n"}
    made = answer_key(
        "run.sh will run both grpo.py and async_grpo.py?",
        "Yes. It runs both in turn; `NUM_REPEATS` (default 1) says how often.",
        Grounds(files, {}),
    )
    assert made is not None
    assert [(f.kind, f.value) for f in made.required] == [
        ("polarity", "yes"),
        ("identifier", "NUM_REPEATS"),
    ]
    assert check_key(made, "Yes — NUM_REPEATS times, default once.").passed
    assert not check_key(made, "Yes.").passed  # a coin flip is not an answer
    assert not check_key(made, "No, only grpo.py (NUM_REPEATS).").passed


def test_facts_the_question_already_states_are_not_the_answer() -> None:
    made = answer_key(
        "Does pool.py import MAX_WORKERS?", "Yes, pool.py imports MAX_WORKERS.", Grounds(FILES, {})
    )
    assert made is None  # nothing but the question's own words: no key


def test_an_ungrounded_answer_has_no_key() -> None:
    made = answer_key(QUESTION, "It starts 16 workers, from POOL_SIZE.", Grounds(FILES, {}))
    assert made is None


def test_a_list_of_names_to_pick_from_is_not_an_answer(key) -> None:  # type: ignore[no-untyped-def]
    """The cheapest wrong answer to a name question: every name of the workspace, listed."""
    others = [f"OTHER_SETTING_{n}" for n in range(MAX_NAMES)]
    shotgun = "8 workers, from one of: " + ", ".join(["MAX_WORKERS", *others])
    check = check_key(key, shotgun)
    assert not check.passed and f"more than {MAX_NAMES}" in check.reason
    fewer = "8 workers, from one of: " + ", ".join(["MAX_WORKERS", *others[: MAX_NAMES - 1]])
    assert check_key(key, fewer).passed  # at the cap, the list is still read as an answer
    (number,) = [f for f in key.required if f.kind == "number"]
    only_number = key.model_copy(update={"required": (number,)})
    assert check_key(only_number, shotgun).passed  # names are not what a number key asks
