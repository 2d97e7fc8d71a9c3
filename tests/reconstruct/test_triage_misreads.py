"""Classes of text and work triage used to misread, each with a real-shaped example.

Quoted requests are from ../shared/corpus where it holds one (the LICENSE and AGENTS.md
requests, pi-mono's commands); the rest are written the way real dumps write them (a hermes
gateway's speaker tag, a pasted spec, a Norwegian or Chinese request, an npm scope). Each is
kept or dropped as it should be, next to the precision case it must not break.
"""

from __future__ import annotations

import pytest

from trajforge.reconstruct.changed_files import is_source
from trajforge.reconstruct.families import Found, candidates
from trajforge.reconstruct.replay import replay
from trajforge.reconstruct.triage import clean, is_ack
from trajforge.records import CutOff

from .events import Script

CALC = "def add(a, b):\n    return a + b\n"
SUB = "return a + b\n\n\ndef sub(a, b):\n    return a - b\n"


def run(s: Script, root: str = "/w") -> Found:
    return candidates(s.events, replay(s.events, root))


def reasons(found: Found) -> list[str]:
    return [d.reason.value for d in found.drops]


def families(found: Found) -> list[str]:
    return [c.family for c in found.candidates]


def coding(request: str) -> Script:
    s = Script().user(request).read("calc.py", CALC).edit("calc.py", "return a + b\n", SUB)
    return s.shell("python3 -m pytest -q", 0, "1 passed")


# --- 1. docs/config-only episodes are not coding tasks ----------------------------------


@pytest.mark.parametrize(
    ("request_text", "path", "content"),
    [
        ("oh, can you make a LICENSE file with the MIT license?", "LICENSE", "MIT License\n"),
        ("Please analyze this codebase and create an AGENTS.md file containing:\n1. Build/lint/"
         "test commands - especially for running a single test\n2. Code style guidelines "
         "including imports, formatting, types, naming conventions, error handling, etc.",
         "AGENTS.md", "# AGENTS.md\n"),
        ("Bump the package to 0.9.0 and pin vitest to 3.2.4", "package.json", '{"version": 1}'),
        ("Setup a Git Ignore for Rust + NodeJS / BunJS", ".gitignore", "target/\nnode_modules/\n"),
    ],
)  # fmt: skip
def test_docs_and_config_only_is_not_a_coding_task(
    request_text: str, path: str, content: str
) -> None:
    s = Script().user(request_text).read("src/app.ts", "export const a = 1\n")
    found = run(s.write(path, content).say("Created."))
    assert found.candidates == [] and reasons(found) == ["docs_only"]
    assert path in found.drops[0].detail


def test_editing_agents_md_is_docs_only_but_code_beside_it_is_not() -> None:
    agents = "# Agents\n\n## Build\nnpm run build\n\n## Style\nUse tabs.\n"
    s = Script().user(
        "Remove build + test info from AGENTS.md for now until we have those systems in place "
        "and validated. Simpler minimal AGENTs.md rn with just the context that exists."
    )
    s.read("AGENTS.md", agents).edit("AGENTS.md", "## Build\nnpm run build\n\n", "")
    assert reasons(run(s.say("Trimmed."))) == ["docs_only"]
    s = coding("Add sub(a, b) to calc.py and document it in README.md")
    found = run(s.write("README.md", "# calc\n\n`sub(a, b)`\n").say("Done."))
    assert families(found) == ["extend"]


@pytest.mark.parametrize(
    ("path", "source"),
    [
        ("vite.config.ts", True), ("Makefile", True), ("Dockerfile", True),
        ("docker/api.dockerfile", True), ("CMakeLists.txt", True), ("scripts/release.sh", True),
        ("core/src/index.ts", True), ("README.md", False), ("docs/guide.mdx", False),
        ("LICENSE-MIT", False), ("pnpm-lock.yaml", False), ("Cargo.lock", False),
        (".env.example", False), (".github/workflows/ci.yml", False), ("tsconfig.json", False),
        ("pyproject.toml", False), ("requirements.txt", False), ("assets/icon.png", False),
    ],
)  # fmt: skip
def test_config_that_is_code_counts_as_source(path: str, source: bool) -> None:
    assert is_source(path) is source


def test_a_qa_episode_is_not_docs_only() -> None:
    s = Script().user("Which license does this project use, per the LICENSE file?")
    s.read("LICENSE", "MIT License\n\nCopyright (c) 2025 Ada\n")
    found = run(s.say("MIT, per `LICENSE` (Copyright (c) 2025 Ada)."))
    assert "docs_only" not in reasons(found)


# --- 2. quoted and speaker-tagged requests -----------------------------------------------

SPEC = (
    "> Pick up item 5 first. Add a narrow retry demo in demo/retry.ts, isolated from the\n"
    "> queue worker, so we can see the backoff without starting the whole app.\n"
    "> Do not change the public API of src/queue.ts."
)


def test_a_blockquoted_spec_is_the_persons_request() -> None:
    s = Script().user(SPEC).read("src/queue.ts", "export const retries = 3\n")
    found = run(s.write("demo/retry.ts", "import { retries } from '../src/queue'\n").say("Added."))
    assert families(found) == ["build"], found.drops  # was: too short (0 word(s))


def test_echoed_commands_behind_a_quote_mark_are_still_pasted_output() -> None:
    npm = "> @mariozechner/pi-tui@0.14.2 check\n> biome check --write . && tsgo --noEmit\nfix"
    s = coding("Add sub(a, b) to calc.py").say("Added.").user(npm)
    s.edit("calc.py", "a - b", "b - a").say("Fixed.")
    found = run(s)
    assert families(found) == ["extend"] and reasons(found) == ["not_self_contained"]


