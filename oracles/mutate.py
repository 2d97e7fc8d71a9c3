"""Injected faults (mutants) on the lines the session changed.

A verifier that still passes against a mutant of the oracle does not pin the behaviour the
session wrote. Operators: compare / arith / bool operator swaps, constants ±1 (and flipped
booleans, emptied strings), negated conditions, dropped statements, `return None` / empty
values, and off-by-one slice and range bounds; when none applies (a change that is only
text), its string and template literals emptied (``TEXT``). A statement that only logs a
diagnostic (``console.error`` / ``warn`` / ``debug``, ``log.warning(...)``) is left alone: it is
not behaviour a task states. Python through `ast` positions, JavaScript and TypeScript through
tree-sitter; only the fault's own span changes, so line numbers stay.
"""

from __future__ import annotations

import logging
import random
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass

from trajforge.oracles import mutate_js, mutate_py, treesitter
from trajforge.oracles.edit import OPERATORS, TEXT, Candidate
from trajforge.oracles.pysource import compiles

log = logging.getLogger(__name__)

__all__ = ["OPERATORS", "TEXT", "Mutant", "mutants"]


@dataclass(frozen=True)
class Mutant:
    """One injected fault: the whole mutated file plus where and what changed."""

    id: str  # stable: f"m{n}" in generation order
    path: str
    line: int  # 1-based
    operator: str  # one of OPERATORS, or TEXT (the fallback)
    description: str  # human: "`<` → `<=` in calc.py line 12"
    content: str  # the whole mutated file


@dataclass(frozen=True)
class _Site:
    path: str
    candidate: Candidate


def mutants(
    files: Mapping[str, str],
    lines: Mapping[str, set[int]],
    *,
    seed: int = 0,
    limit: int = 40,
    skip: Callable[[str], bool] = lambda p: False,
) -> list[Mutant]:
    """Mutants of the changed lines only (lines[path]), at most `limit`.

    Seeded and reproducible (same inputs → same list); every mutant parses, none duplicates
    another or equals the original. When more than `limit` are possible, a seeded sample
    spread across operators and lines. Files that do not parse are skipped (and logged).
    """
    sites = list(_sites(files, lines, skip))
    if not sites:  # the change is only text (a log format, a message): empty its literals
        sites = list(_sites(files, lines, skip, texts=True))
    order: Iterable[int] = range(len(sites))
    if len(sites) > limit:
        order = _spread(sites, random.Random(seed))
    chosen: list[tuple[int, str]] = []
    seen: set[str] = set()
    for index in order:
        if len(chosen) >= limit:
            break
        site = sites[index]
        content = _realise(site, files[site.path])
        if content is not None and content not in seen:
            seen.add(content)
            chosen.append((index, content))
    chosen.sort()
    return [_mutant(n, sites[index], content) for n, (index, content) in enumerate(chosen, 1)]


def _sites(
    files: Mapping[str, str],
    lines: Mapping[str, set[int]],
    skip: Callable[[str], bool],
    texts: bool = False,
) -> Iterator[_Site]:
    for path in sorted(lines):
        if path not in files or skip(path) or not lines[path]:
            continue
        for candidate in _candidates(path, files[path], set(lines[path]), texts):
            yield _Site(path, candidate)


def _candidates(path: str, source: str, lines: set[int], texts: bool) -> list[Candidate]:
    """The faults of one file's lines (``texts``: only its emptied literals, the fallback)."""
    if path.endswith(".py"):
        try:
            found = mutate_py.texts if texts else mutate_py.candidates
            return found(source, lines)
        except (SyntaxError, ValueError) as err:
            log.warning("%s: does not parse (%s); no mutants", path, err)
            return []
    grammar = treesitter.grammar_for(path)
    if grammar is None:
        return []
    return (mutate_js.texts if texts else mutate_js.candidates)(grammar, source, lines)


def _realise(site: _Site, source: str) -> str | None:
    """The mutated file, or None when it does not parse or equals the original."""
    original = source.encode("utf-8")
    data = site.candidate.apply(original)
    if data == original:
        return None
    if site.path.endswith(".py"):
        content = data.decode("utf-8")
        return content if compiles(content, site.path) else None
    grammar = treesitter.grammar_for(site.path)
    if grammar is None or not treesitter.parses(grammar, data):
        return None
    return data.decode("utf-8")


def _spread(sites: list[_Site], rng: random.Random) -> Iterator[int]:
    """Site indices in a seeded order that takes turns across operators; each operator's turn
    takes the site on the least used line so far. Every index appears once."""
    queues: list[list[int]] = []
    for operator in OPERATORS:
        by_line: dict[tuple[str, int], list[int]] = {}
        for index, site in enumerate(sites):
            if site.candidate.operator == operator:
                by_line.setdefault(_line_key(site), []).append(index)
        groups = [by_line[key] for key in sorted(by_line)]
        for group in groups:
            rng.shuffle(group)
        rng.shuffle(groups)
        queues.append(list(_round_robin(groups)))
    rng.shuffle(queues)
    used: Counter[tuple[str, int]] = Counter()
    while any(queues):
        for queue in queues:
            if queue:
                pick = min(range(len(queue)), key=lambda k: used[_line_key(sites[queue[k]])])
                index = queue.pop(pick)
                used[_line_key(sites[index])] += 1
                yield index


def _line_key(site: _Site) -> tuple[str, int]:
    return site.path, site.candidate.line


def _round_robin(groups: list[list[int]]) -> Iterator[int]:
    depth = max((len(g) for g in groups), default=0)
    for i in range(depth):
        for group in groups:
            if i < len(group):
                yield group[i]


def _mutant(n: int, site: _Site, content: str) -> Mutant:
    c = site.candidate
    description = f"{c.what} in {site.path} line {c.line}"
    return Mutant(f"m{n}", site.path, c.line, c.operator, description, content)
