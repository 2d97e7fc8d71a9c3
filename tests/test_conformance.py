"""Every registered implementation satisfies its Protocol and answers to its registry name."""

from __future__ import annotations

import pytest

from trajforge.errors import UnknownName
from trajforge.protocols import Format, Sandbox
from trajforge.registry import FORMATS, SANDBOXES, create, resolve


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_formats_conform(name: str) -> None:
    fmt = create(FORMATS, name, "format")
    assert isinstance(fmt, Format)
    assert fmt.name == name


@pytest.mark.parametrize("name", sorted(SANDBOXES))
def test_sandboxes_conform(name: str) -> None:
    sandbox = create(SANDBOXES, name, "sandbox")
    assert isinstance(sandbox, Sandbox)
    assert sandbox.name == name
    reason = sandbox.available()
    assert reason is None or (isinstance(reason, str) and reason)


def test_unknown_name_lists_known_ones() -> None:
    with pytest.raises(UnknownName, match="known: atif, claude-code, codex, hermes, opencode, pi"):
        resolve(FORMATS, "cursor", "format")


def test_formats_do_not_claim_each_other(fixture_sessions: dict[str, list]) -> None:
    """Each fixture is sniffed by exactly its own format."""
    from trajforge.reconstruct.inputs import read_head

    formats = [create(FORMATS, n, "format") for n in FORMATS]
    for harness, paths in fixture_sessions.items():
        for path in paths:
            head = read_head(path)
            claims = [f.name for f in formats if f.sniff(path, head)]
            assert claims == [harness], f"{path}: claimed by {claims}"