@pytest.mark.parametrize(
    ("raw", "text"),
    [
        ("[Mike Morgenstern] Add a --verbose flag to cli.py that prints every request",
         "Add a --verbose flag to cli.py that prints every request"),
        ("[ops-bot] [Mike] rerun the flaky test in tests/test_io.py with -x",
         "rerun the flaky test in tests/test_io.py with -x"),
        ("[Alice] hi\n[Bob] are you there?\n\n[New message]\n[Mike] add sub() to calc.py",
         "add sub() to calc.py"),
        ("[INFO] server listening on :3000", "[INFO] server listening on :3000"),
        ("[x] done with the parser", "[x] done with the parser"),
        ("[Request interrupted by user for tool use]\nno, use pnpm", ""),
    ],
)  # fmt: skip
def test_a_leading_speaker_tag_is_a_tag(raw: str, text: str) -> None:
    assert clean(raw).text == text


def test_a_gateway_request_with_a_speaker_tag_becomes_a_task() -> None:
    found = run(coding("[Mike] can you add a sub(a, b) function to calc.py?").say("Added."))
    assert families(found) == ["extend"]
    assert found.candidates[0].instruction == "can you add a sub(a, b) function to calc.py?"


# --- 3. not only Latin letters -----------------------------------------------------------


@pytest.mark.parametrize(
    "request_text",
    [
        "在 calc.py 里加一个 sub(a, b) 函数，返回 a 减 b",
        "Kan du legge til en sub(a, b)-funksjon i calc.py?",
        "calc.py に sub(a, b) 関数を追加してください",
    ],
)
def test_a_request_in_another_script_or_language_is_a_request(request_text: str) -> None:
    found = run(coding(request_text).say("Done."))
    assert families(found) == ["extend"], found.drops


def test_a_norwegian_question_mark_is_not_an_english_question() -> None:
    css = ".button { color: red; }\n"
    s = coding("Add sub(a, b) to calc.py").say("Added.")
    s.user("Kan du endre fargen på knappen til blå i styles.css?").read("styles.css", css)
    found = run(s.edit("styles.css", "red", "blue").say("Endret."))
    assert families(found) == ["extend", "extend"], found.drops


@pytest.mark.parametrize(
    "text", ["好的，继续", "继续", "はい、続けてください", "ja, fortsett", "ok 👍"]
)
def test_known_acks_in_other_languages_still_fold(text: str) -> None:
    assert is_ack(text)


@pytest.mark.parametrize(
    "text",
    ["把按钮的颜色改成蓝色", "修复登录页面的错误", "Исправь ошибку в parse.py", "endre fargen"],
)
def test_other_languages_are_not_acks_by_default(text: str) -> None:
    assert not is_ack(text)


def test_a_non_english_turn_no_longer_folds_into_the_thread_before() -> None:
    s = coding("Add sub(a, b) to calc.py").say("Added.").user("把 calc.py 里的 sub 改成 b 减 a")
    found = run(s.edit("calc.py", "a - b", "b - a").say("改好了。"))
    assert families(found) == ["extend", "extend"] and found.merged == 0


# --- 4. npm scoped names are not @file mentions -------------------------------------------


@pytest.mark.parametrize(
    "request_text",
    [
        "Replace the fetch wrapper in calc.py's client with useChat from @ai-sdk/react",
        "Use the Editor component from @mariozechner/pi-tui for the input in calc.py",
        "Add @types/node and @scope/pkg-utils to the imports in calc.py",
    ],
)
def test_a_scoped_package_is_not_an_attached_file(request_text: str) -> None:
    assert families(run(coding(request_text).say("Done."))) == ["extend"]


def test_a_missing_attached_path_still_is() -> None:
    found = run(coding("Use the logger from @core/src/logging.ts in calc.py").say("Done."))
    assert reasons(found) == ["not_self_contained"]


# --- 7. issue 30: a read of 50 random drops (/tmp/triage-read-50.md) ------------------------
# Each class below misread real text of ../shared/corpus/pi-mono or /real; the quoted requests
# are short excerpts of it, each beside a case of the same shape that must still drop.

PI = "/Users/badlogic/workspaces/pi-mono"
THEME = "packages/coding-agent/src/theme"


def later(request: str) -> Script:
    """A request after a first, kept thread (a later turn of the session)."""
    return coding("Add sub(a, b) to calc.py").say("Added.").user(request)


@pytest.mark.parametrize(
    ("request_text", "command"),
    [
        ("create a custom light theme i'll edit it in code. open it for me in code once created",
         f"cp {THEME}/light.json ~/.pi/agent/themes/custom-light.json"),
        ("delete the file", "rm ~/.pi/agent/themes/test.json"),
    ],
)  # fmt: skip
def test_a_command_that_writes_outside_the_workspace_is_live(
    request_text: str, command: str
) -> None:
    # was: not_self_contained ('it' / a short follow-up), though the theme is named in it
    s = Script().user("Add a dark.json theme").write(f"{PI}/{THEME}/dark.json", "{}").say("Ok.")
    s.user(request_text).shell(command, 0, "").say("Done!")
    found = candidates(s.events, replay(s.events, PI))
    assert reasons(found) == ["docs_only", "live_state"], found.drops
    assert "outside the workspace" in found.drops[1].detail


@pytest.mark.parametrize(
    "command",
    ["python3 -m pytest -q > /tmp/pytest-out.txt 2>&1", "cp calc.py calc_backup.py"],
)
def test_a_scratch_file_or_a_copy_in_the_workspace_is_not_live(command: str) -> None:
    found = run(coding("Add a sub(a, b) function to calc.py").shell(command, 0, "").say("Done."))
    assert families(found) == ["extend"], found.drops


DESIGN = (
    "Design a client/ in @core/ to interface / wrap the OpenCode server API "
    "@docs/external/opencode/docs__server.ext.md OR (probably better now I look at it) the "
    "https://opencode.ai/docs/sdk/"
)


