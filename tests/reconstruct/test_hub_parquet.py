"""Sessions read back from the parquet the Hugging Face Hub serves (reconstruct/hub_parquet.py).

Every parquet here is made by the real conversion, as the Hub makes ``refs/convert/parquet``:
``datasets.load_dataset("json", data_files=[...], split="train")`` then ``.to_parquet``, over
real session files (shared/corpus, the bundled samples). This ``datasets`` turns files it
recognises as pi / Claude Code / Codex traces into one row per file (its ``teich`` step;
without ``teich`` it raises ImportError), so the row-per-line conversion is asked for with
``parse_agent_traces=False``; hermes trajectories convert row per line either way. What comes
back must read, through ``trajforge reconstruct``, to the same sessions and task ids as the
original files.
"""

from __future__ import annotations

import gzip
import itertools
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from trajforge.reconstruct import pipeline
from trajforge.reconstruct.formats.detect import all_formats, detect
from trajforge.reconstruct.hub_parquet import ParquetSessions, sessions_from_parquet
from trajforge.records import Session

datasets = pytest.importorskip("datasets")

CORPUS = Path(__file__).parents[2].parent / "shared" / "corpus"
SAMPLES = Path(__file__).parents[2] / "trajforge" / "samples"
PI_TRL = CORPUS / "real" / "pi" / "rycerzes__trl" / "session.jsonl"
PI_MONO = CORPUS / "pi-mono" / "large-session.jsonl"
CLAUDE_RANDOM = CORPUS / "real" / "claude" / "apanloco__random" / "session.jsonl"
CLAUDE_BASTION = CORPUS / "real" / "claude" / "bastion-agentique__bastion" / "claude-session.jsonl"
CODEX_REAL = CORPUS / "real" / "codex" / "CryptoSodi__Battle-Cities" / "codex-session.jsonl"
CODEX_BARE = (
    SAMPLES / "codex" / "rollout-2025-07-04T09-00-00-0199a004-0000-7000-8000-000000000004.jsonl"
)
CODEX_SAMPLES = sorted((SAMPLES / "codex").glob("rollout-2025-09-*.jsonl"))
PI_SAMPLES = [SAMPLES / "pi" / f"{n}.jsonl" for n in ("qa", "build", "extend", "repair")]
HERMES = SAMPLES / "hermes" / "all.jsonl.gz"


def _real(path: Path) -> Path:
    if not path.is_file():
        pytest.skip(f"!! real corpus file not found: {path} (expected ../shared beside the repo)")
    return path


def _dataset(files: list[Path], folder: Path, traces: bool = False) -> Any:
    """``files`` read by the json builder as the Hub reads a dataset's data files."""
    return datasets.load_dataset(
        "json",
        data_files=[str(f) for f in files],
        split="train",
        cache_dir=str(folder / "hf-cache"),
        parse_agent_traces=traces,
    )


