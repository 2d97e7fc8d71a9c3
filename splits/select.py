"""Group-aware, stratified, seeded selection of held-out (test) tasks.

Tasks are linked into groups when they come from the same source session or share a project
file (a starting-workspace or oracle file of at least ``PROJECT_FILE_MIN`` bytes with the same
path and content). Data-analysis tasks are questions generated over shared tables: each is its
own group (its source), so held-out questions can be drawn from the same tables. A group goes
to one side only, so no session or project straddles train and test. Groups are shuffled with
the seed and taken greedily while they fit the remaining per-family targets; targets that
cannot be met are reported as shortfalls.

Without explicit targets, :func:`default_targets` aims at ``DEFAULT_HELD_OUT_SHARE`` of each
family that has at least two groups, and :func:`select` with ``at_least_one`` then holds out
the smallest group of a family the greedy pass left empty, as long as no family loses more
than ``MAX_DEFAULT_SHARE`` of its tasks (so never all of its groups).
"""

from __future__ import annotations

import hashlib
import math
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from trajforge.errors import UsageError
from trajforge.records import FAMILIES
from trajforge.splits.tasks import LoadedTask, config_of

PROJECT_FILE_MIN = 64

DEFAULT_HELD_OUT_SHARE = 0.15
"""Held-out share of each family when ``--eval-per-family`` is not given (the reference release
held out 40 of 270 tasks): rounded half up, at least 1 when the family spans two or more
groups, at most all but one task; a family in a single group holds out nothing."""

MAX_DEFAULT_SHARE = 0.5
"""Under the default, a group too large for its family's target is still held out when the
family has nothing held out yet, unless that takes more than this share of any family."""


@dataclass(frozen=True)
class Group:
    """Tasks that must stay on one side."""

    id: str
    """``g-`` + hash of the member ids."""
    members: tuple[str, ...]
    """Task ids, sorted."""
    families: Counter[str]
    """Members per family."""