def test_a_thread_that_changed_and_answered_nothing_delivered_nothing() -> None:
    # was: live_state (the webfetch it made on the way) / a missing @file; the session ended
    s = Script().user(DESIGN).read("core/src/config.ts", "export const config = {}\n")
    s.tool("webfetch", "<html>", url="https://opencode.ai/docs/sdk")
    found = run(s)
    assert [(d.reason.value, d.detail) for d in found.drops] == [
        ("no_deliverable", "no file changed and no final answer")
    ]
    # precision: with an answer, a question answered from the web page is still live
    s = Script().user("What does the opencode SDK docs page say createOpencodeClient takes?")
    s.tool("webfetch", "<html>", url="https://opencode.ai/docs/sdk")
    assert reasons(run(s.say("It takes a baseUrl."))) == ["live_state"]


@pytest.mark.parametrize(
    "request_text",
    [
        "hmmmm could we havea  file watcher (i think node has a built in one now) for the custom "
        "themes? which triggers a reload and invalidation? that way people can live edit the "
        "theme?",
        "truncated text must stop when it encounters a new line ...",
        # opens like a correction but states the whole task itself (over 25 words)
        "this isn't how truncated text should work: it must stop at the first newline, keep "
        "every ANSI code it passed, and never return a line wider than the width it was given",
        "this notebook of truncated text cases needs a new line case",  # "not" is no word here
    ],
)
def test_a_later_request_that_muses_or_names_a_file_in_words_is_kept(request_text: str) -> None:
    # was: "answers the assistant ('hmmmm'…)"; "refers back ('it') without naming what"
    s = later(request_text).read("src/truncated-text.ts", "export const cut = 1\n")
    found = run(s.edit("src/truncated-text.ts", "= 1", "= 2").say("Done."))
    assert families(found) == ["extend", "extend"], found.drops


@pytest.mark.parametrize(
    "request_text",
    [
        "hmm, no, use pnpm instead",  # corrects the assistant
        "wait, does it handle the empty case too?",
        "actually, why did you change the colors?",
        # pi-mono's large session: the agent had edited the wrong prompt; the turn names a
        # file, but what to do there is the previous turn's (a typo inside "that's" too)
        "thatÄ's not the system prompt. see main.ts",  # the assistant's last turn is not it
        "ok, this is not what i meant in src/text.ts",
        "ok, make muted a little brighter",  # names no file
        "make the text brighter",  # one word of a file name is no name
    ],
)  # fmt: skip
def test_a_correction_or_a_vague_later_turn_with_edits_joins_the_work_it_corrects(
    request_text: str,
) -> None:
    # was: dropped not_self_contained while the task before it pinned the state it corrected
    s = later(request_text).read("src/text.ts", "export const cut = 1\n")
    found = run(s.edit("src/text.ts", "= 1", "= 2").say("Done."))
    assert reasons(found) == [] and families(found) == ["extend"], found.drops
    assert found.candidates[0].instruction == f"Add sub(a, b) to calc.py\n\n{request_text}"


@pytest.mark.parametrize(
    "request_text",
    ["think then say hello", "ok write markdown, including code, tables, lists nested, etc. pp",
     "i don't tink the component invalidate works correctly. if i change the theme, not "
     "everything updates correctly, like user-message"],
)  # fmt: skip
def test_a_vague_later_turn_that_changed_nothing_is_no_deliverable(request_text: str) -> None:
    # was: not_self_contained "a short follow-up that names no file": it asked for nothing done
    found = run(later(request_text).say("Hello! 👋"))
    assert reasons(found) == ["no_deliverable"], found.drops


@pytest.mark.parametrize(
    ("request_text", "why"),
    [
        ('Notes on data shape: merge locator + id + name into a single locator key system. We '
         'will use path/url-like identifiers to do this. for example, local is "@local://{path}"',
         None),
        ("bullet in markdown should be same as in line code in markdown. link text should be same "
         "as accent in calc.py", None),
        ("i suppose the workflow would be write calc.py, use  /theme to preview, modify use "
         "/theme again to preview", None),
        ("@gitter update the docs in calc.py", "names the harness agent or tool @gitter"),
        ("do the same as before in calc.py", "joined"),  # points back ('same'): joins its work
        ("try again with calc.py", "joined"),
    ],
)  # fmt: skip
def test_words_that_only_look_like_pointers(request_text: str, why: str | None) -> None:
    # was: "@local" a harness agent; 'same' and 'again' pointing back though their subject is
    # named in the request itself
    s = later(request_text).edit("calc.py", "a - b", "b - a").say("Done.")
    found = run(s)
    if why is None:
        assert families(found) == ["extend", "extend"], found.drops
    elif why == "joined":
        assert families(found) == ["extend"] and found.drops == []
        assert found.candidates[0].instruction.endswith(f"\n\n{request_text}")
    else:
        assert reasons(found) == ["not_self_contained"] and why in found.drops[0].detail


RNG = "const pick = (n) => crypto.getRandomValues(new Uint32Array(1))[0] % n;\n"


@pytest.mark.parametrize(
    ("answer", "key"),
    [
        ("`crypto.getRandomValues()` (which we're using) isn't seeded like a traditional PRNG. "
         "It pulls directly from the OS entropy pool.", ["no", "crypto.getRandomValues()"]),
        ("It uses `crypto.getRandomValues()`, which pulls from the OS entropy pool.", None),
    ],
)  # fmt: skip
def test_a_yes_no_question_answered_by_a_denial(answer: str, key: list[str] | None) -> None:
    # was: conversation "states no fact grounded": the denial is its "no"
    s = Script().user("hos is the random number generated seeded?").read("index.html", RNG)
    found = run(s.say(answer))
    if key is None:  # precision: an answer that neither says nor denies stays dropped
        assert reasons(found) == ["conversation"]
    else:
        ((task,),) = [found.candidates]
        assert task.answer_key is not None
        assert [f.value for f in task.answer_key.required] == key


# --- replies, closing tag questions, code named in words -----------------------------------

