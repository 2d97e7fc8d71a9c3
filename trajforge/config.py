"""Layered configuration helpers: defaults → TOML file → ``key=value`` overrides."""

from __future__ import annotations

import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from trajforge.errors import TrajforgeError, UsageError

M = TypeVar("M", bound=BaseModel)


def read_toml(path: Path, error: type[TrajforgeError], what: str = "file") -> dict[str, Any]:
    """Parse a TOML file; unreadable or invalid files raise ``error`` naming the path."""
    try:
        return tomllib.loads(path.read_text())
    except OSError as exc:
        raise error(f"{path}: cannot read the {what}: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{path}: not valid TOML: {exc}") from None


def coerce(raw: str) -> Any:
    """A ``--set`` value: TOML syntax when it parses (numbers, booleans, arrays), else text."""
    try:
        return tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        return raw


def set_dotted(data: dict[str, Any], key: str, value: Any) -> None:
    """Set ``a.b.c = value`` in nested dicts, creating tables on the way."""
    *parents, last = key.split(".")
    node = data
    for part in parents:
        child = node.setdefault(part, {})
        if not isinstance(child, dict):
            raise UsageError(f"--set {key}=…: {part!r} is a value, not a table")
        node = child
    node[last] = value


def explain(exc: ValidationError, origin: str, model: type[BaseModel]) -> str:
    """One message for the first validation error: the field, the rule and the fix."""
    first = exc.errors()[0]
    field = ".".join(str(p) for p in first["loc"]) or "(root)"
    if first["type"] == "extra_forbidden":
        known = ", ".join(_known(model, first["loc"][:-1]))
        return f"{origin}: unknown setting {field!r}; known here: {known}"
    if first["type"] == "missing":
        return f"{origin}: setting {field!r} is required; add it or pass --set {field}=VALUE"
    return f"{origin}: setting {field!r}: {first['msg']} (got {first.get('input')!r})"


def load_layered(
    model: type[M], path: Path | None, overrides: Sequence[str], base: dict[str, Any] | None = None
) -> M:
    """Defaults (the model's) → ``base`` → TOML ``path`` → ``key.sub=value`` overrides, checked."""
    data: dict[str, Any] = dict(base or {})
    origin = "defaults"
    if path is not None:
        origin = str(path)
        data.update(read_toml(path, UsageError, "config file"))
    for item in overrides:
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--set {item!r}: expected KEY=VALUE, e.g. --set grpo.beta=0.0")
        set_dotted(data, key.strip(), coerce(raw.strip()))
        origin = origin if origin.endswith("--set") else f"{origin} + --set"
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise UsageError(explain(exc, origin, model)) from None


def _known(model: type[BaseModel], loc: tuple[Any, ...]) -> list[str]:
    """Field names of the (nested) model at ``loc``."""
    current: Any = model
    for part in loc:
        field = getattr(current, "model_fields", {}).get(part)
        annotation = getattr(field, "annotation", None)
        if not (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
            return []
        current = annotation
    return sorted(getattr(current, "model_fields", {}))
