"""The pi reader's fast paths: the collector pause is always undone, records built without
validation are the records validation builds from the fields they were given, the sha256 on the
hashing thread is hashlib's (for every reader thread, and in a forked child), and lines read
through memoryviews are the lines ``bytes.split`` gives."""

from __future__ import annotations

import gc
import hashlib
import multiprocessing
import threading
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from trajforge.errors import FormatError
from trajforge.reconstruct import inputs
from trajforge.reconstruct.formats.pi import PiFormat, _split_lines
from trajforge.reconstruct.formats.pi_records import edit, source_pos
from trajforge.reconstruct.inputs import gc_paused, sha256_soon
from trajforge.records import Edit, Event, Session, SourcePos

FIXTURES = Path(__file__).parents[1] / "fixtures" / "sessions" / "pi"
LARGE = Path("/work/shared/corpus/pi-mono/large-session.jsonl")
THREAD = inputs.HASH_ON_A_THREAD


@pytest.fixture(autouse=True)
def collector_on() -> Iterator[None]:
    """Each test starts with the collector on and leaves it on, whatever it asserted."""
    gc.enable()
    yield
    gc.enable()


def test_pause_is_undone_on_exit_and_on_error() -> None:
    with gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(ValueError), gc_paused():
        raise ValueError("boom")
    assert gc.isenabled()


def test_nested_pause_keeps_the_collector_off_until_the_outer_one_ends() -> None:
    with gc_paused():
        with gc_paused():
            pass
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_collector_already_off_stays_off() -> None:
    gc.disable()
    with gc_paused():
        pass
    assert not gc.isenabled()


def test_overlapping_threads_turn_it_back_on_once_both_are_out() -> None:
    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()
    seen: list[bool] = []

    def first() -> None:
        with gc_paused():
            first_in.set()
            second_in.wait(5)
        first_out.set()

    def second() -> None:
        first_in.wait(5)
        with gc_paused():
            second_in.set()
            first_out.wait(5)
            seen.append(gc.isenabled())  # the first reader left, this one is still reading

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert seen == [False]
    assert gc.isenabled()


def test_parse_leaves_the_collector_on(tmp_path: Path) -> None:
    session_file = sorted(FIXTURES.glob("*.jsonl"))[0]
    items = PiFormat().parse(session_file)
    assert isinstance(next(items), Session)
    assert gc.isenabled()  # the consumer runs with it on, even mid-file
    items.close()
    not_pi = tmp_path / "other.jsonl"
    not_pi.write_text('{"type": "user", "message": "hi"}\n')
    with pytest.raises(FormatError):
        list(PiFormat().parse(not_pi))
    assert gc.isenabled()


def test_fast_records_equal_validated_ones() -> None:
    fast = source_pos("/x/session.jsonl", 7)
    slow = SourcePos(file="/x/session.jsonl", line=7)
    assert fast == slow
    assert fast.model_fields_set == slow.model_fields_set
    assert fast.model_dump_json() == slow.model_dump_json()
    fast_edit, slow_edit = edit("a", "b"), Edit(old="a", new="b")
    assert fast_edit == slow_edit and fast_edit.model_dump_json() == slow_edit.model_dump_json()
    assert fast_edit.model_fields_set == slow_edit.model_fields_set


def session_files() -> list[Path]:
    return sorted(FIXTURES.glob("*.jsonl")) + ([LARGE] if LARGE.exists() else [])


@pytest.mark.parametrize("path", session_files(), ids=lambda p: p.name)
def test_every_event_is_what_validation_builds_from_the_fields_it_was_given(path: Path) -> None:
    """A field left out of an Event's ``model_fields_set`` but set to something other than its
    default would come back as the default here; a set shared wrongly between two shapes of
    Event would differ from the validated one's."""
    events = [e for s in PiFormat().parse(path) if isinstance(s, Session) for e in s.events]
    assert events
    for event in events:
        given = event.model_dump(include=event.model_fields_set)
        again = Event.model_validate(given)
        assert again == event
        assert again.model_dump_json() == event.model_dump_json()
        assert again.model_fields_set == event.model_fields_set
        assert event.source == SourcePos(**event.source.model_dump())
        assert type(event.arguments) is dict