MAPPING = (
    "no, that's horrible.\n\ntools -> core/tools\ntui -> modes/components\n"
    "config.ts, shell.ts -> utils\n\nor do you have other suggestions?"
)


def _asked_then(reply: str) -> Script:
    """pi-mono's file-move shape: a first request, then a correction that restates the
    mapping; the assistant asks before doing anything; the person replies."""
    s = coding("Add a sub(a, b) function to calc.py").say("Added sub().")
    s.user(MAPPING).say("Agreed. `tui-renderer.ts` stays, or should it move too? Should I proceed?")
    s.user(reply)
    return s.write("core/tools/a.ts", "export const a = 1;\n").say("Moved.")


def test_a_reply_to_the_assistants_question_joins_the_request_with_the_question() -> None:
    found = run(_asked_then("can leave it"))
    assert families(found) == ["extend", "build"] and found.drops == []
    moved = found.candidates[1].instruction
    assert moved.startswith("no, that's horrible.") and "tools -> core/tools" in moved
    assert moved.endswith('or should it move too? Should I proceed?", the reply: "can leave it")')


def test_a_reply_that_names_a_file_is_a_request_of_its_own() -> None:
    found = run(_asked_then("add a mul function to calc.py"))
    assert [c.instruction for c in found.candidates][-1] == "add a mul function to calc.py"


def test_a_correction_that_only_steers_joins_the_request_it_corrects() -> None:
    # was: dropped "corrects the assistant's last turn ('no,'…)", the task pinning `sub`
    s = coding("Add a sub(a, b) function to calc.py").say("Added sub().")
    s.user("no, that's horrible. use the other name").edit("calc.py", "def sub", "def minus")
    found = run(s.say("Renamed."))
    (task,) = found.candidates
    assert found.drops == [] and task.end is not None and "def minus" in task.end.files["calc.py"]
    assert task.instruction == (
        "Add a sub(a, b) function to calc.py\n\nno, that's horrible. use the other name"
    )


@pytest.mark.parametrize(
    ("text", "kept"),
    [("Add a sub(a, b) function to calc.py next to add. does that make sense?", True),
     ("Add a sub(a, b) function to calc.py next to add. what do you think?", True),
     ("Add a sub(a, b) function to calc.py. or should we keep only add?", True),
     # pi-mono's "what's footer using? should be dimmer, don't modify the theme, look into
     # the footer sources": a question with a duty or an imperative in it asks for a change
     ("what does calc.py hold? should have a sub too, don't touch add", True),
     ("why is calc.py missing sub? does add work for it?", False)],
)  # fmt: skip
def test_a_question_is_a_request_when_a_sentence_of_it_asks_for_the_change(
    text: str, kept: bool
) -> None:
    found = run(coding(text))
    assert (families(found) == ["extend"]) is kept


def test_a_short_follow_up_that_names_the_code_in_words_is_kept() -> None:
    """ "our themes need explicit tokens for the thinking level border" names `thinkingLevel`
    in words; "remove variant part of the id" names nothing of the code."""
    theme = "export const thinkingLevel = 'low';\nexport function borderColor() {}\n"
    for request, kept in [("our themes need tokens for the thinking level border", True),
                          ("remove variant part of the id", False)]:  # fmt: skip
        s = coding("Add a sub(a, b) function to calc.py").say("Added sub().")
        s.user(request).read("theme.ts", theme).edit("theme.ts", "'low'", "'high'")
        found = run(s.say("Done."))
        assert (len(found.candidates) == 2) is kept, request


# --- a turn the harness recorded as cut off ----------------------------------------------


def _cut(s: Script, failure: str = "Request was aborted") -> CutOff:
    """A cut-off recorded after the script's last event so far."""
    return CutOff(after=len(s.events) - 1, failure=failure)


def test_a_turn_cut_off_before_it_delivered_anything_is_a_harness_error() -> None:
    # was: no_deliverable "no file changed and no final answer" (opencode's MessageAbortedError,
    # pi's errorMessage are message metadata, no text), or a reason about its words
    s = Script().user("Whats broken with the parser in calc.py ?").read("calc.py", CALC)
    cut = _cut(s, "MessageAbortedError: The operation was aborted.")
    found = candidates(s.events, replay(s.events, "/w"), [cut])
    assert [(d.reason.value, d.detail) for d in found.drops] == [
        ("harness_error", "the turn was cut off before it delivered anything: "
         "'MessageAbortedError: The operation was aborted.'"),
    ]  # fmt: skip
    # what it said before the cut is no answer: "Let me look" is not kept as a QA answer
    s = Script().user("What does add() in calc.py return?").say("Let me look at calc.py.")
    found = candidates(s.events, replay(s.events, "/w"), [_cut(s)])
    assert reasons(found) == ["harness_error"]


def test_work_done_before_the_cut_or_after_a_continue_is_still_the_task() -> None:
    s = Script().user("Add a sub(a, b) function to calc.py").read("calc.py", CALC)
    s.edit("calc.py", "return a + b\n", SUB)
    cut = _cut(s)  # stopped after the edit: the change is there
    assert families(candidates(s.events, replay(s.events, "/w"), [cut])) == ["extend"]
    s = Script().user("What does add() in calc.py return?")
    cut = _cut(s)  # stopped, then "continue": the turn that finished is the thread's last
    s.user("continue").read("calc.py", CALC).say("add() returns `a + b`, the sum.")
    found = candidates(s.events, replay(s.events, "/w"), [cut])
    assert families(found) == ["qa"], found.drops
    assert reasons(candidates(s.events, replay(s.events, "/w"), [_cut(s)])) == ["harness_error"]


