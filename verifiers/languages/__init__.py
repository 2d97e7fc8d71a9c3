"""Languages behind the :class:`~trajforge.protocols.Language` seam (``LANGUAGES`` in the
registry): which changed files are source, the oracle's contract, stubs, the hidden tests'
command and the teacher's answer format, per language."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from functools import cache

from trajforge.protocols import Language
from trajforge.registry import LANGUAGES, create

__all__ = ["all_languages", "language_named", "language_of", "unloadable"]


@cache
def language_named(name: str) -> Language:
    """The registered language ``name`` (UnknownName lists the known ones)."""
    language: Language = create(LANGUAGES, name, "language")
    return language


def all_languages() -> list[Language]:
    """Every registered language, in registry order."""
    return [language_named(n) for n in LANGUAGES]


def language_of(paths: Iterable[str]) -> Language | None:
    """The language most of ``paths`` are source of (None: none is of a registered one)."""
    counts: Counter[str] = Counter()
    for path in paths:
        for language in all_languages():
            if language.is_source(path):
                counts[language.name] += 1
                break
    if not counts:
        return None
    return language_named(counts.most_common(1)[0][0])


def unloadable(path: str, files: Mapping[str, str]) -> str | None:
    """Why the source file ``path`` of ``files`` cannot be loaded, by its language (None: it
    could, or it is no registered language's source)."""
    for language in all_languages():
        if language.is_source(path):
            return language.unloadable(path, files)
    return None
