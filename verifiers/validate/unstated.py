"""Hidden tests that fake the outside world with names only the reference used.

A test that stands in for a command-line program or a web service (a patched ``subprocess``, a
stubbed ``fetch``, a fake program on PATH) checks the calls the code makes to it. When it
checks names the reference solution happened to use (a CLI's sub-commands, an endpoint, a JSON
field) and neither the instruction nor the starting workspace states them, no solver can know
them: "write the chat's task messages into a Lark sheet", tested through a mocked ``lark``
CLI whose commands only the reference spelled out. Such tests are rejected as
``unstated_interface`` (the teacher is told which names, and may test otherwise next round).

A name counts as relied on when it is a string literal of a hidden test that is also a literal
of a line the reference added, and it appears in neither the request nor any starting file.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from trajforge.oracles.changes import changed_lines
from trajforge.records import Finding, Reason, finding
from trajforge.verifiers.languages import all_languages

_LITERAL = re.compile(
    r""""((?:[^"\\\n]|\\.){3,80})"|'((?:[^'\\\n]|\\.){3,80})'|`([^`$\\\n]{3,80})`"""
)
_WORDY = re.compile(r"[A-Za-z]")
COMMON = frozenset(
    {"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "Content-Type", "content-type",
     "Accept", "accept", "Authorization", "authorization", "application/json", "text/plain",
     "text/html", "utf-8", "utf8", "UTF-8", "json", "text"}
)  # fmt: skip
"""Protocol words any solver knows: never an unstated name."""
SHOWN = 5
"""Names listed in the finding."""


def unstated_interface(
    hidden: Mapping[str, str],
    workspace: Mapping[str, str],
    oracle: Mapping[str, str],
    request: str,
) -> Finding | None:
    """The rejection when ``hidden`` fakes the outside world and relies on names only the
    reference used (see the module), else None."""
    faked = _faked(hidden)
    if not faked:
        return None
    added = _literals("\n".join(_added_lines(workspace, oracle)))
    tested = set().union(*(_literals(text) for text in hidden.values()))
    stated = "\n".join([request, *workspace.values()])
    relied = sorted(name for name in added & tested - COMMON if name not in stated)
    if not relied:
        return None
    names = ", ".join(f"`{n}`" for n in relied[:SHOWN]) + (", …" if len(relied) > SHOWN else "")
    return finding(
        Reason.UNSTATED_INTERFACE,
        f"{Reason.UNSTATED_INTERFACE}: the hidden tests fake the outside world "
        f"({'; '.join(faked[:3])}) and check {names}, which only the reference solution uses: "
        "neither the instruction nor the starting workspace states them, so no solver could "
        "know them; test only what the task states",
    )


def _faked(hidden: Mapping[str, str]) -> list[str]:
    """Every fake of the outside world in the hidden tests, by the language of each file."""
    found: list[str] = []
    for path, text in hidden.items():
        for language in all_languages():
            if language.accepts_test_path(path):
                found += language.fakes(text)
                break
    return list(dict.fromkeys(found))


def _added_lines(workspace: Mapping[str, str], oracle: Mapping[str, str]) -> list[str]:
    """The lines the reference added or changed (:func:`changed_lines`, as mutants use)."""
    return [
        line
        for path, numbers in changed_lines(workspace, oracle).items()
        for n, line in enumerate(oracle[path].splitlines(), 1)
        if n in numbers
    ]


def _literals(text: str) -> set[str]:
    """String literals with a letter in them (names, commands, fields), unescaped as written."""
    found = set()
    for match in _LITERAL.finditer(text):
        value = next(g for g in match.groups() if g is not None)
        if _WORDY.search(value) and value.strip() == value:
            found.add(value)
    return found