def test_calls_a_cut_off_turn_never_ran_are_not_its_work() -> None:
    # pi-mono: "alright, i think there's only one file left to fix up, tui-renderer.ts, read it
    # in full" ended in stopReason "error" ("terminated") on a message listing four edits that
    # never ran: no_deliverable ("no workspace file changed"); it is a harness failure
    s = Script().user("Fix the rounding in calc.py, read it in full").read("calc.py", CALC)
    s.say("I'll fix it.").unrun_edit("calc.py", "return a + b\n", "return round(a + b)\n")
    found = candidates(s.events, replay(s.events, "/w"), [_cut(s, "terminated")])
    assert [(d.reason.value, d.detail) for d in found.drops] == [
        ("harness_error", "the turn was cut off before it delivered anything: 'terminated'")
    ]
    # and a write outside the workspace that never ran is no live effect
    s = Script().user("Add a sub(a, b) function to calc.py").read("calc.py", CALC)
    s.edit("calc.py", "return a + b\n", SUB).say("Done.")
    s.user("now add mul(a, b) to calc.py as well, next to sub")
    s.unrun_edit("/home/me/.config/calc.json", "{}", '{"mul": true}')
    s.edit("calc.py", "return a - b\n", "return a - b\n\n\ndef mul(a, b):\n    return a * b\n")
    assert families(run(s.say("Added mul()."))) == ["extend", "extend"]


def test_a_request_cut_off_and_the_steer_that_leans_on_it_are_one_thread() -> None:
    # pi-mono: "in the system prompt make sure you know to read the README.md …", stopped
    # (Esc) while the agent read AGENTS.md, then "thatÄ's not the system prompt. see main.ts":
    # the request was harness_error and the steer, carrying the edit, not_self_contained
    s = Script().user("In calc.py, make add() round its result to two decimals")
    s.read("notes.md", "# notes\n")
    cut = _cut(s)
    s.user("that's not it. see calc.py").read("calc.py", CALC)
    s.edit("calc.py", "return a + b\n", "return round(a + b, 2)\n").say("Done.")
    found = candidates(s.events, replay(s.events, "/w"), [cut])
    assert families(found) == ["extend"], found.drops
    assert found.candidates[0].instruction.endswith("that's not it. see calc.py")
    # a new request that stands alone after the cut is its own task; the cut one stays a drop
    s = Script().user("In calc.py, make add() round its result to two decimals")
    s.read("notes.md", "# notes\n")
    cut = _cut(s)
    s.user("Add a sub(a, b) function to calc.py").read("calc.py", CALC)
    s.edit("calc.py", "return a + b\n", SUB).say("Done.")
    found = candidates(s.events, replay(s.events, "/w"), [cut])
    assert reasons(found) == ["harness_error"] and families(found) == ["extend"]
    assert found.candidates[0].instruction == "Add a sub(a, b) function to calc.py"
    # a request that was itself a reply to what the turn before it left (a plan, an answer)
    # cannot head the thread: its steer stays apart
    s = Script().user("How could calc.py round its results? Suggest a design")
    s.read("calc.py", CALC).say("Round in add() with round(x, 2), or add a helper.")
    s.user("can we use the helper instead?").read("notes.md", "# notes\n")
    cut = _cut(s)
    s.user("that's not it. see calc.py").edit("calc.py", "return a + b\n", "return r(a + b)\n")
    found = candidates(s.events, replay(s.events, "/w"), [cut])
    assert not found.candidates and "harness_error" in reasons(found), found.drops


PLAN = (
    "Proposed split:\n\n1. `calc.py` keeps `add()`\n2. a new `ops.py` with `sub(a, b)` and "
    "`mul(a, b)`, each returning the plain result\n3. `calc.py` re-exports both from `ops.py`"
    " so callers keep importing from `calc`\n\n" + "Each function stays one line. " * 10
)


def test_a_plan_and_the_reply_that_approves_it_are_one_thread() -> None:
    # pi-mono: "let's tackle main-new.ts. read it in full, suggest how we can … split it into
    # separate modules" (a plan, no change: no_deliverable) and "- selectSession() … rest
    # looks fine" (quoting the plan: not_self_contained), whose work followed the reply
    s = Script().user("Read calc.py and suggest how we could split it into modules")
    s.read("calc.py", CALC).say(PLAN)
    s.user("1. `calc.py` keeps `add()`\n\nrest looks fine").write("ops.py", SUB)
    found = run(s.say("Done."))
    assert families(found) == ["build"], found.drops
    said = found.candidates[0].instruction
    assert said.startswith("Read calc.py and suggest") and "a new `ops.py`" in said
    assert said.endswith("rest looks fine")
    # a question answered (a qa task of its own) does not take the turn after it in
    s = Script().user("What does add() in calc.py return?").read("calc.py", CALC)
    s.say("add() returns `a + b`, the sum of its two arguments. " * 10)
    s.user("ok, make it round that").edit("calc.py", "return a + b\n", "return round(a + b)\n")
    found = run(s.say("Done."))
    assert "qa" in families(found) and "not_self_contained" in reasons(found)
    # a reply that only asks on (no change) is no approval: the plan stays a thread of its own
    s = Script().user("Read calc.py and suggest how we could split it into modules")
    s.read("calc.py", CALC).say(PLAN).user("and what would go in ops.py?").say("sub and mul.")
    found = run(s)
    assert [d.first for d in found.drops] == [0, 4] and not found.candidates, found.drops
    # nor does a short answer that is no plan ("think then say hello": "Hello!")
    s = Script().user("think then say hello").say("Hello!")
    s.user("that seems to be the old value").edit("calc.py", "return a + b\n", "return a\n")
    assert "no_deliverable" in reasons(run(s.say("Done.")))


