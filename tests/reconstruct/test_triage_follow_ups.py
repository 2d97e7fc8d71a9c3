"""Follow-up questions whose subject is the previous turn, from the read of 50 random drops of
``../shared/corpus`` in session 30 (two wrong reasons, no wrong drop): each real text beside
the precision cases it must not break.

- "so now, when hosted on render.com, its likely /dev/urandom?" (apanloco/random, after "hos
  is the random number generated seeded?") was ``conversation`` "the answer states no fact
  grounded"; its subject is the previous turn's random number generator.
- "any other such pathing issues possibly?" (pi-mono before-compaction, after a path fix) was
  ``no_deliverable``; "such" points back at the fix.

The one drop the read found unclear is here too: a request for a plan, a reply the person
stopped, and the reply that led to the work were three drops and are one build task.
"""

from __future__ import annotations

import pytest

from trajforge.reconstruct.families import candidates
from trajforge.reconstruct.replay import replay
from trajforge.records import CutOff

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


# --- a reply to a plan that the person stopped, then the reply that led to the work -------

PLAN = (
    "Proposed schema, in `schemas/core/v1/product.proto`:\n\n```proto\nmessage Product {\n"
    "  string id = 1;\n  string locator = 2;\n}\n```\n\n" + "Each message keeps an id field. " * 12
)


def _planned(reply: str) -> Script:
    s = Script().user("Help me design a protobuf schema for products, saved in schemas/")
    s.read("docs/design.md", "# products\n").say(PLAN)
    return s.user(reply).read("docs/design.md", "# products\n")


def test_a_reply_to_a_plan_stopped_before_it_did_anything_stays_in_the_talk_about_it() -> None:
    """dark-factory (opencode): the design request (a plan, no change), "Can we not use id fields
    and instead use the locator as the key?" (aborted), then "nvm - well use ID - … and then go
    ahead write it out": the request was no_deliverable, the question harness_error and the work
    not_self_contained; the three are one build task."""
    s = _planned("Can we not use id fields and instead use the locator as the key?")
    cut = CutOff(after=len(s.events) - 1, failure="MessageAbortedError: The operation was aborted.")
    s.user("nvm - well use ID - a hash of the locator. and then go ahead write it out")
    s.write("schemas/core/v1/product.proto", 'syntax = "proto3";\nmessage Product {}\n')
    found = candidates(s.events, replay(s.events, "/w"), [cut])
    assert families(found) == ["build"] and not found.drops, found.drops
    said = found.candidates[0].instruction
    assert said.startswith("Help me design a protobuf schema") and "message Product" in said
    assert "Can we not use id fields" in said and said.endswith("go ahead write it out")


def test_a_request_of_its_own_after_the_stopped_reply_is_not_joined() -> None:
    s = _planned("Can we not use id fields and instead use the locator as the key?")
    cut = CutOff(after=len(s.events) - 1, failure="Request was aborted")
    s.user("Add a sub(a, b) function to calc.py").read(
        "calc.py", "def add(a, b):\n    return a + b\n"
    )
    s.edit("calc.py", "return a + b\n", "return a + b\n\n\ndef sub(a, b):\n    return a - b\n")
    found = candidates(s.events, replay(s.events, "/w"), [cut])
    assert families(found) == ["extend"]
    assert found.candidates[0].instruction == "Add a sub(a, b) function to calc.py"
    assert len(found.drops) == 1  # the plan and the stopped reply: one thread, no task
