"""Classes of text and work triage used to misread, each with a real-shaped example.

Quoted requests are from ../shared/corpus where it holds one (the LICENSE and AGENTS.md
requests, pi-mono's commands); the rest are written the way real dumps write them (a hermes
gateway's speaker tag, a pasted spec, a Norwegian or Chinese request, an npm scope). Each is
kept or dropped as it should be, next to the precision case it must not break.
"""

from __future__ import annotations

import pytest

from trajforge.reconstruct.families import Found, candidates, is_source
from trajforge.reconstruct.replay import replay
from trajforge.reconstruct.triage import clean, is_ack

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


# --- 5. the workspace is not "the machine" -------------------------------------------------

ROOT = "/Users/badlogic/workspaces/pi-mono"
GREP = 'cd /Users/badlogic/workspaces/pi-mono && grep -rn "MAX_WORKERS =" pool/ | head -20'


def test_a_command_in_the_workspace_root_grounds_a_qa_answer() -> None:
    s = Script().user("How many workers does the pool start by default, and from which setting?")
    s.read(f"{ROOT}/pool/pool.py", "from pool.settings import MAX_WORKERS\n")
    s.shell(GREP, 0, "pool/settings.py:3:MAX_WORKERS = 8\n")
    found = run(s.say("8 workers by default, from MAX_WORKERS in pool/settings.py."), ROOT)
    ((task,),) = [found.candidates]
    assert task.family == "qa" and task.answer_key is not None
    grounds = {f.grounded_in for f in task.answer_key.required}
    assert 'output:cd . && grep -rn "MAX_WORKERS =" pool/ | head -20' in grounds


def test_the_machines_own_state_still_is() -> None:
    s = Script().user("Which program is listening on port 5432?")
    s.shell("lsof -i :5432", 0, "postgres 123 me 5u IPv4 TCP localhost:postgresql (LISTEN)")
    assert reasons(run(s.say("It's `postgres` (pid 123)."))) == ["live_state"]


def test_the_root_follows_the_session_when_it_moves() -> None:
    admin = "/Users/mike/TIDR Dropbox/Team Folder/Admin"
    store = "/Users/mike/Code/openwisprmod/Sources/OpenWisprLib/RecordingStore.swift"
    s = Script().user("let's do maxrecordings = 30 in RecordingStore and turn on togglemode")
    s.shell("cd ~/Code/openwisprmod && swift build 2>&1 | tail -5", 0, "Build complete!")
    s.read(store, "let maxRecordings = 10\n").edit(store, "= 10", "= 30")
    found = run(s.say("Set to 30."), admin)
    ((drop,),) = [found.drops]
    assert drop.reason.value == "workspace_incomplete" and "folder the session moved" in drop.detail
    s.write("/Users/mike/.config/open-wispr/config.json", '{"toggleMode": true}')
    assert reasons(run(s.say("Done."), admin)) == ["live_state"]  # the machine's settings


# --- 6. a live call is not the deliverable -------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "cd /w && git push origin main",
        "docker compose logs api --tail 50",
        "curl -sL https://docs.astral.sh/uv/reference/cli/ | head -100",
        "gh pr create --fill",
        "git pull --rebase && npm test",
        "ssh staging 'tail -n 100 /var/log/app/error.log'",
        "pkill -f 'vite' ; open http://localhost:5173",
    ],
)
def test_a_check_or_publishing_step_beside_code_is_not_live(command: str) -> None:
    found = run(coding("Add a sub(a, b) function to calc.py").shell(command, 0, "").say("Done."))
    assert families(found) == ["extend"], found.drops


@pytest.mark.parametrize(
    ("request_text", "command"),
    [
        ("deploy it", "npx vercel deploy --prod"),
        ("restart the api server", "ssh prod 'sudo systemctl restart api'"),
        ("check the logs on prod for the 502s", "ssh prod 'journalctl -u api -n 200'"),
        ("push it", "git push origin main"),
        ("what's in the staging bucket?", "aws s3 ls s3://acme-staging/"),
    ],
)
def test_a_live_deliverable_stays_dropped(request_text: str, command: str) -> None:
    found = run(Script().user(request_text).shell(command, 0, "ok").say("Done."))
    assert found.candidates == [] and reasons(found) == ["live_state"]


def test_a_deploy_carried_out_by_a_push_is_live() -> None:
    s = coding("Fix the rounding in calc.py and deploy it").shell("git push origin main", 0, "")
    assert reasons(run(s.say("Fixed and pushed; Render is deploying."))) == ["live_state"]


def test_glue_whose_only_output_is_a_live_service_is_live() -> None:
    s = Script().user("Import plans.csv into the prod database")
    s.read("plans.csv", "name,price\npro,20\n")
    s.write("scripts/import_plans.py", "import csv, psycopg\n")
    s.shell("DATABASE_URL=$PROD_DB python scripts/import_plans.py", 0, "inserted 1 row")
    found = run(s.say("Imported 1 plan."))
    assert found.candidates == [] and reasons(found) == ["live_state"]
    assert "glue" in found.drops[0].detail
