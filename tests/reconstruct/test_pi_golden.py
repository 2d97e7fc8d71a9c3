"""The pi reader's output, pinned: every item it yields for the real corpus (pi-mono, a real v3
session, the fixtures) and for damaged or re-shaped copies of them made here (trees that
branch, entries without ids, cycles, garbage lines, gzip, CRLF, missing headers) digests to
the values the reader gave before its speed work (validated Events, inline sha256, one
``bytes`` per line). A change to the reader's output shows here first; when it is meant,
print the new digests with ``python tests/reconstruct/test_pi_golden.py`` and paste them.

The digest covers each item's ``model_dump_json(exclude_defaults=True)`` (a field added to a
record with a default leaves it alone), the input's path replaced by ``<input>``, and each
record's ``model_fields_set``. Session 21 re-pinned the inputs with aborted turns: they gained
``Session.cut_offs`` and nothing else (their digests without that field were unchanged).
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
    "before-compaction.jsonl": "401d9e8da4f1aea2c77284c26d4af5a0bb27b4462e1708453a24bfd5f0838cbc",
    "large-session.jsonl": "e04441ffe1dbeb81acc399ae11062addda9eda972bee26827ac6436ae27f7989",
    "session.jsonl": "4af912b4dcbbb0772ea5f9940da86bfa5a3c754599a456466a8d1b8dc492fcef",
    "build.jsonl": "75f2b1a3d9a786cc1574b32ba369fc4426c905f16a88a8aa8225ff3b54790048",
    "extend.jsonl": "5483e75a7df9d801943e181db830832e2bb3d18b387535de89642107e8649379",
    "qa.jsonl": "bb61ff11ca6ab0dc106dd28cb168c7b8b45e244dec14124f41659eb6c5447ccc",
    "repair.jsonl": "7806ba6d8bbf12128536c924a4f0b7bd9c7910f1950e8eaae5d6763f346dd352",
    "v3.jsonl.gz": "02a0e05f4d0d7f4b6673b4253dc4e9a511fd24397947d5d567d5603bc071da80",
    "headless-v3.jsonl": "bbb6d52202e494166bf4303d8d658102528e53a1e03defd7637a35153e32fe20",
    "headless-v1.jsonl": "3dd779bbe3ec3deb8b6213e3117ff0316614fd0019052dedc82b3eff6f18e2dd",
    "garbage.jsonl": "b35786baba57528d60e8e631e107713850210707eaae07331a0b26266f973652",
    "bad-utf8.jsonl": "12c20d3dad2fd6c0ba1dc0a58460995654eb4c8a5ca262cc0e57abfd2b131ac7",
    "truncated.jsonl": "2e0c50b68444ad40ecfca9e72869e9da926499c07770a055f153141cbb6b278c",
    "two-headers.jsonl": "af63afed96a5d58bbfc97c1572910d8bcda0a00cbe31ab0cfa141f38afc481bb",
    "crlf-v1.jsonl": "e42cf8c1d69134883d66425f264b1fd37be21a1256225e03f60449657020b09e",
    "stray-line.jsonl": "872668c1c3437241b7eb1da8d8b2efe7e86afea4b5f5ed368de06e6c058524dc",
    "fork-at-end.jsonl": "79673918118dd1c1c3041acdc9198b357214d1eae5aeec60058d8a42dd1cc771",
    "fork-in-middle.jsonl": "e64ffb439fb0911162ee8d57dffd5f4c034f432f8499c33edb6c2902dcc2d949",
    "missing-parent.jsonl": "622ac37acb3f8fa673901c6378cb3b1703d8ce9c48b067db43969db09a38802e",
    "entry-without-id.jsonl": "5f7de7a3aeeab35fbd6e26c861d1629c906c21dc8b1cff1a6d3b20c1ea4656cf",
    "last-without-id.jsonl": "9c140c9b76bd222c7a0fda5494ad93912ad43a6ed82d29f172fac220f0c2206d",
    "duplicate-id.jsonl": "0db8241d074596bd04a4152cf5eec76984034446e2c9ed3a0aa0b7e1c7cf8aea",
    "root-with-parent.jsonl": "4c4baa2268548bcbabf6f0c93a64ebc25a55048636a093eb1f403f3474fdbd3c",
    "root-parent-gone.jsonl": "b5312cbb29f11084003dbb9afd710d75210caf4dba04edf5f26865f2228862e1",
    "empty-ids.jsonl": "59831144644339d393fafa0449af6cff2f6d3d818a12ca5369d39eded68aed66",
    "number-parent.jsonl": "edba6ccb427dc7991f5ab860e4443007579d20e6ef91e10fc7cf0354eed95cdf",
    "v2.jsonl": "d8a25ac3b8e8a9229fc815e6f1bffe1b16e47546add62fa416d07a6783fb1526",
    "version-string.jsonl": "9c10f533d55d12a7b4489dab27c4045d975c7e9f373cc1a130b13b3c1e38b265",
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