def _hub_parquet(files: list[Path], dest: Path, traces: bool = False) -> Path:
    """``files`` converted as the Hub converts a dataset's data files."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    _dataset(files, dest.parent / f"{dest.stem}-build", traces).to_parquet(str(dest))
    return dest


def _plain(path: Path, folder: Path) -> Path:
    """A copy of ``path`` decompressed (the json builder reads .gz too; concatenation needs it)."""
    if path.suffix != ".gz":
        return path
    copy = folder / path.name.removesuffix(".gz")
    copy.write_bytes(gzip.decompress(path.read_bytes()))
    return copy


def _sessions(paths: list[Path]) -> list[Any]:
    """What trajforge reads from ``paths``: each session's header and events, less where they
    were read from (file name, line)."""
    found: list[Any] = []
    for path in paths:
        for item in detect(path, all_formats()).parse(path):
            assert isinstance(item, Session), item
            header = item.header.model_dump(exclude={"source_path", "content_hash"})
            events = [e.model_dump(exclude={"source"}) for e in item.events]
            found.append((header, events, [w.message for w in item.warnings], item.skipped))
    return found


def _reconstruct(paths: list[Path], out: Path) -> tuple[pipeline.ReconstructSummary, set[str]]:
    summary = pipeline.run(paths, out)
    tasks = out / "tasks"
    return summary, {p.name for p in tasks.iterdir()} if tasks.is_dir() else set()


def _written(result: ParquetSessions) -> list[Path]:
    return [Path(f.path) for f in result.files]


def _assert_reads_the_same(originals: list[Path], written: list[Path], tmp_path: Path) -> None:
    assert _sessions(written) == _sessions(originals)
    before, before_ids = _reconstruct(originals, tmp_path / "from-originals")
    after, after_ids = _reconstruct(written, tmp_path / "from-parquet")
    assert after.sessions == before.sessions
    assert after.triage == before.triage
    assert after_ids == before_ids
    assert after.exit_code() == before.exit_code() == 0


def _covered(result: ParquetSessions, parquet: Path, rows: int) -> None:
    """The files' row ranges cover the parquet's rows once each, in order."""
    ranges = [(r.start, r.stop) for f in result.files for r in f.rows if r.parquet == str(parquet)]
    assert ranges[0][0] == 0 and ranges[-1][1] == rows
    assert all(a[1] == b[0] for a, b in itertools.pairwise(ranges))


def _lines(path: Path) -> int:
    return sum(1 for line in path.read_text(encoding="utf-8").splitlines() if line.strip())


@pytest.mark.parametrize(
    "source",
    [PI_TRL, PI_MONO, CLAUDE_RANDOM, CLAUDE_BASTION, CODEX_REAL, CODEX_BARE, HERMES],
    ids=["pi", "pi-v1", "claude", "claude-2", "codex", "codex-bare", "hermes"],
)
def test_each_harness_reads_back_to_the_same_sessions_and_task_ids(
    source: Path, tmp_path: Path
) -> None:
    original = _plain(_real(source), tmp_path)
    parquet = _hub_parquet([original], tmp_path / "default" / "train" / "0000.parquet")
    result = sessions_from_parquet([parquet], tmp_path / "sessions", batch_rows=100)
    assert result.errors == () and result.warnings == ()
    expected = _lines(original) if source is HERMES else 1
    assert len(result.files) == expected
    _covered(result, parquet, _lines(original))
    _assert_reads_the_same([original], _written(result), tmp_path)


def test_rows_are_the_lines_less_the_nulls(tmp_path: Path) -> None:
    """Each line comes back as its object: every key it has, no key it lacks, the values its
    own (its nulls are gone: the parquet cannot tell them from the ones it added)."""
    original = _real(CLAUDE_RANDOM)
    parquet = _hub_parquet([original], tmp_path / "0000.parquet")
    (written,) = _written(sessions_from_parquet([parquet], tmp_path / "sessions"))
    pairs = zip(
        original.read_text(encoding="utf-8").splitlines(),
        written.read_text(encoding="utf-8").splitlines(),
        strict=True,
    )
    for before, after in (map(json.loads, pair) for pair in pairs):
        assert set(after) == {key for key, value in before.items() if value is not None}
        assert _no_nulls(after) == _no_nulls(before)


def _no_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _no_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_no_nulls(v) for v in value]
    return value


def test_mixed_harnesses_in_one_parquet(tmp_path: Path) -> None:
    """A dump of several harnesses' sessions in one data file (the json builder takes several
    files only when the first has every column of the rest): split where each begins, the
    Claude Code session with the snapshot lines before its first ``sessionId``."""
    parts = [
        SAMPLES / "pi" / "qa.jsonl",
        _real(CLAUDE_BASTION),
        CODEX_SAMPLES[0],
        _plain(HERMES, tmp_path),
        _real(CODEX_REAL),
        SAMPLES / "pi" / "build.jsonl",
    ]
    dump = tmp_path / "dump.jsonl"
    dump.write_bytes(b"".join(p.read_bytes() for p in parts))
    parquet = _hub_parquet([dump], tmp_path / "default" / "train" / "0000.parquet")
    result = sessions_from_parquet([parquet], tmp_path / "sessions")
    assert result.errors == ()
    written = _written(result)
    assert [len(_sessions([p])) for p in written] == [1] * 9  # hermes: 4 trajectories
    _covered(result, parquet, _lines(dump))
    _assert_reads_the_same(parts, written, tmp_path)
    names = [p.name for p in written]
    assert names[1] == "3065c678-2605-4707-9a03-a9c2b0cf758e.jsonl"  # the sessionId
    assert names[3:7] == [f"0000-{n}.jsonl" for n in (4, 5, 6, 7)]  # hermes rows, nth session


@pytest.mark.parametrize(
    "files",
    [
        PI_SAMPLES,
        CODEX_SAMPLES,
        [SAMPLES / "claude-code" / "qa.jsonl", SAMPLES / "claude-code" / "extend.jsonl"],
    ],
    ids=["pi-headers", "codex-session-meta", "claude-session-ids"],
)
def test_several_sessions_per_parquet_split_at_their_boundaries(
    files: list[Path], tmp_path: Path
) -> None:
    parquet = _hub_parquet(files, tmp_path / "0000.parquet")
    result = sessions_from_parquet([parquet], tmp_path / "sessions")
    assert result.errors == ()
    counts = [_lines(f) for f in files]
    starts = [sum(counts[:i]) for i in range(len(files))]
    assert [(f.rows[0].start, f.rows[0].stop) for f in result.files] == [
        (start, start + n) for start, n in zip(starts, counts, strict=True)
    ]
    _assert_reads_the_same(files, _written(result), tmp_path)


def test_a_session_runs_on_into_the_next_shard(tmp_path: Path) -> None:
    """The Hub cuts a split into shards of consecutive rows; a session cut in two comes back
    whole, its rows in both."""
    dataset = _dataset(PI_SAMPLES, tmp_path)
    folder = tmp_path / "default" / "train"
    folder.mkdir(parents=True)
    shards = [folder / f"{i:04d}.parquet" for i in range(2)]
    for index, shard in enumerate(shards):  # qa 9 rows, build 11: the cut is in build
        dataset.select(range(15) if index == 0 else range(15, len(dataset))).to_parquet(shard)
    result = sessions_from_parquet(shards, tmp_path / "sessions")
    assert result.errors == ()
    assert len(result.files) == 4
    assert [(r.parquet, r.start, r.stop) for r in result.files[1].rows] == [
        (str(shards[0]), 9, 15),
        (str(shards[1]), 0, 5),
    ]
    _assert_reads_the_same(PI_SAMPLES, _written(result), tmp_path)


def test_unusable_files_are_reported_not_raised(tmp_path: Path) -> None:
    good = _hub_parquet([SAMPLES / "pi" / "qa.jsonl"], tmp_path / "good.parquet")
    data = good.read_bytes()
    not_parquet = tmp_path / "not.parquet"
    not_parquet.write_bytes((SAMPLES / "pi" / "qa.jsonl").read_bytes())
    cut = tmp_path / "cut.parquet"
    cut.write_bytes(data[: len(data) // 2])
    damaged = tmp_path / "damaged.parquet"
    damaged.write_bytes(data[:100] + bytes(400) + data[500:])
    empty = tmp_path / "empty.parquet"
    _dataset([SAMPLES / "pi" / "qa.jsonl"], tmp_path).select([]).to_parquet(empty)
    missing = tmp_path / "missing.parquet"
    bad = [not_parquet, cut, damaged, empty, missing]
    result = sessions_from_parquet([*bad, good], tmp_path / "sessions")
    assert [e.split(": ", 1)[0] for e in result.errors] == [str(p) for p in bad]
    assert "not a parquet file" in result.errors[0] and "not a parquet file" in result.errors[1]
    assert "unreadable from row 0" in result.errors[2]
    assert result.errors[3] == f"{empty}: no rows"
    assert [f.rows[0].parquet for f in result.files] == [str(good)]


def test_a_row_that_cannot_be_read_is_a_warning(tmp_path: Path) -> None:
    """A real parquet whose third row's JSON column was damaged: that row is a warning, the
    session's other rows are written."""
    parquet = _hub_parquet([SAMPLES / "claude-code" / "qa.jsonl"], tmp_path / "real.parquet")
    table = pq.read_table(parquet)
    index = table.schema.get_field_index("message")
    values = table["message"].to_pylist()
    values[2] = '{"role": "user", "content'
    damaged = tmp_path / "0000.parquet"
    column = pa.array(values, type=table.schema.field(index).type)
    pq.write_table(table.set_column(index, table.schema.field(index), column), damaged)
    result = sessions_from_parquet([damaged], tmp_path / "sessions")
    assert result.warnings == (f"{damaged}: row 2: a JSON column's text does not decode",)
    (written,) = result.files
    assert [(r.start, r.stop) for r in written.rows] == [(0, 2), (3, table.num_rows)]


