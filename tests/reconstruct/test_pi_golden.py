"""The pi reader's output, pinned: every item it yields for the real corpus (pi-mono, a real v3
session, the fixtures) and for damaged or re-shaped copies of them made here (trees that
branch, entries without ids, cycles, garbage lines, gzip, CRLF, missing headers) digests to
the values the reader gave before its speed work (validated Events, inline sha256, one
``bytes`` per line). A change to the reader's output shows here first; when it is meant,
print the new digests with ``python tests/reconstruct/test_pi_golden.py`` and paste them.

The digest covers each item's ``model_dump_json(exclude_defaults=True)`` (a field added to a
record with a default leaves it alone), the input's path replaced by ``<input>``, and each
record's ``model_fields_set``. Session 21 re-pinned the inputs with aborted turns: they gained
``Session.cut_offs`` (and the trl session ``Session.steers``) and nothing else (their digests
without those fields were unchanged).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from trajforge.errors import FormatError
from trajforge.reconstruct.formats.pi import PiFormat
from trajforge.records import Session

CORPUS = Path("/work/shared/corpus")
V3 = CORPUS / "real" / "pi" / "rycerzes__trl" / "session.jsonl"
LARGE = CORPUS / "pi-mono" / "large-session.jsonl"
COMPACTION = CORPUS / "pi-mono" / "before-compaction.jsonl"
FIXTURES = Path(__file__).parents[1] / "fixtures" / "sessions" / "pi"

needs_corpus = pytest.mark.skipif(
    not (V3.exists() and LARGE.exists()), reason=f"real pi corpus missing under {CORPUS}"
)

GOLDEN = {
    "before-compaction.jsonl": "7e6b7a3617d5c5b9eaea127369f297419f49684f75f08a05235286c4cf1200b4",
    "large-session.jsonl": "69168dddbca2b693d0b4d8929b5a3373b4bf58bb1419771bd9a572729078556a",
    "session.jsonl": "30df6492d9bec8818ace6eb3e4e4616704d8260921a69d5f4941fa47d6ad6549",
    "build.jsonl": "75f2b1a3d9a786cc1574b32ba369fc4426c905f16a88a8aa8225ff3b54790048",
    "extend.jsonl": "5483e75a7df9d801943e181db830832e2bb3d18b387535de89642107e8649379",
    "qa.jsonl": "bb61ff11ca6ab0dc106dd28cb168c7b8b45e244dec14124f41659eb6c5447ccc",
    "repair.jsonl": "7806ba6d8bbf12128536c924a4f0b7bd9c7910f1950e8eaae5d6763f346dd352",
    "v3.jsonl.gz": "45fe565b41fd97aaf78bdf7807825adb1983095c8f3173afe2c9c86859db8538",
    "headless-v3.jsonl": "a092232a4b60ac97d7faf983b0c6e9c288c10f4998f3c438d26c98dc21def5bf",
    "headless-v1.jsonl": "5ea7df656a97d524b6a9454d282c7326ad2862b50cf46f2831c9726522f57de9",
    "garbage.jsonl": "1895b0ea061e0c30258d18639796c72400a06a5a3e02a35f2389ddd7adc164e9",
    "bad-utf8.jsonl": "95dd7494cb18a46a478ba80e739842d67fd80ce3735617c838c63a4d09e749b6",
    "truncated.jsonl": "c6e3d605b964efa42ea083d892b4cd13650326fde8ea0504d589f361b234aa2f",
    "two-headers.jsonl": "4a0d1201c84794da9d4a5a88972d1c3f0baab4e8019783eecf74a198e4956bab",
    "crlf-v1.jsonl": "8b7dfbbbd335f5b9391eb7ee46ee20de5c0246c3030f5248df2d1368eddc84da",
    "stray-line.jsonl": "af4c612e0720316fb03b566f3f754581e35670c3834daf06acb10ee8d25dc2ce",
    "fork-at-end.jsonl": "79673918118dd1c1c3041acdc9198b357214d1eae5aeec60058d8a42dd1cc771",
    "fork-in-middle.jsonl": "a67a038cb32f6379a7d557b2853cb77b5c1ed82012d9194ee057ce2f08639a58",
    "missing-parent.jsonl": "622ac37acb3f8fa673901c6378cb3b1703d8ce9c48b067db43969db09a38802e",
    "entry-without-id.jsonl": "6b0abedbcabb654de095e5be3c13113d43912b02951684af34a5b458a3ef9a9e",
    "last-without-id.jsonl": "d9911bc0719a0d264339ac4f0c8cea4dfa8a5dd1e627af691be85195194fc36a",
    "duplicate-id.jsonl": "1088f8ac27f430e540323f7c8f511ab3d5e1fc9a2624fbb811378d61f0872387",
    "root-with-parent.jsonl": "81d10b9beee3738894dd41f57f53e4aeca69f61bafbb64ded2cdf618030336fa",
    "root-parent-gone.jsonl": "b6707d4faa13fb5003a6e4ae25326814d1a017da2e9defcc7eaac2094dae3dd7",
    "empty-ids.jsonl": "276caa1a5bf01249e14b43628986f3f7e894e6c514f9de6dcbdbc53f8c79f72c",
    "number-parent.jsonl": "bcbf762d2745293868dea746d99f4ef8b8821e0c1ea8cc51490add07b6af6b68",
    "v2.jsonl": "04be75dda4efc7d0fc9db8c16bce143a07a2cf4f929d5f81ca7824b281087815",
    "version-string.jsonl": "e278a586dca7aa65876e1dbce8a3b977c9dfad96c934836b55efde14cdecee38",
    "header-only.jsonl": "a878a93a338b9b69e497f03668ed825ed821ca390623b74a892bc7c0bb9e3bfa",
    "blank.jsonl": "d995ea95f4b1c9503f3cd78d55aa55587b3f47a4884d8488c9e0d323e10d86d7",
    "empty.jsonl": "d995ea95f4b1c9503f3cd78d55aa55587b3f47a4884d8488c9e0d323e10d86d7",
    "not-pi.jsonl": "8591a955a685b27fe1c1d6bb7fc644bffe1c256749e57e4e6d6fca933786b534",
}


_DROP = object()


def _v3() -> bytes:
    return V3.read_bytes()


def _lines() -> list[bytes]:
    return _v3().split(b"\n")


def _recs() -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in _lines() if line.strip()]


def _jsonl(records: list[dict[str, Any]]) -> bytes:
    return b"".join(orjson.dumps(r) + b"\n" for r in records)


def _changed(index: int, **fields: Any) -> bytes:
    """The v3 session with ``fields`` set on record ``index`` (``_DROP``: the key removed)."""
    records = _recs()
    records[index].update(fields)
    return _jsonl([{k: v for k, v in r.items() if v is not _DROP} for r in records])


def _fork(at: int) -> bytes:
    """Three entries branching off entry 20, placed at ``at`` (the end: the path ends there)."""
    records = _recs()
    off = [
        dict(r, id=f"fork{i}", parentId=records[20]["id"] if i == 0 else f"fork{i - 1}")
        for i, r in enumerate(records[40:43])
    ]
    return _jsonl(records[:at] + off + records[at:])


def _empty_ids() -> bytes:
    records = _recs()
    records[1]["id"] = records[2]["parentId"] = ""
    return _jsonl(records)


DERIVED: dict[str, Callable[[], bytes]] = {
    "v3.jsonl.gz": lambda: gzip.compress(_v3(), mtime=0),
    "headless-v3.jsonl": lambda: b"\n".join(_lines()[1:]),
    "headless-v1.jsonl": lambda: LARGE.read_bytes().split(b"\n", 1)[1],
    "garbage.jsonl": lambda: b"\n".join(
        [*_lines()[:5], b"not json", b"[1,2]", b'{"type":5}', b"  \x0b", b"", *_lines()[5:]]
    ),
    "bad-utf8.jsonl": lambda: b"\n".join(
        [*_lines()[:1], b'{"type":"message","x":"\xff\xfe"}', *_lines()[1:]]
    ),
    "truncated.jsonl": lambda: _v3()[:-300],
    "two-headers.jsonl": lambda: _v3() + LARGE.read_bytes(),
    "crlf-v1.jsonl": lambda: LARGE.read_bytes().replace(b"\n", b"\r\n"),
    "stray-line.jsonl": lambda: b'{"type":"user","x":1}\n' + LARGE.read_bytes(),
    "fork-at-end.jsonl": lambda: _fork(len(_recs())),
    "fork-in-middle.jsonl": lambda: _fork(60),
    "missing-parent.jsonl": lambda: _changed(-3, parentId="gone"),
    "entry-without-id.jsonl": lambda: _changed(50, id=_DROP),
    "last-without-id.jsonl": lambda: _changed(-1, id=_DROP),
    "duplicate-id.jsonl": lambda: _changed(-1, id=_recs()[10]["id"]),
    "root-with-parent.jsonl": lambda: _changed(1, parentId=_recs()[5]["id"]),
    "root-parent-gone.jsonl": lambda: _changed(1, parentId="gone"),
    "empty-ids.jsonl": _empty_ids,
    "number-parent.jsonl": lambda: _changed(30, parentId=7),
    "v2.jsonl": lambda: _changed(0, version=2),
    "version-string.jsonl": lambda: _changed(0, version="3"),
    "header-only.jsonl": lambda: _lines()[0] + b"\n",
    "blank.jsonl": lambda: b"\n  \n\t\n",
    "empty.jsonl": lambda: b"",
    "not-pi.jsonl": lambda: b'{"a":1}\n',
}
"""Inputs made from the real sessions, by name (made when the test runs: corpus needed)."""


def digest(path: Path) -> str:
    """sha256 over what :meth:`PiFormat.parse` yields for ``path`` (or the error it raises)."""
    placeholder = orjson.dumps(str(path))[1:-1]
    try:
        items = list(PiFormat().parse(path))
    except FormatError as exc:
        return hashlib.sha256(str(exc).replace(str(path), "<input>").encode()).hexdigest()
    h = hashlib.sha256()
    for item in items:
        h.update(
            item.model_dump_json(exclude_defaults=True).encode().replace(placeholder, b"<input>")
        )
        if isinstance(item, Session):
            given = [sorted(e.model_fields_set) for e in item.events]
            given += [sorted(e.source.model_fields_set) for e in item.events]
            given += [[sorted(d.model_fields_set) for d in e.edits] for e in item.events]
            h.update(json.dumps(given).encode())
    return h.hexdigest()


def all_digests(tmp: Path) -> dict[str, str]:
    found = {p.name: digest(p) for p in (COMPACTION, LARGE, V3, *sorted(FIXTURES.glob("*.jsonl")))}
    for name, make in DERIVED.items():
        path = tmp / name
        path.write_bytes(make())
        found[name] = digest(path)
    return found


@needs_corpus
def test_output_is_what_the_reader_gave_before(tmp_path: Path) -> None:
    assert all_digests(tmp_path) == GOLDEN


if __name__ == "__main__":  # print the digests to paste into GOLDEN
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        for name, value in all_digests(Path(tmp)).items():
            sys.stdout.write(f'    "{name}": "{value}",\n')
