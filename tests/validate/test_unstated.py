"""Hidden tests that fake the outside world with names only the reference used are rejected as
``unstated_interface`` (issue 30's Lark sheet: a mocked CLI whose commands only the reference
spelled out), in Python and TypeScript; the same fakes are fine when the task states the names,
and a test that fakes nothing is never asked about."""

from __future__ import annotations

from trajforge.records import Reason
from trajforge.verifiers.validate.unstated import unstated_interface

REQUEST = (
    "every day at 19:00, read the task messages of the chat group and write them into the "
    "team's sheet with the columns date, author, task"
)
START_PY = {"sync.py": "import subprocess\n\n\ndef sync(rows):\n    pass\n"}
ORACLE_PY = {
    "sync.py": "import json\nimport subprocess\n\n\ndef sync(rows):\n"
    "    for row in rows:\n"
    '        subprocess.run(["lark-cli", "sheets", "+append", "--values", json.dumps(row)],'
    " check=True)\n"
}
FAKED_PY = {
    "test_hidden.py": "from unittest import mock\n\nimport sync\n\n\ndef test_appends():\n"
    '    with mock.patch("subprocess.run") as run:\n'
    '        sync.sync([{"date": "d", "author": "a", "task": "t"}])\n'
    "    argv = run.call_args.args[0]\n"
    '    assert argv[:3] == ["lark-cli", "sheets", "+append"]\n'
}


def test_a_mocked_cli_checked_by_names_only_the_reference_used_is_rejected() -> None:
    found = unstated_interface(FAKED_PY, START_PY, ORACLE_PY, REQUEST)
    assert found is not None and found.reason is Reason.UNSTATED_INTERFACE
    assert "`+append`" in found.detail and "`lark-cli`" in found.detail
    assert "`sheets`" in found.detail and 'patch("subprocess.run")' in found.detail


def test_the_same_fakes_pass_when_the_task_states_the_names() -> None:
    stated = REQUEST + " (append each row with `lark-cli sheets +append --values JSON`)"
    assert unstated_interface(FAKED_PY, START_PY, ORACLE_PY, stated) is None
    documented = {**START_PY, "README.md": "Rows go in with lark-cli sheets +append.\n"}
    assert unstated_interface(FAKED_PY, documented, ORACLE_PY, REQUEST) is None


def test_a_test_that_fakes_nothing_is_not_asked_about() -> None:
    real = {"test_hidden.py": 'import sync\n\n\ndef test_named():\n    assert "+append"\n'}
    assert unstated_interface(real, START_PY, ORACLE_PY, REQUEST) is None


START_TS = {"src/notify.ts": "export async function notify(text: string): Promise<void> {}\n"}
ORACLE_TS = {
    "src/notify.ts": "export async function notify(text: string): Promise<void> {\n"
    '  await fetch("https://hooks.example.com/v2/post", {\n'
    '    method: "POST",\n'
    '    body: JSON.stringify({ channel: "ops-alerts", text }),\n'
    "  });\n}\n"
}


def test_a_stubbed_fetch_checked_by_an_endpoint_only_the_reference_used_is_rejected() -> None:
    hidden = {
        "src/notify.hidden.test.ts": 'import { expect, test, vi } from "vitest";\n'
        'import { notify } from "./notify";\n\ntest("posts", async () => {\n'
        "  const fetch = vi.fn(async () => new Response(null));\n"
        '  vi.stubGlobal("fetch", fetch);\n  await notify("disk full");\n'
        '  expect(fetch.mock.calls[0][0]).toBe("https://hooks.example.com/v2/post");\n'
        '  expect(fetch.mock.calls[0][1].method).toBe("POST");  // a protocol word: known\n'
        '  expect(JSON.parse(fetch.mock.calls[0][1].body).channel).toBe("ops-alerts");\n});\n'
    }
    found = unstated_interface(hidden, START_TS, ORACLE_TS, "send a notification on errors")
    assert found is not None and found.reason is Reason.UNSTATED_INTERFACE
    assert "`ops-alerts`" in found.detail and 'stubGlobal("fetch"' in found.detail
    assert "`POST`" not in found.detail
    stated = "post errors to https://hooks.example.com/v2/post as JSON with channel ops-alerts"
    assert unstated_interface(hidden, START_TS, ORACLE_TS, stated) is None