def test_a_pasted_prompt_naming_the_workspace_by_its_home_spelling_is_not_outside() -> None:
    # pi-mono: "~/workspaces/pi-mono (refactor) ➜ pi-mono git:(refactor) npx tsx
    # packages/coding-agent/src/cli.ts -c … ENOENT … at utils/config.ts:76" was dropped as
    # "refers to ~/workspaces/pi-mono, outside the workspace": the session's root is
    # /Users/badlogic/workspaces/pi-mono, whose home spelling that is
    root = "/Users/me/work/calc"
    report = (
        "~/work/calc (main) ➜ calc git:(main) python3 cli.py --sum 1 2\n"
        'Traceback (most recent call last):\n  File "calc.py", line 2, in add\n'
        "TypeError: unsupported operand type(s) for +: 'int' and 'str'"
    )
    s = Script().user(report).read(f"{root}/calc.py", CALC)
    s.edit(f"{root}/calc.py", "return a + b\n", "return int(a) + int(b)\n").say("Fixed.")
    found = candidates(s.events, replay(s.events, root))
    assert families(found) == ["extend"], found.drops
    assert found.candidates[0].instruction.startswith("the workspace (main) ➜ calc git:(main)")
    # a path under another home folder still is outside
    s = Script().user("~/other/proj/notes.txt has the spec; add sub to calc.py per it")
    s.read(f"{root}/calc.py", CALC).edit(f"{root}/calc.py", "return a + b\n", SUB)
    assert reasons(candidates(s.events, replay(s.events, root))) == ["not_self_contained"]


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("how about you delete calc.py, then read the tests in full and write a new calc.py?",
         True),
        ("why don't you write sub(a, b) in calc.py as a one-liner?", True),
        ("how about the divide function in calc.py, does it round?", False),
        ("how about using decimals in calc.py, would that be better?", False),
    ],
)  # fmt: skip
def test_a_suggestion_that_the_agent_do_the_work_is_a_request(text: str, kept: bool) -> None:
    # pi-mono: "how about you kill the entire file, then read tui-rendering.ts in full and
    # agent-session in full and create a brand spanking new interactive-mode.ts?" (the agent
    # did) was "a question, not a request for the change made"
    s = coding("Add a sub(a, b) function to calc.py").say("Added sub().")
    s.user(text).write("calc.py", "def add(a, b):\n    return a + b\n").say("Done.")
    found = run(s)
    assert (len(found.candidates) == 2) is kept, found.drops


def test_a_correction_that_asks_for_new_work_at_length_is_judged_by_it() -> None:
    # pi-mono: "no, that's not it, bot use the dark theme. fucking hell. is Theme.fg/bg maybe
    # doing something stupid? can you write a simple test using Theme that loads the dark
    # theme and then just outputs each color as a single line with its name? put it in
    # coding-agent/test so i can execute it with npx tsx" was "answers the assistant ('no,')"
    s = coding("Add a sub(a, b) function to calc.py").say("Added sub().")
    s.user(
        "no, that's not it. is add() maybe rounding? can you write a small script that "
        "calls add from calc.py on ten pairs of floats and prints each sum on its own line? "
        "put it in tools/sums.py so i can run it with python3"
    )
    found = run(s.write("tools/sums.py", "from calc import add\n").say("Written."))
    assert families(found) == ["extend", "build"], found.drops
    # a short steer after the correction leans on the work: it joins the request
    s = coding("Add a sub(a, b) function to calc.py").say("Added sub().")
    s.user("no, that's not it. can you use calc.py's add for it?").edit("calc.py", "a - b", "b")
    found = run(s.say("Done."))
    assert found.drops == [] and families(found) == ["extend"]


def test_what_a_thread_shown_an_attachment_changed_decides_its_reason() -> None:
    # pi-mono: "'/var/folders/…/Screenshot 2025-11-21 at 01.48.00.png' this is what we have"
    # led to dark.json colours only: docs_only (it was live_state, for the screenshot)
    shot = "'/var/folders/49/T/TemporaryItems/Screenshot 2025-12-09.png' the grays look the same"
    s = Script().user(shot).write("theme/dark.json", '{"gray": "#808080"}\n').say("Changed.")
    assert reasons(run(s)) == ["docs_only"]
    assert reasons(run(coding(shot).say("Fixed."))) == ["live_state"]  # code: the shot stays live


def test_a_then_sent_while_the_turn_ran_joins_its_request() -> None:
    # rycerzes/trl (pi): "ok now verify @benchmarks/ scripts and all are correct for running
    # the benchmark", then, while its reads still ran, "then give me command for running them";
    # the turn went on to fix three scripts. The request lost its work to the steer (no
    # deliverable) and the steer was "continues the previous turn": one thread, one task
    s = Script().user("ok now verify calc.py is correct for running the tests")
    s.read("calc.py", CALC)
    steer = len(s.events)
    s.user("then give me the command for running them")
    s.edit("calc.py", "return a + b\n", SUB).say("Fixed sub; run `python3 -m pytest -q`.")
    found = candidates(s.events, replay(s.events, "/w"), steers={steer})
    assert families(found) == ["extend"] and found.drops == []
    assert found.candidates[0].instruction.endswith("then give me the command for running them")
    # not sent mid-turn (the agent had answered): the same words still continue a turn
    assert reasons(candidates(s.events, replay(s.events, "/w"))) == [
        "no_deliverable",
        "not_self_contained",
    ]
    # a steer that states its own request is its own thread
    s = Script().user("Add a sub(a, b) function to calc.py").read("calc.py", CALC)
    steer = len(s.events)
    s.user("the mul function in calc.py crashes on strings, fix that too").edit(
        "calc.py", "return a + b\n", SUB
    )
    found = candidates(s.say("Done.").events, replay(s.events, "/w"), steers={steer})
    assert [c.instruction for c in found.candidates][-1].startswith("the mul function")


