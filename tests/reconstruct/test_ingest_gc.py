"""The pi reader's fast paths: the collector pause is always undone, and records built without
validation are the records validation would build."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from trajforge.errors import FormatError
from trajforge.reconstruct.formats.pi import PiFormat
from trajforge.reconstruct.formats.pi_tools import source_pos
from trajforge.reconstruct.inputs import gc_paused
from trajforge.records import Session, SourcePos

FIXTURES = Path(__file__).parents[1] / "fixtures" / "sessions" / "pi"


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
    for session_file in sorted(FIXTURES.glob("*.jsonl")):
        for item in PiFormat().parse(session_file):
            if isinstance(item, Session):
                for event in item.events:
                    again = type(event).model_validate(event.model_dump())
                    assert again == event
                    assert event.source == SourcePos(**event.source.model_dump())
