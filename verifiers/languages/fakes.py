"""What a test file fakes of the outside world, per language: the patterns by which Python and
TypeScript / JavaScript tests stand in for a command-line program or a web service. A test that
does so relies on the names and shapes it fakes; :mod:`trajforge.verifiers.validate.unstated`
asks whether the task states them."""

from __future__ import annotations

import re

_PY_LAYERS = (
    r"(?:subprocess|os\.system|os\.popen|shutil\.which|requests|httpx|urllib|aiohttp|socket)"
)
PYTHON = (
    # mock.patch("subprocess.run"), patch("requests.post"), mocker.patch("httpx.Client")
    re.compile(rf"""patch\(\s*["'](?:[\w.]+\.)?{_PY_LAYERS}[\w.]*["']"""),
    # patch.object(subprocess, "run"), monkeypatch.setattr(subprocess, "run", …)
    re.compile(rf"""(?:patch\.object|setattr)\(\s*{_PY_LAYERS}\b"""),
    # monkeypatch.setattr("subprocess.run", …)
    re.compile(rf"""setattr\(\s*["']{_PY_LAYERS}[\w.]*["']"""),
    # a fake program: PATH pointed at a folder the test writes executables into
    re.compile(r"""setenv\(\s*["']PATH["']|environ\[\s*["']PATH["']\s*\]\s*="""),
)
_JS_LAYERS = r"(?:node:)?(?:child_process|https?|net)|execa|cross-spawn|node-fetch|axios|undici"
TYPESCRIPT = (
    # vi.mock("node:child_process"), jest.mock("axios"), mock.module("execa")
    re.compile(
        rf"""\b(?:vi|jest|mock)\.(?:do)?[mM]ock(?:Module)?\(\s*["'`](?:{_JS_LAYERS})["'`]"""
    ),
    # vi.spyOn(child_process, "spawn"), mock.method(cp, "execFile")
    re.compile(r"""\b(?:spyOn|mock\.method)\(\s*(?:child_process|cp|childProcess)\b"""),
    # vi.stubGlobal("fetch", …), globalThis.fetch = …, mock.method(globalThis, "fetch")
    re.compile(r"""stubGlobal\(\s*["']fetch["']|\b(?:globalThis|global|window)\.fetch\s*="""),
    re.compile(r"""(?:spyOn|mock\.method)\(\s*(?:globalThis|global|window)\s*,\s*["']fetch["']"""),
    # a fake program: PATH pointed at a folder the test writes executables into
    re.compile(r"""process\.env\.PATH\s*=|process\.env\[\s*["']PATH["']\s*\]\s*="""),
)


def found(patterns: tuple[re.Pattern[str], ...], test: str) -> tuple[str, ...]:
    """The text of every fake the patterns find in ``test``, in order, once each."""
    hits = [m.group(0) for pattern in patterns for m in pattern.finditer(test)]
    return tuple(dict.fromkeys(" ".join(hit.split()) for hit in hits))