@pytest.mark.parametrize(
    ("text", "detail"),
    [
        # apanloco's words, asking whether hosting needs anything (advice)
        ("its just super beautiful i will host it on render.com now do we need something for "
         "that? i don't think we need a Dockerfile",
         "asks for work or advice, not a fact about the workspace, and no workspace file changed"),
        # pi-mono: "ok write markdown, including code, tables, lists nested, etc. pp" (English)
        ("ok write markdown, including code, tables, lists nested, etc. pp",
         "no workspace file changed, and the request asks no question"),
    ],
)  # fmt: skip
def test_the_detail_of_a_turn_that_changed_nothing_says_what_it_asked(
    text: str, detail: str
) -> None:
    s = coding("Add a sub(a, b) function to calc.py").say("Added sub().")
    found = run(s.user(text).say("Sure, here is some markdown and a plan: first, second."))
    assert [(d.reason.value, d.detail) for d in found.drops] == [("no_deliverable", detail)]


@pytest.mark.parametrize(
    ("steer", "joins"),
    [
        # dark-factory (opencode, queued while the agent worked): "@gitter Once done until all
        # changes are commited (empty git status)" — sequenced after the running request
        ("@gitter Once done until all changes are commited (empty git status)", True),
        ("once you're done, run the tests and commit", True),
        ("after that, commit everything", True),
        # a queued request of its own stays its own thread
        ("Remove build + test info from AGENTS.md for now", False),
    ],
)
def test_a_message_queued_for_after_the_running_work_joins_it(steer: str, joins: bool) -> None:
    s = Script().user("Setup a Git Ignore for Rust + NodeJS / BunJS")
    s.read("src/app.ts", "export const a = 1\n")
    queued = len(s.events)
    s.user(steer).write(".gitignore", "target/\nnode_modules/\n").say("Done.")
    found = candidates(s.events, replay(s.events, "/w"), steers={queued})
    assert [d.text.split()[0] for d in found.drops][:1] == ["Setup"]
    assert (len(found.drops) == 1) is joins
    assert found.drops[0].reason.value == ("docs_only" if joins else "no_deliverable")


@pytest.mark.parametrize(
    ("text", "continues"),
    [
        # pi-mono: the issue it means is pasted under the line that introduces it
        ('then we need to tackle this bash issue:\n\n{"type":"message","timestamp":"2025-12-09T00'
         ':20:16.036Z","message":{"role":"assistant","content":[{"type":"toolCall"}]}}\n\ngive '
         "me a root cause analysis and a plan on how to fix this", False),
        ("then we need to fix the parser in calc.py so empty lines parse", False),
        # the same opening without a subject of its own still continues the turn
        ("then we need to fix it so it handles the empty case too", True),
        ("and let's also do the same for calc.py", True),
    ],
)  # fmt: skip
def test_moving_on_to_named_or_pasted_work_stands_alone(text: str, continues: bool) -> None:
    s = coding("Add a sub(a, b) function to calc.py").say("Added sub().")
    found = run(s.user(text).say("The root cause is the parser: first …, then …"))
    details = [d.detail for d in found.drops]
    assert (details[:1] == ["continues the previous turn"]) is continues or (
        continues and details[0].startswith("refers back")
    )


def test_a_release_of_only_docs_and_config_is_live_state() -> None:
    # pi-mono: a version bump and its changelog, committed, tagged and published with the
    # project's `npm run publish`: the release is the deliverable (it was docs_only)
    s = Script().user("bump the version to 0.8.0, update the CHANGELOG and release it")
    s.read("CHANGELOG.md", "# Changelog\n").write("CHANGELOG.md", "# Changelog\n\n## 0.8.0\n")
    s.shell("git commit -am 'Release v0.8.0' && git tag v0.8.0", 0)
    published = s.shell("npm run publish", 0, "+ pkg@0.8.0").say("Released 0.8.0.")
    (drop,) = run(published).drops
    assert drop.reason.value == "live_state" and "`npm run publish`" in drop.detail
    # the same docs change pushed to a branch is still documentation
    s = Script().user("update the CHANGELOG for 0.8.0 and push it")
    s.read("CHANGELOG.md", "# Changelog\n").write("CHANGELOG.md", "# Changelog\n\n## 0.8.0\n")
    (drop,) = run(s.shell("git push origin main", 0).say("Pushed.")).drops
    assert drop.reason.value == "docs_only"
    # session 23's read: pi-mono's `npm run publish` failed in its pre-publish build, so it
    # released nothing; the version tag pushed before it (`git push origin v0.8.0`) did
    s = Script().user("bump the version to 0.8.0, update the CHANGELOG and release it")
    s.read("CHANGELOG.md", "# Changelog\n").write("CHANGELOG.md", "# Changelog\n\n## 0.8.0\n")
    s.shell("git tag v0.8.0 && git push origin main", 0)
    s.shell("git push origin v0.8.0", 0, " * [new tag]         v0.8.0 -> v0.8.0")
    failed = s.shell("npm run publish", 1, "error TS2305: no exported member").say("It failed.")
    (drop,) = run(failed).drops
    assert drop.reason.value == "live_state"
    assert "pushes a version tag (`git push origin v0.8.0`)" in drop.detail
    s = Script().user("bump the version to 0.8.0, update the CHANGELOG and release it")
    s.read("CHANGELOG.md", "# Changelog\n").write("CHANGELOG.md", "# Changelog\n\n## 0.8.0\n")
    (drop,) = run(s.shell("npm run publish", 1, "error TS2305").say("It failed.")).drops
    assert drop.reason.value == "docs_only"


