"""Dataset revision folder: parquet per config and split, ``manifest.json``, ``README.md``.

::

    DATASET/
      README.md                                  dataset card with YAML ``configs``
      manifest.json                              DatasetManifest
      data/<config>/<split>-00000-of-00001.parquet

Each parquet row is one task: its record fields, its folders packed as file lists
(``workspace``, ``oracle``, ``tests``: ``[{path, content, encoding}]``), its validation evidence
(JSON text) and ``task_json``, the exact task record, so a loader can rebuild the task folder
byte for byte. Files are written in a fixed order with no timestamps: the same tasks give the
same bytes, so re-pushing an unchanged revision changes nothing.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson
import pyarrow as pa
import pyarrow.parquet as pq

from trajforge.records import dump_record
from trajforge.splits.tasks import PACKED, LoadedTask, PackedFile

SPLITS = ("train", "test")
FILE_STRUCT = pa.struct(
    [("path", pa.string()), ("content", pa.string()), ("encoding", pa.string())]
)
SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("family", pa.string()),
        ("group", pa.string()),
        ("content_hash", pa.string()),
        ("instruction", pa.string()),
        ("answer", pa.string()),
        (
            "source",
            pa.struct(
                [
                    ("harness", pa.string()),
                    ("session", pa.string()),
                    ("path", pa.string()),
                    ("first_event", pa.int64()),
                    ("last_event", pa.int64()),
                ]
            ),
        ),
        (
            "verifier",
            pa.struct(
                [("kind", pa.string()), ("command", pa.string()), ("tests", pa.list_(pa.string()))]
            ),
        ),
        *((name, pa.list_(FILE_STRUCT)) for name in PACKED),
        ("validation_status", pa.string()),
        ("validation_reasons", pa.list_(pa.string())),
        ("controls", pa.string()),
        ("evidence", pa.string()),
        ("task_json", pa.string()),
    ]
)


def data_path(config: str, split: str) -> str:
    """Relative path of one config/split parquet file."""
    return f"data/{config}/{split}-00000-of-00001.parquet"


def _json(value: Any) -> str:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()


def _files(files: Sequence[PackedFile]) -> list[dict[str, str]]:
    return [{"path": f.path, "content": f.content, "encoding": f.encoding} for f in files]


def row(item: LoadedTask, group: str) -> dict[str, Any]:
    """One parquet row for a task."""
    task = item.task
    return {
        "id": task.id,
        "family": task.family,
        "group": group,
        "content_hash": item.content_hash,
        "instruction": task.instruction,
        "answer": task.answer,
        "source": {
            "harness": task.source.harness,
            "session": task.source.session,
            "path": task.source.path,
            "first_event": task.source.events[0],
            "last_event": task.source.events[1],
        },
        "verifier": {
            "kind": task.verifier.kind,
            "command": task.verifier.command,
            "tests": list(task.verifier.tests),
        },
        **{name: _files(item.folders.get(name, ())) for name in PACKED},
        "validation_status": str(task.validation.status),
        "validation_reasons": list(task.validation.reasons),
        "controls": _json(task.validation.model_dump(mode="json", include={"controls", "mutants"})),
        "evidence": _json(task.validation.evidence.model_dump(mode="json")),
        "task_json": dump_record(task),
    }


def write_parquet(path: Path, rows: Sequence[dict[str, Any]]) -> str:
    """Write rows (sorted by id) to ``path``; returns the file's sha256."""
    path.parent.mkdir(parents=True, exist_ok=True)
    ordered = sorted(rows, key=lambda r: str(r["id"]))
    table = pa.Table.from_pylist(list(ordered), schema=SCHEMA)
    pq.write_table(table, path, compression="zstd")
    return hashlib.sha256(path.read_bytes()).hexdigest()


def read_rows(path: Path) -> list[dict[str, Any]]:
    """Rows of one parquet file, as dicts."""
    rows: list[dict[str, Any]] = pq.read_table(path).to_pylist()
    return rows
