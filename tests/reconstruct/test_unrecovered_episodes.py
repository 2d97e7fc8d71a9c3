"""A kept episode whose change cannot be recovered is a drop with a closed reason, not lost.

Before, an episode that mutated the workspace but left no file known to differ made neither a
candidate nor a drop row: the session's summary could not say where it went. Three shapes from
pi-mono's ``before-compaction.jsonl`` and ``large-session.jsonl``: only commands whose effect
replay cannot follow (``npx tsx -e …``), an edit of a file known only from a ranged read, and
edits undone before the episode ended.
"""

from __future__ import annotations

from tests.reconstruct.events import Script
from tests.reconstruct.test_triage_misreads import reasons, run

REQUEST = "the theme selector needs to push the theme update to the next tick, fix it please"
CODE = "export const tick = () => setTimeout(update, 0);\n"


def test_only_commands_of_unrecorded_effect_are_no_deliverable() -> None:
    s = Script().user(REQUEST).read("src/theme.ts", CODE)
    s.shell("npx tsx -e \"import('./src/theme.ts')\"", 0, "ok")
    found = run(s.say("It already defers the update."))
    assert reasons(found) == ["no_deliverable"] and not found.candidates
    assert "its commands may have, none is recorded (`npx tsx -e" in found.drops[0].detail
    assert not found.drops[0].detail.endswith("before the assistant answered")
    # pi-mono's "any other such pathing issues possibly?": a compaction cut it after a command
    s = Script().user(REQUEST).read("src/theme.ts", CODE).say("Let me check it runs:")
    found = run(s.shell("npx tsx -e \"import('./src/theme.ts')\"", 1, "CJS error"))
    assert found.drops[0].detail.endswith("; it ends before the assistant answered")


def test_an_edit_of_a_file_known_in_part_is_workspace_incomplete() -> None:
    s = Script().user(REQUEST).read("src/tui-renderer.ts", CODE, partial=True)
    s.edit("src/tui-renderer.ts", "setTimeout(update, 0)", "queueMicrotask(update)")
    found = run(s.say("Done: the update now runs on the next tick."))
    assert reasons(found) == ["workspace_incomplete"] and not found.candidates
    assert "known only in part (src/tui-renderer.ts)" in found.drops[0].detail


def test_edits_undone_in_the_episode_are_no_deliverable() -> None:
    s = Script().user(REQUEST).read("src/theme.ts", CODE)
    s.edit("src/theme.ts", "setTimeout(update, 0)", "queueMicrotask(update)")
    s.edit("src/theme.ts", "queueMicrotask(update)", "setTimeout(update, 0)")
    found = run(s.say("Reverted: the original was right."))
    assert reasons(found) == ["no_deliverable"] and not found.candidates
    assert "leave every file they touched as it was (src/theme.ts" in found.drops[0].detail
