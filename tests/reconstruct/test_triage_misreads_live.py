"""Classes of calls triage used to misread as live state, or not, each with a real-shaped example.

Split from :mod:`test_triage_misreads`: the workspace root is not "the machine" (a command run
from it grounds a qa answer; a session that moves to another project folder takes its root
along), and a check or a publishing step beside changed code is not the deliverable. Each case
stands next to the precision case it must not break.
"""

from __future__ import annotations

import pytest

from .events import Script
from .test_triage_misreads import coding, families, reasons, run

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
        # a script fed to an interpreter that starts nothing live, a here-document that is data
        "python3 - <<'EOF'\nimport subprocess\nsubprocess.run(['pytest', '-q'])\nEOF",
        "cat > NOTES.md <<'EOF'\nto deploy: npx vercel deploy --prod\nEOF",
        'python3 -c \'import json; print(json.load(open("package.json"))["name"])\'',
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


@pytest.mark.parametrize(
    ("command", "reads_a_remote"),
    [
        ("git remote -v", False),
        ("git remote", False),
        ("git remote add origin git@github.com:me/x.git", False),
        ("git remote show origin", True),
        ("git remote update", True),
    ],
)
def test_listing_the_configured_remotes_reads_no_remote(command: str, reads_a_remote: bool) -> None:
    """Codex's grant-application session ran `git remote -v` and changed nothing: it was
    dropped as live_state "runs `git remote`", while the command only prints the repository's
    own config. `git remote show` / `update` do ask the remote."""
    found = run(Script().user("tell me about the project setup").shell(command, 0, "").say("Ok."))
    assert ("live_state" in reasons(found)) is reads_a_remote, found.drops


# --- an answer read from outside the workspace rests on the machine -------------------------


def test_an_answer_read_through_a_file_tool_outside_the_workspace_is_live_state() -> None:
    """apanloco/random's shape: "do you know where the session file is?" answered by globbing
    ~/.claude/projects (a tool replay does not model, its folder in its arguments)."""
    s = Script().user("i think there's a session file somewhere\ndo you know where it is?")
    s.tool("Glob", "/home/da/.claude/projects/x/a263.jsonl", pattern="**/*",
           path="/home/da/.claude/projects/x")  # fmt: skip
    found = run(s.say("Found it at ~/.claude/projects/x/a263.jsonl."), "/home/da/random")
    ((drop,),) = [found.drops]
    assert drop.reason.value == "live_state"
    assert drop.detail.startswith("event 1: reads /home/da/.claude/projects/x, outside the")


def test_a_read_inside_the_workspace_or_one_that_failed_grounds_nothing_live() -> None:
    root = "/home/da/random"
    s = Script().user("Which function does index.js export, and where is it defined?")
    s.read(f"{root}/index.js", "export function roll() {}\n")
    cid = s._call("read", "read", path="/home/da/.claude/settings.json")
    s._result(cid, "read", text="ENOENT", is_error=True)
    found = run(s.say("It exports `roll`, defined in index.js."), root)
    assert "live_state" not in reasons(found)


# --- a script a command runs is read for what it runs ---------------------------------------

ICON = (
    "python3 - <<'EOF'\nimport subprocess\nicon_path = \"/System/Library/PrivateFrameworks/"
    'SpeechObjects.framework/Versions/A/SpeechDataInstallerd.app/Contents/Resources/Dictation.icns"'
    '\napp_path = "/Applications/OpenWisprMod.app"\nscript = f\'\'\'\nuse framework "AppKit"\nset '
    "theImage to current application's NSImage's alloc()'s initWithContentsOfFile:(\"{icon_path}\")"
    "\ncurrent application's NSWorkspace's sharedWorkspace()'s setIcon:theImage forFile:("
    "\"{app_path}\") options:0\n'''\nresult = subprocess.run(['osascript', '-e', script], "
    'capture_output=True, text=True)\nprint("Done" if result.returncode == 0 else result.stderr)'
    "\nEOF"
)
"""Claude Code's speakfree session (``../shared/corpus/real/claude``): an app's icon set by a
Python here-document that starts ``osascript``."""


@pytest.mark.parametrize(
    ("command", "cited"),
    [
        (ICON, "runs `osascript`"),
        ("bash <<'EOF'\nssh prod 'sudo systemctl restart api'\nEOF", "runs `ssh prod"),
        ("python -c \"import os; os.system('npx vercel deploy --prod')\"", "runs `vercel deploy`"),
    ],
)
def test_what_a_script_fed_to_an_interpreter_starts_is_read(command: str, cited: str) -> None:
    """A here-document fed to a shell is shell, and the programs Python code (on stdin or
    ``-c``) starts through ``subprocess`` / ``os.system`` are judged: the icon set through
    ``osascript`` was cited by another call of its thread, or by none."""
    s = Script().user("give the app a microphone icon").shell(command, 0, "Done")
    found = run(s.say("Ok."))
    assert reasons(found) == ["live_state"] and cited in found.drops[0].detail, found.drops
