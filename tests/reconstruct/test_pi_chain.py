"""The pi reader's one-pass reading (``_read_chain``) gives exactly what reading the whole file
and following its entry tree gives (``_read_whole``), or declines: on the real sessions, the
fixtures and thousands of generated files with branches, repeated or missing ids, parents
that point forward, stray lines and several headers."""

from __future__ import annotations

import random
from pathlib import Path

import orjson
import pytest

from trajforge.reconstruct.formats import pi
from trajforge.reconstruct.formats.pi import PiFormat
from trajforge.reconstruct.inputs import sha256_soon
from trajforge.records import ParseWarning, Session

CORPUS = Path("/work/shared/corpus")
REAL = [
    CORPUS / "real" / "pi" / "rycerzes__trl" / "session.jsonl",
    CORPUS / "pi-mono" / "large-session.jsonl",
    CORPUS / "pi-mono" / "before-compaction.jsonl",
]
FIXTURES = sorted((Path(__file__).parents[1] / "fixtures" / "sessions" / "pi").glob("*.jsonl"))


def both(path: Path) -> tuple[list[Session] | None, list[Session | ParseWarning]]:
    data = path.read_bytes()
    digest = sha256_soon(data)
    return pi._read_chain(data, str(path), digest), pi._read_whole(path, data, digest)


def dumps(items: list[Session] | list[Session | ParseWarning]) -> list[bytes]:
    return [item.model_dump_json().encode() for item in items]


@pytest.mark.parametrize("path", REAL + FIXTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_real_sessions_and_fixtures_are_read_in_one_pass_to_the_same_sessions(path: Path) -> None:
    if not path.exists():
        pytest.skip(f"corpus file {path} is not here: the real-session check needs ../shared")
    chain, whole = both(path)
    assert chain is not None, "a pi session without a branch is read in one pass"
    assert chain == whole
    assert dumps(chain) == dumps(whole)
    assert sum(len(s.events) for s in chain) > 0


def entry(rng: random.Random, number: int, entry_id: object, parent: object) -> dict[str, object]:
    kind = rng.choice(["user", "assistant", "toolResult", "model_change", "custom"])
    record: dict[str, object] = {"type": "message", "timestamp": "2025-01-01T00:00:00Z"}
    if entry_id is not None:
        record["id"] = entry_id
    if parent is not None or rng.random() < 0.5:
        record["parentId"] = parent
    if kind == "model_change":
        record.update(type="model_change", provider="p", modelId=f"m{number}")
    elif kind == "custom":
        record["type"] = "custom"
    elif kind == "user":
        record["message"] = {"role": "user", "content": f"do {number}"}
    elif kind == "assistant":
        call = {"type": "toolCall", "id": f"c{number}", "name": "bash"}
        call["arguments"] = {"command": f"echo {number}"}
        content = [{"type": "text", "text": f"ok {number}"}, call]
        record["message"] = {"role": "assistant", "model": "m", "content": content}
    else:
        record["message"] = {
            "role": "toolResult",
            "toolCallId": f"c{rng.randrange(number + 1)}",
            "toolName": "bash",
            "content": [{"type": "text", "text": f"out {number}"}],
            "isError": rng.random() < 0.2,
        }
    return record


def ids_and_parents(rng: random.Random, count: int) -> list[tuple[object, object]]:
    """A chain, then one of the ways a file stops being one: a branch, an id seen before, an
    entry without an id, a first parent that is an entry further on or one not in the file."""
    ids: list[object] = [f"e{i}" for i in range(count)]
    parents: list[object] = [None, *ids[:-1]]
    fault = rng.choice(["none", "none", "branch", "repeat", "no id", "forward", "unknown"])
    at = rng.randrange(count)
    if fault == "branch" and at > 1:
        parents[at] = ids[rng.randrange(at - 1)]
    elif fault == "repeat" and at > 0:
        ids[at] = ids[rng.randrange(at)]
    elif fault == "no id":
        ids[at] = rng.choice([None, 7, ""])
    elif fault == "forward":
        parents[0] = ids[at]
    elif fault == "unknown":
        parents[0] = "gone"
    return list(zip(ids, parents, strict=True))


def session_file(rng: random.Random) -> bytes:
    lines: list[bytes] = []
    for part in range(rng.choice([1, 1, 2])):
        version = rng.choice([None, 1, 2, 3, 3, "3", True])
        header: dict[str, object] = {"type": "session", "id": f"s{part}", "cwd": "/w"}
        if version is not None:
            header["version"] = version
        lines.append(orjson.dumps(header))
        for n, (entry_id, parent) in enumerate(ids_and_parents(rng, rng.randrange(1, 9))):
            lines.append(orjson.dumps(entry(rng, n, entry_id, parent)))
            if rng.random() < 0.08:
                lines.append(rng.choice([b"not json", b"[1, 2]", b'{"no": "type"}', b"   "]))
    if rng.random() < 0.1:
        lines.insert(0, rng.choice([b'{"type": "message", "message": {"role": "user"}}', b"x"]))
    return b"\n".join(lines) + b"\n"


def test_generated_files_read_in_one_pass_equal_the_whole_reading_or_are_declined(
    tmp_path: Path,
) -> None:
    rng = random.Random(20261201)
    taken = declined = 0
    for number in range(2500):
        path = tmp_path / f"{number}.jsonl"
        path.write_bytes(session_file(rng))
        chain, whole = both(path)
        if chain is None:
            declined += 1
            continue
        taken += 1
        assert dumps(chain) == dumps(whole), path.read_text()
    assert taken > 1000 and declined > 300  # both readings were exercised


def said(entry_id: str, parent: str | None, text: str) -> dict[str, object]:
    message = {"role": "user", "content": text}
    return {"type": "message", "id": entry_id, "parentId": parent, "message": message}


def test_a_branch_declines_and_parse_follows_the_path(tmp_path: Path) -> None:
    """The last entry's branch wins; the entry off the path is counted, as before."""
    records = [
        {"type": "session", "version": 3, "id": "s", "cwd": "/w"},
        said("a", None, "1"),
        said("b", "a", "2"),
        said("c", "a", "3"),
    ]
    path = tmp_path / "branch.jsonl"
    path.write_bytes(b"\n".join(orjson.dumps(r) for r in records))
    assert both(path)[0] is None
    (session,) = PiFormat().parse(path)
    assert isinstance(session, Session)
    assert [e.text for e in session.events] == ["1", "3"]
    assert session.skipped == {"off_path": 1}


def test_a_first_parent_not_in_the_file_is_a_warning_in_both_readings(tmp_path: Path) -> None:
    records = [
        {"type": "session", "version": 3, "id": "s", "cwd": "/w"},
        said("a", "gone", "1"),
        "stray",
    ]
    path = tmp_path / "orphan.jsonl"
    path.write_bytes(b"\n".join(orjson.dumps(r) for r in records))
    chain, whole = both(path)
    assert chain is not None and chain == whole
    messages = [w.message for w in chain[0].warnings]
    assert messages == [pi.NOT_PI, "parentId 'gone' not found: the path stops here"]