class _Union:
    def __init__(self, items: Sequence[str]) -> None:
        self.parent = {i: i for i in items}

    def find(self, item: str) -> str:
        while self.parent[item] != item:
            self.parent[item] = self.parent[self.parent[item]]
            item = self.parent[item]
        return item

    def join(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def _project_keys(item: LoadedTask) -> set[str]:
    if config_of(item.task.family) == "data_analysis":
        return set()
    keys = set()
    for name in ("workspace", "oracle"):
        for f in item.folders.get(name, ()):
            if len(f.content) >= PROJECT_FILE_MIN and f.content.strip():
                digest = hashlib.sha256(f.content.encode()).hexdigest()
                keys.add(f"file:{f.path}:{digest}")
    return keys


def groups(items: Sequence[LoadedTask]) -> list[Group]:
    """Connected components of tasks sharing a session or a project file."""
    ids = [t.task.id for t in items]
    union = _Union(ids)
    first: dict[str, str] = {}
    for item in items:
        src = item.task.source
        own = f"session:{src.harness}:{src.session}"
        if config_of(item.task.family) == "data_analysis":
            own = f"task:{item.task.id}"  # generated questions: no session ties them together
        for key in {own} | _project_keys(item):
            if key in first:
                union.join(first[key], item.task.id)
            else:
                first[key] = item.task.id
    members: dict[str, list[LoadedTask]] = {}
    for item in items:
        members.setdefault(union.find(item.task.id), []).append(item)
    result = []
    for tasks in members.values():
        names = tuple(sorted(t.task.id for t in tasks))
        digest = hashlib.sha256("\n".join(names).encode()).hexdigest()[:12]
        result.append(Group(f"g-{digest}", names, Counter(t.task.family for t in tasks)))
    return sorted(result, key=lambda g: g.id)


def parse_targets(specs: Sequence[str]) -> dict[str, int]:
    """``build=3,repair=2`` / ``coding=40`` / ``5`` (every family) → {key: n}; ``*`` for all."""
    targets: dict[str, int] = {}
    for spec in specs:
        for part in filter(None, (p.strip() for p in spec.split(","))):
            key, sep, value = part.rpartition("=")
            key = key.strip().replace("-", "_") if sep else "*"
            try:
                count = int(value)
            except ValueError:
                raise UsageError(
                    f"--eval-per-family {part!r}: expected NAME=COUNT or COUNT"
                ) from None
            if count < 0 or not key:
                raise UsageError(f"--eval-per-family {part!r}: expected NAME=COUNT with COUNT >= 0")
            targets[key] = count
    return targets


def per_family(targets: dict[str, int], available: Counter[str]) -> dict[str, int]:
    """Expand ``*`` and config totals into per-family targets (largest remainder)."""
    configs = {config_of(f) for f in available} | {"coding", "data_analysis"}
    result: dict[str, int] = {}
    for key, count in targets.items():
        if key == "*":
            for family in available:
                result.setdefault(family, count)
        elif key in configs:
            members = {f: n for f, n in available.items() if config_of(f) == key}
            for family, share in _apportion(count, members).items():
                result[family] = result.get(family, 0) + share
        elif key in available or key in FAMILIES:
            result[key] = count
        else:
            raise UsageError(f"--eval-per-family: unknown family or config {key!r}")
    for key, count in targets.items():
        if key in available and key not in configs:
            result[key] = count
    return result


def _apportion(total: int, sizes: dict[str, int]) -> dict[str, int]:
    whole = sum(sizes.values())
    if not whole:
        return {}
    exact = {f: total * n / whole for f, n in sizes.items()}
    shares = {f: int(v) for f, v in exact.items()}
    rest = total - sum(shares.values())
    for family in sorted(exact, key=lambda f: (shares[f] - exact[f], f))[:rest]:
        shares[family] += 1
    return shares


def family_sizes(all_groups: Sequence[Group]) -> dict[str, tuple[int, int]]:
    """family → (tasks, groups holding at least one of its tasks)."""
    tasks: Counter[str] = Counter()
    spans: Counter[str] = Counter()
    for group in all_groups:
        tasks.update(group.families)
        spans.update(group.families.keys())
    return {f: (tasks[f], spans[f]) for f in sorted(tasks)}


def default_targets(
    all_groups: Sequence[Group], share: float = DEFAULT_HELD_OUT_SHARE
) -> dict[str, int]:
    """Per-family held-out targets when none are given (see ``DEFAULT_HELD_OUT_SHARE``)."""
    targets = {}
    for family, (tasks, spans) in family_sizes(all_groups).items():
        wanted = min(max(1, math.floor(share * tasks + 0.5)), tasks - 1)
        targets[family] = wanted if spans >= 2 else 0
    return targets


def not_held_reason(tasks: int, spans: int, target: int | None, default: bool) -> str:
    """Why a family of ``tasks`` tasks in ``spans`` groups has no held-out task (``target``
    None: no target named it; ``default``: the targets come from :func:`default_targets`)."""
    if not default and not target:
        if target is None:
            return "no --eval-per-family target covers it"
        return "--eval-per-family sets its target to 0"
    if tasks == 1:
        return "a single task: holding it out would leave the family without train tasks"
    if spans == 1:
        return (
            f"all {tasks} tasks are in one group (same session or shared project files), "
            "which cannot be split between train and test without leakage"
        )
    return (
        f"no group of its {spans} fits a target of {target} without taking too much of it "
        "or of another family in the same group"
    )


def select(
    all_groups: Sequence[Group], targets: dict[str, int], seed: int, at_least_one: bool = False
) -> tuple[set[str], dict[str, int], list[str]]:
    """Held-out task ids, achieved counts per family, and shortfall messages.

    ``at_least_one`` (the default rule): a family with a positive target that the greedy pass
    left empty gets its smallest remaining group, as long as that keeps every family of the
    group at or under ``MAX_DEFAULT_SHARE`` held out; targets are aims, so no shortfalls.
    """
    order = sorted(all_groups, key=lambda g: g.id)
    random.Random(seed).shuffle(order)
    need = dict(targets)
    chosen: set[str] = set()
    for group in order:
        fits = all(n <= need.get(f, 0) for f, n in group.families.items())
        if fits and any(need.get(f, 0) > 0 for f in group.families):
            chosen.update(group.members)
            for family, n in group.families.items():
                need[family] -= n
    if at_least_one:
        sizes = {f: tasks for f, (tasks, _) in family_sizes(all_groups).items()}
        for family in sorted(targets):
            if targets[family] <= 0 or need[family] < targets[family]:
                continue
            room = [
                g
                for g in order
                if family in g.families
                and not chosen.intersection(g.members)
                and all(
                    targets.get(f, 0) - need.get(f, 0) + n <= MAX_DEFAULT_SHARE * sizes[f]
                    for f, n in g.families.items()
                )
            ]
            if room:
                group = min(room, key=lambda g: (g.families[family], len(g.members)))
                chosen.update(group.members)
                for f, n in group.families.items():
                    need[f] -= n
        achieved = {f: targets[f] - need[f] for f in sorted(targets)}
        return chosen, achieved, []
    achieved = {f: targets[f] - need[f] for f in sorted(targets)}
    shortfalls = [
        f"{family}: wanted {targets[family]}, selected {achieved[family]} "
        "(not enough tasks, or the remaining groups are larger than the gap)"
        for family in sorted(targets)
        if need[family] > 0
    ]
    return chosen, achieved, shortfalls