def test_events_never_share_an_arguments_dict() -> None:
    """Events of messages and results get an empty dict each, not one they all hold."""
    items = PiFormat().parse(FIXTURES / "build.jsonl")
    events = [e for s in items if isinstance(s, Session) for e in s.events]
    results = [e for e in events if e.kind != "tool_call"]
    assert len(results) > 2
    assert len({id(e.arguments) for e in results}) == len(results)


def hashing_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "trajforge-sha256"]


@pytest.mark.parametrize(
    "size", [0, 10, inputs.HASH_ON_A_THREAD - 1, inputs.HASH_ON_A_THREAD, 3 << 20]
)
def test_sha256_soon_is_hashlibs_digest_inline_or_on_the_hashing_thread(size: int) -> None:
    data = bytes(range(256)) * (size // 256) + b"x" * (size % 256)
    digest_of = sha256_soon(data)
    assert (getattr(digest_of, "__name__", "") == "<lambda>") == (size < THREAD)
    assert digest_of() == hashlib.sha256(data).hexdigest()
    assert digest_of() == hashlib.sha256(data).hexdigest()  # asked again: the same
    assert len(hashing_threads()) <= 1


def test_one_hashing_thread_serves_every_file_and_every_reader_thread() -> None:
    """Eight reader threads, 40 buffers each, the digests asked for in any order: each is
    its own buffer's, and one thread did all the hashing."""
    buffers = [bytes([n]) * (THREAD + n) for n in range(40)]
    wrong: list[int] = []

    def reader() -> None:
        pending = [(n, sha256_soon(b)) for n, b in enumerate(buffers)]
        for n, digest_of in reversed(pending):
            if digest_of() != hashlib.sha256(buffers[n]).hexdigest():
                wrong.append(n)

    threads = [threading.Thread(target=reader) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not any(t.is_alive() for t in threads)
    assert wrong == []
    assert len(hashing_threads()) == 1


def test_a_hashing_thread_that_died_is_replaced(monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever killed it, the next large buffer starts a new thread instead of waiting out
    the hand-over timeout for a thread that is gone."""
    sha256_soon(b"a" * THREAD)()
    (old,) = hashing_threads()
    monkeypatch.setattr(threading, "excepthook", lambda args: None)  # the death is expected
    poison = inputs._Digest(7)  # type: ignore[arg-type]  # not a buffer: hashlib raises
    jobs = inputs._hasher()
    assert jobs is not None
    jobs.put(poison)
    old.join(10)
    assert not old.is_alive()
    data = b"b" * (THREAD * 2)
    assert sha256_soon(data)() == hashlib.sha256(data).hexdigest()
    (new,) = hashing_threads()
    assert new is not old and new.is_alive()


def _hash_in_child(size: int) -> tuple[str, int]:
    digest = sha256_soon(b"y" * size)()
    return digest, len(hashing_threads())


def test_a_forked_child_starts_its_own_hashing_thread() -> None:
    """The parent's thread is not in a forked child (a -j N pool worker): the child's first
    large buffer starts one there instead of waiting on a queue nobody reads."""
    sha256_soon(b"z" * THREAD)()  # the parent's thread is running
    context = multiprocessing.get_context("fork")
    with context.Pool(1) as pool:
        digest, threads = pool.apply_async(_hash_in_child, (THREAD * 2,)).get(timeout=60)
    assert digest == hashlib.sha256(b"y" * (THREAD * 2)).hexdigest()
    assert threads == 1  # its own, started there


LINES = [
    b"",
    b"\n",
    b'{"a":1}',
    b'{"a":1}\n',
    b'\n\n{"a":1}\r\n  \n\t{"b":[1,2]}  \n\x0b\x0c\n',
    b' {"lead": "space"}\nnot json\n{"cut": \n[1,2]\n"\xff\xfe"\n\n',
    b'{"\xc3\xa9t\xc3\xa9": "\xe2\x9c\x93"}\n\r\n\r',
]


@pytest.mark.parametrize("data", LINES)
def test_lines_read_through_memoryviews_are_the_split_lines(data: bytes) -> None:
    """The reference is the plain reading: ``bytes.split``, ``isspace``, orjson on bytes."""
    expected = []
    for number, line in enumerate(data.split(b"\n"), 1):
        if line and not line.isspace():
            try:
                expected.append((number, orjson.loads(line), None))
            except orjson.JSONDecodeError as exc:
                expected.append((number, None, f"not JSON ({exc.msg})"))
    assert list(_split_lines(data)) == expected
