"""Versioned rule bundles (``guard/rules/*.toml``) and how one rule matches one effect.

A rule names the effect kinds it looks at and selectors over the effect:

* ``target`` / ``detail`` — regexes that must match the effect's target / detail;
* ``unless`` — a regex over the detail that exempts the effect;
* ``roles`` — roles of the task's protected set (authoritative);
* ``paths`` — path globs (``~`` is the rollout's home, ``**`` crosses directories; authoritative);
* ``hosts`` — answer-store hosts / URL prefixes (``@answer_stores`` is the bundle's list);
* ``source_ids`` — the task's source ids appear in the target or detail;
* ``names`` — file-name globs: a heuristic, so alone it only flags, and files the agent
  created in the rollout are exempt from it.

A match through ``roles`` on a directory walked recursively only flags (the protected file is
inside, not named). ``special`` rules are evaluated by the engine (literal secrets, opaque
commands touching protected names).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ValidationError, field_validator

from trajforge.config import read_toml
from trajforge.errors import RecordError
from trajforge.guard.effects import EFFECT_KINDS, Effect
from trajforge.records.base import FROZEN

RULES_DIR = Path(__file__).parent / "rules"
DEFAULT_BUNDLE = RULES_DIR / "default.toml"
Strength = Literal["exact", "contains", "heuristic"]
Example = str | dict[str, Any]


class Rule(BaseModel):
    """One detector rule with its rationale and its must-block / must-pass examples."""

    model_config = FROZEN

    id: str
    """Stable rule id, ``category.name``."""
    severity: Literal["block", "flag"]
    """block: the call is replaced by a notice and the rollout gets zero reward; flag: logged."""
    rationale: str
    """Why the rule exists."""
    effects: tuple[str, ...] = ()
    """Effect kinds the rule looks at."""
    target: str | None = None
    """Regex the effect target must match (searched)."""
    detail: str | None = None
    """Regex the effect detail must match (searched)."""
    unless: str | None = None
    """Regex over the detail that exempts the effect."""
    roles: tuple[str, ...] = ()
    """Protected-set roles (hidden_test, visible_test, grader, reward, other)."""
    paths: tuple[str, ...] = ()
    """Path globs."""
    names: tuple[str, ...] = ()
    """File-name globs (heuristic)."""
    hosts: tuple[str, ...] = ()
    """Hosts or host/path prefixes."""
    source_ids: bool = False
    """Match the task's source ids in target or detail."""
    special: Literal["literal-secret", "opaque-protected", "integrity"] | None = None
    """Evaluated by the engine instead of the selectors."""
    tokens: tuple[str, ...] = ()
    """For opaque-protected: names that count as protected besides the task's own."""
    attacks: tuple[Example, ...] = ()
    """Calls that must trigger this rule (shell strings or tool-call tables)."""
    near_misses: tuple[Example, ...] = ()
    """Similar calls that must be allowed."""

    @field_validator("effects")
    @classmethod
    def _known_effects(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        unknown = [v for v in value if v not in EFFECT_KINDS]
        if unknown:
            raise ValueError(f"unknown effect kinds {unknown}; known: {', '.join(EFFECT_KINDS)}")
        return value


class Bundle(BaseModel):
    """A versioned rule bundle file."""

    model_config = FROZEN

    version: str
    """Bundle version; written into every decision, log, manifest and deployment unit."""
    description: str = ""
    """What the bundle is for."""
    answer_stores: tuple[str, ...] = ()
    """Known answer stores: hosts and host/path prefixes."""
    example_profile: dict[str, Any] = {}
    """Protected set the rule examples run against."""
    rules: tuple[Rule, ...]
    """Rules in evaluation order."""


def load_bundle(path: Path = DEFAULT_BUNDLE) -> Bundle:
    """Load and validate a bundle; errors name the file, the rule and the field."""
    data = read_toml(path, RecordError, "rule bundle")
    try:
        bundle = Bundle.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = list(first["loc"])
        if loc[:1] == ["rules"] and len(loc) > 1 and isinstance(loc[1], int):
            rules = data.get("rules", [])
            rule_id = rules[loc[1]].get("id", "?") if loc[1] < len(rules) else "?"
            loc[1] = f"{loc[1]}({rule_id})"
        raise RecordError(f"{path}: field {'.'.join(map(str, loc))!r}: {first['msg']}") from None
    for rule in bundle.rules:
        for pattern in (rule.target, rule.detail, rule.unless):
            if pattern is not None:
                try:
                    re.compile(pattern)
                except re.error as exc:
                    raise RecordError(
                        f"{path}: rule {rule.id}: bad regex {pattern!r}: {exc}"
                    ) from None
    return bundle


@functools.lru_cache(maxsize=4096)
def glob_regex(pattern: str) -> re.Pattern[str]:
    """``**`` crosses directories, ``*`` and ``?`` do not; ``{a,b}`` alternates."""
    return re.compile(glob_source(pattern), re.DOTALL)


def glob_source(pattern: str) -> str:
    """The regex text of :func:`glob_regex` (a rule's globs are compiled as one union: the
    bundle's 87 globs compiled one by one cost ~3 ms of every ``guard check`` start)."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if ch == "*":
            out.append("[^/]*")
        elif ch == "?":
            out.append("[^/]")
        elif ch == "{" and "}" in pattern[i:]:
            end = pattern.index("}", i)
            out.append(
                "(?:" + "|".join(re.escape(p) for p in pattern[i + 1 : end].split(",")) + ")"
            )
            i = end + 1
            continue
        else:
            out.append(re.escape(ch))
        i += 1
    return "".join(out) + r"\Z"


@dataclass(frozen=True)
class MatchContext:
    """What rules match against besides the effect: the protected set and rollout facts."""

    home: str
    protected: Mapping[str, str]
    """Absolute protected path → role."""
    source_ids: tuple[str, ...]
    answer_stores: tuple[str, ...]
    created: frozenset[str]


def _target_glob_hits(target: str, path: str) -> bool:
    """``target`` (a path that may hold globs, e.g. ``tests/*``) can name ``path``."""
    if target == path:
        return True
    if "*" in target or "?" in target or "[" in target:
        return bool(glob_regex(target.replace("[", "?")).match(path))
    return False


def _role_match(rule: Rule, effect: Effect, ctx: MatchContext) -> Strength | None:
    for path, role in ctx.protected.items():
        if role not in rule.roles:
            continue
        if _target_glob_hits(effect.target, path):
            return "exact"
        base = effect.target.rstrip("/")
        inside = path.startswith(base + "/")
        child = path.rsplit("/", 1)[0] == base and effect.kind == "list"
        if inside and (effect.tree or child):
            return "exact" if effect.kind in ("write", "delete") else "contains"
    return None


@dataclass(frozen=True)
class Compiled:
    """A rule with its regexes built once for one rollout's home directory."""

    rule: Rule
    target: re.Pattern[str] | None
    detail: re.Pattern[str] | None
    unless: re.Pattern[str] | None
    paths: re.Pattern[str] | None
    names: re.Pattern[str] | None

    @classmethod
    def build(cls, rule: Rule, home: str) -> Compiled:
        def rx(pattern: str | None) -> re.Pattern[str] | None:
            return None if pattern is None else re.compile(pattern)

        def globs(patterns: Sequence[str]) -> re.Pattern[str] | None:
            if not patterns:
                return None
            parts = [glob_source(home + p[1:] if p.startswith("~") else p) for p in patterns]
            return re.compile("|".join(f"(?:{p})" for p in parts), re.DOTALL)

        return cls(rule, rx(rule.target), rx(rule.detail), rx(rule.unless),
                   globs(rule.paths), globs(rule.names))  # fmt: skip


def compile_rules(rules: Sequence[Rule], home: str) -> dict[str, list[Compiled]]:
    """Effect kind → the rules that look at it, compiled, in bundle order."""
    by_kind: dict[str, list[Compiled]] = {k: [] for k in EFFECT_KINDS}
    for rule in rules:
        if rule.special is None:
            compiled = Compiled.build(rule, home)
            for kind in rule.effects:
                by_kind[kind].append(compiled)
    return by_kind


def url_hits(text: str, stores: Sequence[str]) -> str | None:
    """The answer store ``text`` (a URL, host, or text holding URLs) points into, if any."""
    if "." not in text:
        return None
    for url in _URL.findall(text):
        parts = urlsplit(url if "://" in url else "https://" + url)
        host = (parts.hostname or "").lower()
        path = parts.path.lower()
        for store in stores:
            s_host, _, s_path = store.lower().partition("/")
            if (host == s_host or host.endswith("." + s_host)) and path.startswith(
                "/" + s_path if s_path else ""
            ):
                return store
    return None


_URL = re.compile(r"(?:https?://)?[\w.-]+\.[a-z]{2,}(?:/[^\s'\"<>]*)?")


def match(c: Compiled, effect: Effect, ctx: MatchContext) -> Strength | None:
    """How rule ``c`` matches ``effect``: exact, contains, heuristic, or not at all."""
    if not _selected(c, effect):
        return None
    rule = c.rule
    if not (rule.roles or rule.paths or rule.names or rule.hosts or rule.source_ids):
        return "exact"
    return _where(c, effect, ctx)


def _selected(c: Compiled, effect: Effect) -> bool:
    """The rule's regexes accept the effect (names first: cheap, and spares big contents)."""
    rule = c.rule
    only_names = not (rule.roles or rule.paths or rule.hosts or rule.source_ids)
    if c.names is not None and only_names and not c.names.match(effect.target.rsplit("/", 1)[-1]):
        return False
    if c.target is not None and c.target.search(effect.target) is None:
        return False
    if c.detail is not None and c.detail.search(effect.detail) is None:
        return False
    return c.unless is None or c.unless.search(effect.detail + " " + effect.target) is None


def _where(c: Compiled, effect: Effect, ctx: MatchContext) -> Strength | None:
    """Which of the rule's location selectors names the effect's target."""
    rule = c.rule
    if rule.roles:
        found = _role_match(rule, effect, ctx)
        if found is not None:
            return found
    if c.paths is not None and c.paths.match(effect.target):
        return "exact"
    if rule.hosts:
        stores = [*ctx.answer_stores] if "@answer_stores" in rule.hosts else []
        stores += [h for h in rule.hosts if h != "@answer_stores"]
        if url_hits(effect.target + " " + effect.detail, stores):
            return "exact"
    if rule.source_ids and _mentions(ctx.source_ids, effect.target + "\n" + effect.detail):
        return "exact"
    if c.names is not None and c.names.match(effect.target.rsplit("/", 1)[-1]):
        if rule.detail is not None:
            return "exact"  # the name and the content together are evidence
        if effect.target not in ctx.created:
            return "heuristic"
    return None


def _mentions(ids: Sequence[str], text: str) -> bool:
    low = text.lower()
    return any(i.lower() in low for i in ids)
