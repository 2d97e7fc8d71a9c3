"""Follow-up questions whose subject is the previous turn, from the read of 50 random drops of
``../shared/corpus`` in session 30 (two wrong reasons, no wrong drop): each real text beside
the precision cases it must not break.

- "so now, when hosted on render.com, its likely /dev/urandom?" (apanloco/random, after "hos
  is the random number generated seeded?") was ``conversation`` "the answer states no fact
  grounded"; its subject is the previous turn's random number generator.
- "any other such pathing issues possibly?" (pi-mono before-compaction, after a path fix) was
  ``no_deliverable``; "such" points back at the fix.
"""

from __future__ import annotations

import pytest

from .events import Script
from .test_triage_misreads import families, reasons, run

PAGE = "<script>\nconst n = crypto.getRandomValues(new Uint32Array(1))[0] % 100;\n</script>\n"
SEEDED = "hos is the random number generated seeded?"
ANSWER = "No. `crypto.getRandomValues()` in index.html reads the OS's CSPRNG; nothing seeds it."


def _after_a_question(follow_up: str, answer: str) -> Script:
    s = Script().user(SEEDED).read("index.html", PAGE).say(ANSWER)
    return s.user(follow_up).say(answer)


def test_a_question_whose_subject_is_a_pronoun_for_the_previous_turn_is_a_follow_up() -> None:
    answer = "It runs in the browser: `crypto.getRandomValues()` uses the visitor's device."
    found = run(
        _after_a_question("so now, when hosted on render.com, its likely /dev/urandom?", answer)
    )
    assert families(found) == ["qa"] and reasons(found) == ["not_self_contained"]
    assert found.drops[0].detail == (
        "a follow-up question whose subject ('its') is the previous turn"
    )


@pytest.mark.parametrize(
    "question",
    [
        "is it possible to seed crypto.getRandomValues() in index.html?",  # the expletive "it"
        "where does index.html call crypto.getRandomValues()?",
        "which function in index.html picks the number?",
    ],
)
def test_a_later_question_that_names_its_own_subject_stands(question: str) -> None:
    answer = "In the inline `<script>` of index.html: `crypto.getRandomValues()`."
    found = run(_after_a_question(question, answer))
    assert "not_self_contained" not in reasons(found), found.drops


PATHS = "export const themes = join(__dirname, 'theme');\n"


def _after_a_fix(follow_up: str) -> Script:
    s = Script().user(
        "the theme folder is resolved against cwd in config.ts, fix it to use the package dir"
    )
    s.read("config.ts", PATHS).edit("config.ts", "__dirname", "packageDir()").say("Fixed.")
    return s.user(follow_up).shell("grep -rn __dirname src", 0, "").say("No others.")


@pytest.mark.parametrize(
    ("follow_up", "pointer"),
    [
        ("any other such pathing issues possibly?", "such"),
        ("are there more of those?", "those"),
    ],
)
def test_such_points_back_in_a_short_later_turn(follow_up: str, pointer: str) -> None:
    found = run(_after_a_fix(follow_up))
    assert reasons(found) == ["not_self_contained"]
    assert found.drops[0].detail == f"refers back ({pointer!r}) without naming what"


@pytest.mark.parametrize(
    "follow_up",
    [
        "add resolvers such as themesDir() and agentDir() to config.ts",
        "config.ts says no such file or directory for the theme folder, can you fix the lookup?",
    ],
)
def test_such_as_and_no_such_do_not_point_back(follow_up: str) -> None:
    found = run(_after_a_fix(follow_up))
    assert not any("such" in d.detail for d in found.drops), found.drops
