"""The answer checker: valid alternative forms pass; wrong, empty and shotgun answers fail."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from trajforge.verifiers.answer import (
    AnswerCheck,
    check_answer,
    extract_answer,
    perturbed_answers,
    reproduces,
)

PASS = [
    # numbers: formatting, currency, units, separators, tolerance, rounding
    ("136.5", "136.50"),
    ("136.5", "$136.5"),
    ("136.5", "136.5 USD"),
    ("$136.50", "136.5 dollars"),
    ("136.5 USD", "$136.50"),
    ("1234.5", "1,234.5"),
    ("1,234.5", "1234.50"),
    ("42", "42.0"),
    ("-5", "−5"),
    ("0.333333", "0.33333"),
    ("136.4567", "136.46"),
    ("136.46", "136.4567"),
    ("3.06", "3.0567"),
    ("136.5", "~136.5"),
    ("1e6", "1000000"),
    # percentages: 12% and 0.12 are the same only because the unit says so
    ("12%", "12%"),
    ("12%", "12 percent"),
    ("12%", "0.12"),
    ("12%", "12"),
    ("0.12", "12%"),
    ("8.3%", "8.3 %"),
    ("8.3%", "8.33"),
    ("8.3%", "0.0833"),
    ("0.0833", "8.33%"),
    # sentences containing the value
    ("136.5", "The total is $136.50."),
    ("136.5", "In 2023, the total was $136.50."),
    ("136.5", "**136.5**"),
    ("136.5", "The answer is `136.5`."),
    ("136.5", "Total revenue: 136.5 USD"),
    ("136.5", "Answer: 136.5"),
    ("136.5", "\\boxed{136.5}"),
    ("42", "There are 42 refunded orders."),
    ("136.5", "The total is 136.50, which is 12% more than in 2022."),
    ("136.5", "I summed the column. The total is 136.50. This is based on 42 orders."),
    # the expected answer itself may be a sentence from the session
    ("The total is 136.50.", "136.5"),
    ("The average order value is $136.50, computed over 1,234 orders.", "136.5"),
    ("**Answer:** 42", "42"),
    # names: case, whitespace, sentences
    ("Alice Smith", "alice  smith"),
    ("Alice Smith", "ALICE SMITH."),
    ("Alice Smith", "The top customer is Alice Smith."),
    ("Alice Smith", "Alice Smith placed the most orders."),
    ("Electronics", '"electronics"'),
    ("DE", "The country is DE."),
    ("C-102", "The customer is C-102."),
    ("web", "The web channel has the highest total."),
    # dates in any common form
    ("2024-03-01", "March 1, 2024"),
    ("2024-03-01", "1 March 2024"),
    ("2024-03-01", "2024/03/01"),
    ("2023-07", "July 2023"),
    ("2023-07", "The busiest month was 2023-07."),
    # yes / no
    ("yes", "Yes"),
    ("true", "yes"),
    # lists: sets unless the expected is numbered (ranked)
    ("Alice, Bob, Carol", "Carol, Alice and Bob"),
    ("Alice, Bob, Carol", "- Bob\n- Carol\n- Alice"),
    ("1. Alice\n2. Bob\n3. Carol", "Alice, Bob, Carol"),
    ("1. Alice\n2. Bob\n3. Carol", "1) Alice\n2) Bob\n3) Carol"),
    ("1. Alice\n2. Bob", "The top 2 customers are Alice and Bob."),
    ("10, 20, 30", "30, 10, 20"),
    ("1. 136.5\n2. 99", "136.50, 99.0"),
    ("Portland, OR", "Portland, OR"),
]

FAIL = [
    # wrong values
    ("136.5", "137"),
    ("136.5", "136.4"),
    ("136.5", "The total is $137."),
    ("42", "42.4"),
    ("42", "43"),
    ("1234567", "1234568"),
    ("-5", "5"),
    ("0.12", "12"),
    ("12", "0.12"),
    ("8.3%", "0.09"),
    ("0.0312", "0.0"),
    ("136.5", "no idea"),
    # unit mismatches
    ("$136.5", "€136.5"),
    ("$136.5", "136.5%"),
    ("12%", "12 USD"),
    # empty answers
    ("136.5", ""),
    ("136.5", "   \n "),
    ("136.5", "``"),
    # shotgun answers: several candidate numbers including the right one
    ("136.5", "136.5, 137, 138"),
    ("136.5", "It is either 136.5 or 137."),
    ("136.5", "136.5\n137"),
    ("136.5", "Candidates: 136.5, 140"),
    ("136.5", "136.5 (or about 137)"),
    ("136.5", "136.5-137"),
    ("136.5", "between 136 and 137"),
    ("136.5", "136.5 / 136.6 / 136.7"),
    ("136.5", "The answer is 136.5, but it could also be 137."),
    ("136.5", "137... no wait, 136.5"),
    ("136.5", "Probably 136.5; possibly 140 if refunds count."),
    # names
    ("Alice Smith", "Bob Jones"),
    ("Alice Smith", "Alice Smith or Bob Jones"),
    ("Alice Smith", "It is not Alice Smith."),
    ("Alice Smith", "Alice, Bob, Alice Smith, Carol"),
    ("Alice Smith", "The top customer is Bob Jones; Alice Smith is second."),
    ("Alice Smith", "It is Alice Smith, but it could also be Bob Jones."),
    ("DE", "FR, not DE"),
    # dates
    ("2024-03-01", "2024-03-02"),
    ("2024-03-01", "2024-03-01 or 2024-03-02"),
    ("2023-07", "2023-08"),
    # yes / no
    ("yes", "no"),
    # lists
    ("1. Alice\n2. Bob\n3. Carol", "Bob, Alice, Carol"),
    ("1. Alice\n2. Bob\n3. Carol", "1. Alice\n2. Bob"),
    ("Alice, Bob, Carol", "Alice, Bob"),
    ("Alice, Bob, Carol", "Alice, Bob, Carol, Dave"),
    ("Alice, Bob, Carol", "Alice, Bob, Dave"),
    ("10, 20, 30", "10, 20, 31"),
]


@pytest.mark.parametrize(("expected", "given"), PASS)
def test_alternative_forms_pass(expected: str, given: str) -> None:
    result = check_answer(expected, given)
    assert result.passed, result.reason
    assert result.given == given


@pytest.mark.parametrize(("expected", "given"), FAIL)
def test_wrong_empty_and_shotgun_answers_fail(expected: str, given: str) -> None:
    result = check_answer(expected, given)
    assert not result.passed, result.reason
    assert result.reason


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("The total is 136.50.", "136.50"),
        ("The total is $136.50.", "$136.50"),
        ("136.50", "136.50"),
        ("Alice Smith", "Alice Smith"),
        ("**Total revenue:** $136.50", "$136.50"),
        ("Final answer: 17", "17"),
        ("There are 42 orders from Germany.", "42"),
        ("The total is 136.50, which is 12% higher than 2022.", "136.50"),
        ("The share is 12.5%.", "12.5%"),
        ("The top customer is Alice Smith, with 17 orders.", "Alice Smith"),
        (
            "Top 3:\n1. Alice (500)\n2. Bob (400)\n3. Carol (300)\nDone.",
            "1. Alice\n2. Bob\n3. Carol",
        ),
        ("- Alice\n- Bob", "Alice\nBob"),
        ("The busiest day was 2024-03-01.", "2024-03-01"),
        ("", ""),
        ("   ", ""),
    ],
)
def test_extract_answer(text: str, value: str) -> None:
    assert extract_answer(text) == value


def test_extract_is_idempotent_on_values() -> None:
    for value in ("136.50", "$1,234.5", "12%", "1. Alice\n2. Bob", "Alice Smith", "2023-07"):
        assert extract_answer(extract_answer(value)) == extract_answer(value) == value


def test_reasons_say_what_was_compared() -> None:
    ok = check_answer("136.50", "136.5")
    assert ok.reason == "number 136.5 matches 136.50 within tolerance"
    bad = check_answer("136.5", "137")
    assert bad.reason == "expected 136.5, got 137"
    assert "several candidate numbers" in check_answer("136.5", "136.5 or 137").reason
    assert check_answer("136.5", "").reason == "empty answer"
    assert "order matters" in check_answer("1. a\n2. b", "b, a").reason


def test_aliases_name_other_spellings() -> None:
    assert not check_answer("United States", "USA").passed
    result = check_answer("United States", "The country is USA.", aliases=("USA", "US"))
    assert result.passed and "alias" in result.reason
    assert not check_answer("United States", "Canada", aliases=("USA",)).passed


def test_tolerance_is_configurable() -> None:
    assert not check_answer("100.5", "100.9").passed
    assert check_answer("100.5", "100.9", rel_tol=0.01).passed
    assert check_answer("100", "101", abs_tol=1.0).passed
    assert not check_answer("100", "102", abs_tol=1.0).passed


def test_overlong_answers_fail_fast() -> None:
    table = "\n".join(f"row {i}: total is {i * 1.5:.2f}" for i in range(5000))
    result = check_answer("136.5", table)
    assert not result.passed and "too long" in result.reason
    assert reproduces("136.5", table)  # command output may be long; it holds the value


def test_empty_expected_never_passes() -> None:
    assert not check_answer("", "anything").passed
    assert not check_answer("  ", "").passed


def test_answer_check_is_a_frozen_record() -> None:
    result = check_answer("1", "1")
    with pytest.raises(ValidationError):
        AnswerCheck(passed=True, reason="r", expected="1", given="1", extra="x")  # type: ignore[call-arg]
    with pytest.raises(ValidationError):
        result.passed = False  # type: ignore[misc]


@pytest.mark.parametrize(
    "expected",
    [
        "136.50",
        "$1,234.5",
        "12%",
        "7",
        "0",
        "-3.25",
        "1234567",
        "1. Alice\n2. Bob\n3. Carol",
        "Alice, Bob",
        "Alice Smith",
        "DE",
        "2024-03-01",
        "2023-07",
        "yes",
        "The total is 136.50.",
    ],
)
def test_perturbed_answers_are_near_misses_that_fail(expected: str) -> None:
    wrong = perturbed_answers(expected, seed=7)
    assert wrong, expected
    assert wrong == perturbed_answers(expected, seed=7)  # deterministic
    for answer in wrong:
        result = check_answer(expected, answer)
        assert not result.passed, (answer, result.reason)


def test_perturbed_answers_cover_the_issue_kinds() -> None:
    numbers = perturbed_answers("136.50", seed=1)
    assert {"137.87", "135.13", "137.50", "135.50"} <= set(numbers)  # ±1 %, ±1
    assert len(numbers) == 5  # and one digit off
    ranked = perturbed_answers("1. a\n2. b\n3. c", seed=1)
    assert {"1. b\n2. a\n3. c", "1. a\n2. c\n3. b"} & set(ranked)  # two neighbours swapped
    assert all(line.split(". ")[1] for r in ranked for line in r.split("\n"))  # no blank items
    assert perturbed_answers("", seed=1) == []


@pytest.mark.parametrize(
    ("answer", "output", "expected"),
    [
        ("136.5", "136.5\n", True),
        ("136.5", "shape: (1, 1)\n┌───────┐\n│ total │\n╞═══════╡\n│ 136.5 │\n└───────┘", True),
        ("136.5", "rows: 42\ntotal: 136.50\nmean: 3.2", True),
        ("136.5", "137", False),
        ("136.5", "", False),
        ("Alice Smith", "name\nBob Jones\nAlice Smith\n", True),
        ("Alice Smith", "Alice Smithson", False),
        ("1. A\n2. B", "A 10\nB 5\n", True),
        ("1. A\n2. B", "B 10\nA 5\n", False),
        ("2024-03-01", "day\n2024-03-01\n", True),
    ],
)
def test_reproduces_finds_the_value_in_command_output(
    answer: str, output: str, expected: bool
) -> None:
    assert reproduces(answer, output) is expected