def test_a_wait_before_a_question_of_its_own_is_no_correction() -> None:
    # pi-mono (session 22's read of 50 random drops: the one real task lost): "wait, do we only
    # have a single link color? …" — "Should I add a new token like `mdLinkUrl` …?" — "yes, in
    # old pi link url as 666666", then the token added. Its question names its own subject,
    # and the approved proposal states the change: a task holding all three
    s = later("wait, do we only have a single link color? we have link text and link link they "
              "are different in old pi")  # fmt: skip
    s.read("src/theme.ts", "export const link = 1\n")
    s.say("We only have `link`. Should I add a new token like `mdLinkUrl` for the URL?")
    s.user("yes, in old pi link url as 666666").edit("src/theme.ts", "= 1", "= 2").say("Added.")
    found = run(s)
    assert families(found) == ["extend", "extend"], found.drops
    assert 'the reply: "yes, in old pi link url as 666666")' in found.candidates[-1].instruction
    # a bare "git checkout -b" changes no file: a request for it delivered nothing (it was
    # "names no file …": pi-mono's "ok, create a branch refactor")
    s = later("ok, create a branch refactor").shell("git checkout -b refactor", 0)
    found = run(s.say("Created and switched to branch refactor."))
    assert [(d.reason.value, d.detail) for d in found.drops] == [
        ("no_deliverable", "not phrased as a question, and no workspace file changed")
    ]


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("add_total is not used it seems?", True),  # a defect stated, asked
        ("the total in calc.py doesn't round?", True),
        ("why would we round in calc.py? the caller rounds, no?", True),  # a challenge
        ("is add_total used?", False),  # asks
        ("why are there two add functions?", False),
        ("you didn't run the tests?", False),  # the assistant's own doing
    ],
)
def test_a_defect_stated_with_a_question_mark_asks_for_its_fix(text: str, kept: bool) -> None:
    # pi-mono's large session: "userMessageText is not used it seems?" — the agent made the
    # user message use the theme's token: "a question, not a request for the change made";
    # before-compaction's "why would we track the file slash commands in the interactive mode?
    # agent session keeps track of those, no? …" too
    s = coding("Add a sub(a, b) function to calc.py").say("Added sub().")
    s.user(text).write("calc.py", "def add(a, b):\n    return round(a + b)\n").say("Fixed.")
    found = run(s)
    assert (len(found.candidates) == 2) is kept, found.drops
    if not kept:
        assert found.drops[-1].reason == "not_self_contained", found.drops


def test_asking_whether_the_assistant_is_still_there_does_not_point_back() -> None:
    # pi-mono's before-compaction: "so, i'm now in the new implementation, you still there?"
    # was "refers back ('still')"
    s = coding("Add a sub(a, b) function to calc.py").say("Added sub().")
    s.user("so, i'm now in the new implementation, you still there?").say("Yes, I'm here.")
    (drop,) = run(s).drops
    assert drop.reason == "conversation" and "about the assistant" in drop.detail, drop


def test_a_request_for_a_release_that_changed_code_and_released_is_live_state() -> None:
    # pi-mono's large session: "ok, i believe we are ready to release a new version, aren't
    # we? know how to do it? read README.md …" — it fixed code on the way, then pushed the
    # version tag: "an ack at event 1056 approved work …" (session 24's second read)
    s = coding("we are ready to release a new version, read README.md for how")
    s.shell("git tag v0.8.0 && git push origin v0.8.0", 0, " * [new tag]  v0.8.0 -> v0.8.0")
    (drop,) = run(s.say("Released.")).drops
    assert drop.reason.value == "live_state" and "asks for a release" in drop.detail
    assert len(run(coding("we are ready to release a new version").say("Done.")).candidates) == 1


@pytest.mark.parametrize(
    ("text", "by_hand"),
    [
        ("ok, i manually removed the old helper, now add mul(a, b) to calc.py", True),
        ("i undid your changes, try again: add mul(a, b) to calc.py", True),
        ("I fixed the import myself; now add mul(a, b) to calc.py", True),
        ("add mul(a, b) to calc.py, i want the old helper removed manually later", False),
        ("edit it by hand if you must: add mul(a, b) to calc.py", False),
        ("i removed the helper from the plan, now add mul(a, b) to calc.py", False),
    ],
)  # fmt: skip
def test_a_turn_that_says_the_person_edited_files_by_hand(text: str, by_hand: bool) -> None:
    # pi-mono's large session: "ok, i manually removed almost all chalk uses …" (a steer) and
    # "… i undid your changes, try again" — edits between events that no event recorded: the
    # replayed workspace is not the one the session worked in (session 25's read)
    s = coding("Add a sub(a, b) function to calc.py").say("Added sub().")
    mul = "return a - b\n\n\ndef mul(a, b):\n    return a * b\n"
    s.user(text).edit("calc.py", "return a - b\n", mul)
    found = run(s.say("Added mul()."))
    if by_hand:
        (drop,) = found.drops
        assert drop.reason.value == "workspace_incomplete", drop
        assert drop.detail.startswith("the person says they changed files by hand"), drop
    else:
        assert families(found) == ["extend", "extend"], found.drops


def test_where_were_we_and_the_last_command_refer_to_the_session() -> None:
    # pi-mono's before-compaction: "alright, where were we?" (its commit read as "no workspace
    # file is known to change") and "what did i just execute?" (session 25's read)
    s = coding("Add a sub(a, b) function to calc.py").say("Added sub().")
    s.user("alright, where were we?").say("We added sub() to calc.py.")
    s.user("what did i just execute?").say("You ran the tests: `python3 -m pytest -q`.")
    assert [(d.reason.value, d.detail) for d in run(s).drops] == [
        ("not_self_contained", "refers to the conversation ('where were we')"),
        ("conversation", "asks about the assistant's own work or the session, not the "
         "workspace ('did i just')"),
    ]  # fmt: skip


def test_a_question_after_the_assistant_joined_by_a_remark_is_conversation() -> None:
    # pi-mono's before-compaction: "so, i'm now in the new implementation, you still there?" and,
    # before any reply, "wow, it works": no question by its last line, it still only asks after
    # the assistant (it was "asks for work or advice", session 25's read)
    s = coding("Add a sub(a, b) function to calc.py").say("Added sub().")
    s.user("so, i'm now in the new implementation, you still there?").shell("ls", 0, "calc.py")
    s.user("wow, it works").say("Glad it works.")
    (drop,) = run(s).drops
    assert (drop.reason.value, drop.detail) == (
        "conversation",
        "asks about the assistant's own work or the session, not the workspace ('you still')",
    )