def test_a_table_of_no_sessions_is_written_as_it_is_and_said(tmp_path: Path) -> None:
    """Rows of no known harness and no column of session text: one file of the rows, warned;
    the dates the conversion parsed are written back as ISO 8601, warned too."""
    source = Path(__file__).parents[2] / "reconstruct" / "dataenv" / "data" / "customers.jsonl"
    parquet = _hub_parquet([source], tmp_path / "0000.parquet")
    result = sessions_from_parquet([parquet], tmp_path / "sessions")
    assert [w.split(": ", 1)[1][:40] for w in result.warnings] == [
        "no row is a session line of a known harn",
        "column 'signup_date' (timestamp[ms]) hol",
    ]
    (written,) = _written(result)
    lines = [json.loads(line) for line in written.read_text().splitlines()]
    originals = [json.loads(line) for line in source.read_text().splitlines()]
    dated = [o | {"signup_date": f"{o['signup_date']}T00:00:00"} for o in originals]
    assert lines == [_no_nulls(o) for o in dated]  # its own nulls are gone too


def test_whole_session_files_in_a_text_column(tmp_path: Path) -> None:
    """An uploaded table whose rows each hold one session file's text: written as it is."""
    files = [SAMPLES / "pi" / "qa.jsonl", SAMPLES / "claude-code" / "qa.jsonl", CODEX_BARE]
    table = tmp_path / "files.jsonl"
    table.write_text(
        "".join(json.dumps({"id": n, "text": f.read_text()}) + "\n" for n, f in enumerate(files))
    )
    parquet = _hub_parquet([table], tmp_path / "0000.parquet")
    result = sessions_from_parquet([parquet], tmp_path / "sessions")
    assert result.errors == () and result.warnings == ()
    assert [p.read_bytes() for p in _written(result)] == [f.read_bytes() for f in files]
    _assert_reads_the_same(files, _written(result), tmp_path)


