"""Events, SourcePos and Edits built without validation: the pi reader's hot path.

``model_construct`` looks every default up per call (~20 us an Event) and validation takes
~1.5 us; these take ~0.4 us (an Event's fields copied from one template, then set): the
assignments ``model_construct`` ends with, for values the reader type-checked. Tests check
each record equals what validation builds from the fields it was given.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from trajforge.records import Edit, Event, SourcePos

_new = object.__new__
# BaseModel's own slots, set through their descriptors (BaseModel.__setattr__ refuses: frozen)
_set_dict = BaseModel.__dict__["__dict__"].__set__
_set_fields_set = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__


def _defaults(cls: type[BaseModel]) -> dict[str, Any]:
    """Every field of ``cls`` at its default (None when required), in the model's order."""
    return {
        name: None if info.is_required() else info.get_default(call_default_factory=True)
        for name, info in cls.model_fields.items()
    }


EVENT_FIELDS = _defaults(Event)
"""Every Event field at its default, in Event's order (the order model_dump writes them); an
Event's fields are a copy with some set. ``arguments`` is None here: each Event is given a
dict of its own (an Event that was not would fail re-validation rather than share one)."""
EVENT_FIELDS["arguments"] = None
_IMMUTABLE = (str, int, float, tuple, frozenset, type(None))
if any(not isinstance(value, _IMMUTABLE) for value in EVENT_FIELDS.values()):
    raise ImportError("an Event default is mutable: pi_records would share it between Events")

_GIVEN: dict[frozenset[str], set[str]] = {}
"""The ``model_fields_set`` of the records built here, one set per set of names, shared by
the records given those names: pydantic reads a frozen model's set and copies it
(``model_copy``) but never changes it. The names are spelled in the reader, so few."""


def given(*names: str) -> set[str]:
    """The ``model_fields_set`` of Events given ``names`` besides kind, source and arguments
    (which every Event built here is given)."""
    key = frozenset(("kind", "source", "arguments", *names))
    return _GIVEN.setdefault(key, set(key))


_POS_GIVEN = {"file", "line"}
if list(SourcePos.model_fields) != ["file", "line"]:
    raise ImportError("pi_records.source_pos builds SourcePos(file, line): update it")
_EDIT_FIELDS = _defaults(Edit)
_EDIT_GIVEN = {"old", "new"}


def event(fields: dict[str, Any], fields_set: set[str]) -> Event:
    """The Event whose fields are ``fields`` (a copy of EVENT_FIELDS, filled in) and whose
    ``model_fields_set`` is ``fields_set`` (from :func:`given`, naming the fields set)."""
    model = _new(Event)
    _set_dict(model, fields)
    _set_fields_set(model, fields_set)
    _set_extra(model, None)
    _set_private(model, None)
    return model


def source_pos(file: str, line: int) -> SourcePos:
    """``SourcePos(file=file, line=line)`` for a str and an int."""
    pos = _new(SourcePos)
    _set_dict(pos, {"file": file, "line": line})
    _set_fields_set(pos, _POS_GIVEN)
    _set_extra(pos, None)
    _set_private(pos, None)
    return pos


def edit(old: str, new: str) -> Edit:
    """``Edit(old=old, new=new)`` for two strs."""
    fields = _EDIT_FIELDS.copy()
    fields["old"], fields["new"] = old, new
    model = _new(Edit)
    _set_dict(model, fields)
    _set_fields_set(model, _EDIT_GIVEN)
    _set_extra(model, None)
    _set_private(model, None)
    return model
