"""The checkable facts of a recorded qa answer, grounded in what the session could see.

A qa task is kept only when its answer states facts (numbers, identifiers, paths, yes/no with
its evidence) that appear in the starting workspace or in the output of a command the session
ran on it. Those facts — the ones the question asks for — become the task's
:class:`~trajforge.records.AnswerKey`; the checker (``trajforge.verifiers.answer_facts``)
accepts any answer stating them and rejects one that states other values.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass

from trajforge.reconstruct.triage_rules import MAX_REQUIRED_FACTS, words
from trajforge.records import AnswerKey, Fact, FactKind

CODE_SPAN = re.compile(r"`([^`\n]{1,120})`")
FENCE = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
NUMBER = re.compile(
    r"(?<![\w.\-/:#])(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:\s?%)?(?![\w/]|\.\d|-\d|:\d)"
)
LIST_MARKER = re.compile(r"(?m)^[ \t]*\d{1,3}[.)][ \t]")
DATE = re.compile(r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?)?|\d{1,2}:\d{2}(?::\d{2})?")
PATH = re.compile(
    r"(?<![\w@./-])(?:\.{0,2}/)?(?:[\w.-]+/)+[\w.-]*\w|(?<![\w@./-])[\w-]+\."
    r"(?:py|pyi|ts|tsx|js|jsx|mjs|cjs|json|md|toml|ya?ml|rs|go|java|kt|c|h|cc|cpp|hpp|sh|"
    r"html|css|scss|txt|csv|tsv|lock|cfg|ini|sql|rb|php|swift|proto|xml|env)\b"
)
IDENTIFIER = re.compile(
    r"""(?x)(?<![\w.$-])(?:
        [A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+          # MAX_WORKERS
      | [a-z][a-z0-9]*(?:_[a-z0-9]+)+          # max_workers
      | [a-z]+[0-9]*(?:[A-Z][a-z0-9]*)+        # getRandomValues
      | [A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+      # AgentSession
      | [A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+\(\)    # crypto.getRandomValues()
      | [A-Za-z_]\w*\(\)                       # compute()
    )(?![\w-])"""
)
POLARITY = re.compile(
    r"(?i)^\W*(?P<word>yes|yep|yeah|correct|exactly|right|true|no|nope|false|not quite)\b"
)
NEGATIVE = frozenset({"no", "nope", "false", "not quite"})
NAME_KINDS: tuple[FactKind, ...] = ("identifier", "path")
"""The kinds of fact that are names (a guess lists them; an answer may list only so many)."""
FOCUS = {
    "number": re.compile(
        r"(?i)\bhow (?:many|much|long|big|large|old|often|fast)\b|\bnumber of\b|\bcount\b|"
        r"\bwhat(?:'s| is| are| was)? (?:the )?(?:total|size|version|port|value|default|limit|"
        r"timeout|length|count|sum|average|max(?:imum)?|min(?:imum)?)\b"
    ),
    "identifier": re.compile(
        r"(?i)\bwhich\b|\bwhat (?:\w+ )?(?:function|class|method|module|setting|variable|"
        r"command|key|name|field|type|package|library|env(?:ironment)? var\w*|flag|option|"
        r"constant|api|endpoint|hook|component)\b|\bname of\b|\bcalled\b|\bwhat does\b|\bhow is\b"
    ),
    "path": re.compile(r"(?i)\bwhere\b|\bwhich (?:file|folder|directory|path)\b|\bwhat file\b"),
    "polarity": re.compile(
        r"(?is)^(?!\s*(?:\W*\w+\W+)?(?:what|which|where|when|who|whom|whose|how|why)\b)"
        r".*\?\s*$"
    ),
}
"""What the question asks for, read off its wording."""


@dataclass(frozen=True)
class Grounds:
    """What the session could see: file contents and the output of re-runnable commands."""

    files: Mapping[str, str]
    """Starting workspace: relative path → text."""
    outputs: Mapping[str, str]
    """Re-runnable command → its recorded output."""


def _candidates(answer: str) -> list[tuple[FactKind, str]]:
    """Facts the answer states, in order of appearance, without duplicates."""
    seen: set[tuple[str, str]] = set()
    facts = []
    for _, kind, value in sorted(_mentions(FENCE.sub(" ", answer)), key=lambda f: f[0]):
        if value and (kind, value) not in seen:
            seen.add((kind, value))
            facts.append((kind, value))
    return facts


def _mentions(text: str) -> list[tuple[int, FactKind, str]]:
    """Every fact-like mention in ``text`` and where: code spans, then the paths, names and
    numbers of the plain text left, each blanked once found (a path's parts are not names)."""
    found: list[tuple[int, FactKind, str]] = []
    for m in CODE_SPAN.finditer(text):
        found.append((m.start(), _kind_of(m.group(1).strip()), m.group(1).strip()))
    plain = CODE_SPAN.sub(_blank, text)
    plain = DATE.sub(_blank, LIST_MARKER.sub("   ", plain))
    for kind, pattern in _PLAIN:
        plain = pattern.sub(_recorder(kind, found), plain)
    return found


_PLAIN: tuple[tuple[FactKind, re.Pattern[str]], ...] = (
    ("path", PATH),
    ("identifier", IDENTIFIER),
    ("number", NUMBER),
)


def _blank(m: re.Match[str]) -> str:
    return " " * len(m.group(0))


def _recorder(
    kind: FactKind, found: list[tuple[int, FactKind, str]]
) -> Callable[[re.Match[str]], str]:
    """A ``re.sub`` replacement that records each match as a mention of ``kind`` and blanks it."""

    def record(m: re.Match[str]) -> str:
        found.append((m.start(), kind, m.group(0).strip()))
        return _blank(m)

    return record


def _kind_of(span: str) -> FactKind:
    if NUMBER.fullmatch(span):
        return "number"
    if "/" in span or PATH.fullmatch(span):
        return "path"
    return "identifier"


def _ground(kind: FactKind, value: str, grounds: Grounds, anchors: list[str]) -> str | None:
    """Where a fact is found (``file:PATH`` / ``output:CMD``), or None.

    A number counts only in a command's output or on a file line that also names one of
    ``anchors`` (the answer's grounded names, the question's words): "8" alone is everywhere.
    """
    if kind == "path":
        bare = value.strip("./")
        folder = bare.rstrip("/") + "/"
        if bare in grounds.files or any(p.startswith(folder) for p in grounds.files):
            return f"file:{bare}"
    found = _has_number(value) if kind == "number" else _token(value).search
    for command, output in grounds.outputs.items():
        if found(output):
            return f"output:{command}"
    for path, text in grounds.files.items():
        if kind != "number":
            if found(text):
                return f"file:{path}"
            continue
        for line in text.splitlines():
            if found(line) and any(a in line.lower() for a in anchors):
                return f"file:{path}"
    return None


def _number(text: str) -> float:
    return float(text.replace(",", "").rstrip("%").strip())


def _has_number(value: str) -> Callable[[str], bool]:
    """A test for ``value`` among a text's numbers, by value: 136.50 is 136.5."""
    want = _number(value)
    places = len(value.split(".")[1].rstrip("%").strip()) if "." in value else 0

    def found(text: str) -> bool:
        for m in NUMBER.finditer(text):
            got = _number(m.group(0))
            if got == want or (places and round(got, places) == round(want, places)):
                return True
        return False

    return found


def _token(value: str) -> re.Pattern[str]:
    core = value.rstrip("()").replace(",", "") if NUMBER.fullmatch(value) else value.rstrip("()")
    core = core.rstrip("%").strip()
    return re.compile(rf"(?<![\w.]){re.escape(core)}(?![\w])")


WORD = re.compile(r"[A-Za-z_]{4,}")
_COMMON = words(
    "what which where when does have this that there with from into their about many much "
    "default file files code value values number used uses using they them then than only "
    "each also will would should could your it's like just make made"
)


def _grounded(question: str, answer: str, grounds: Grounds) -> list[Fact]:
    """The answer's facts found in the grounds, in order; facts the question states are not
    answers and are left out."""
    asked = question.lower()
    stated = [(k, v) for k, v in _candidates(answer) if v.lower().rstrip("()") not in asked]
    found: dict[tuple[str, str], str] = {}
    for kind, value in stated:
        if kind != "number" and (where := _ground(kind, value, grounds, [])) is not None:
            found[(kind, value)] = where
    anchors = [v.lower().rstrip("()").rsplit("/", 1)[-1] for _, v in found]
    anchors += [w.lower() for w in WORD.findall(question) if w.lower() not in _COMMON]
    for kind, value in stated:
        if kind == "number" and (where := _ground(kind, value, grounds, anchors)) is not None:
            found[(kind, value)] = where
    return [Fact(kind=k, value=v, grounded_in=found[(k, v)]) for k, v in stated if (k, v) in found]


def frequent_names(texts: Iterable[str], kinds: Collection[FactKind], limit: int) -> list[str]:
    """The ``limit`` names of ``kinds`` (identifiers, paths) the texts mention most, most
    mentioned first (a tie: in the order found), any case, each spelled as first found, found
    as an answer's facts are: what a guesser who only skimmed the texts would list."""
    counts: Counter[str] = Counter()
    spelled: dict[str, str] = {}
    for text in texts:
        for _, kind, name in _mentions(text):
            if name and kind in kinds:
                folded = name.lower()
                spelled.setdefault(folded, name)
                counts[folded] += 1
    return [spelled[name] for name, _ in counts.most_common(limit)]


def names_stated(answer: str) -> set[str]:
    """The distinct identifiers and paths ``answer`` states, any case, as its facts are found."""
    return {value.lower() for kind, value in _candidates(answer) if kind in NAME_KINDS}


def focus_of(question: str) -> tuple[FactKind, ...]:
    """Kinds of fact the question asks for (empty: it does not say). A question that asks for a
    number, a name or a place is not a yes/no one, however it opens ("Using sales.csv, what is
    the total …?")."""
    found = tuple(kind for kind, pattern in FOCUS.items() if pattern.search(question))
    if len(found) > 1 and "polarity" in found:
        found = tuple(kind for kind in found if kind != "polarity")
    return found  # type: ignore[return-value]


def answer_key(question: str, answer: str, grounds: Grounds) -> AnswerKey | None:
    """The grounded facts the answer must state, or None when it states none."""
    grounded = _grounded(question, answer, grounds)
    focus = focus_of(question)
    required = _required(grounded, focus)
    if not required:
        return None
    polarity = POLARITY.match(answer)
    if "polarity" in focus and polarity:
        word = polarity.group("word").lower()
        value = "no" if word in NEGATIVE else "yes"
        required = [Fact(kind="polarity", value=value, grounded_in=required[0].value), *required]
    elif "polarity" in focus:
        return None  # a yes/no question whose answer does not say yes or no
    others = tuple(f for f in grounded if f not in required)
    return AnswerKey(required=tuple(required), others=others, focus=focus)


def _required(grounded: list[Fact], focus: tuple[FactKind, ...]) -> list[Fact]:
    """The first grounded fact of each kind asked for; a yes/no question's first fact as its
    evidence; the first two of different kinds when the question names no kind."""
    wanted = [k for k in focus if k != "polarity"]
    picked: list[Fact] = []
    for kind in wanted:
        options = [f for f in grounded if f.kind == kind]
        if not options and kind == "path":  # "where": a name that says where is an answer
            options = [f for f in grounded if f.kind == "identifier"]
        fresh = [f for f in options if f not in picked]
        if fresh:
            picked.append(fresh[0])
    if not wanted:
        limit = 1 if "polarity" in focus else 2
        kinds: set[str] = set()
        for fact in grounded:
            if fact.kind not in kinds and len(picked) < limit:
                picked.append(fact)
                kinds.add(fact.kind)
    return picked[:MAX_REQUIRED_FACTS]