def test_json_lines_in_a_string_column(tmp_path: Path) -> None:
    """A table of JSON lines kept as strings: split at session boundaries, each line as it
    was written (a hermes line's hash, its session id, holds)."""
    files = [SAMPLES / "pi" / "qa.jsonl", _plain(HERMES, tmp_path), CODEX_SAMPLES[0]]
    lines = [line for f in files for line in f.read_text().splitlines() if line.strip()]
    table = tmp_path / "lines.jsonl"
    table.write_text("".join(json.dumps({"line": line}) + "\n" for line in lines))
    parquet = _hub_parquet([table], tmp_path / "0000.parquet")
    result = sessions_from_parquet([parquet], tmp_path / "sessions")
    assert result.errors == ()
    written = _written(result)
    assert len(written) == 6
    assert b"".join(p.read_bytes() for p in written) == b"".join(f.read_bytes() for f in files)
    _assert_reads_the_same(files, written, tmp_path)


def test_two_candidate_session_columns_are_ambiguous(tmp_path: Path) -> None:
    text = (SAMPLES / "pi" / "qa.jsonl").read_text()
    table = tmp_path / "two.jsonl"
    table.write_text(json.dumps({"text": text, "content": text}) + "\n")
    parquet = _hub_parquet([table], tmp_path / "0000.parquet")
    result = sessions_from_parquet([parquet], tmp_path / "sessions")
    assert result.files == ()
    (error,) = result.errors
    assert error.startswith(str(parquet)) and "'text', 'content'" in error
    assert "ambiguous" in error


def test_timestamps_the_conversion_parsed_are_written_back_and_warned(tmp_path: Path) -> None:
    """pyarrow reads a second-precision ISO 8601 string as a timestamp: it comes back as ISO
    8601 (here as it was), with a warning that its spelling is not in the parquet."""
    lines = _plain(HERMES, tmp_path).read_text().splitlines()
    records = [
        json.loads(line) | {"timestamp": f"2026-11-29T23:13:3{n}"} for n, line in enumerate(lines)
    ]
    source = tmp_path / "trajectories.jsonl"
    source.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
    parquet = _hub_parquet([source], tmp_path / "0000.parquet")
    result = sessions_from_parquet([parquet], tmp_path / "sessions")
    (warning,) = result.warnings
    assert warning.startswith(f"{parquet}: column 'timestamp' (timestamp[")  # [ms] in parquet
    _assert_reads_the_same([source], _written(result), tmp_path)


def test_agent_traces_rows_come_back_byte_for_byte(tmp_path: Path) -> None:
    """``datasets``' agent-traces shape (its default for these harnesses): one row per file."""
    files = [SAMPLES / "pi" / "qa.jsonl", _real(CLAUDE_BASTION), CODEX_SAMPLES[0]]
    parquet = _hub_parquet(files, tmp_path / "0000.parquet", traces=True)
    result = sessions_from_parquet([parquet], tmp_path / "sessions")
    assert result.errors == () and result.warnings == ()
    assert [p.name for p in _written(result)] == [f.name for f in files]
    assert [p.read_bytes() for p in _written(result)] == [f.read_bytes() for f in files]
    _assert_reads_the_same(files, _written(result), tmp_path)
