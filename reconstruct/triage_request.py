"""Self-contained requests: can a thread's request be read without the session?

``@path`` mentions are resolved against the files the session knew and host paths made
relative to the workspace; a request that stays unresolved, is too short, is mostly pasted
output, or points back into the conversation cannot stand alone (``not_self_contained``).
Words are counted in any script and quoted or speaker-tagged prose is the person's own
(:mod:`.triage_text`); the word lists are in :mod:`.triage_rules`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property

from trajforge.reconstruct import triage_rules as rules
from trajforge.reconstruct import triage_rules_turns as turns
from trajforge.reconstruct.paths import PathViolation, confine, home_spelling
from trajforge.reconstruct.triage_text import is_question, quoted_prose, word_count

VAGUE = "a short follow-up that names no file, code identifier or quoted value"


@dataclass
class Known:
    """What a request may name: the session's files and, read once when first asked for, the
    identifiers in their code (``thinkingLevel`` is named by "the thinking level")."""

    paths: Collection[str]
    texts: Callable[[], Iterable[str]] = lambda: ()
    """The files' known contents."""

    @cached_property
    def names(self) -> frozenset[tuple[str, ...]]:
        """Every identifier of two to four word parts, as its lowercased parts."""
        return frozenset(
            parts
            for text in self.texts()
            for ident in set(rules.CODE_NAME.findall(text))
            if 2 <= len(parts := _parts(ident)) <= rules.CODE_NAME_PARTS
        )

    def names_in_words(self, prose: str) -> bool:
        """The request names one of the code's identifiers in words, in a row."""
        said = [w.lower() for w in re.findall(r"[A-Za-z]+", prose)]
        names = self.names
        for size in range(2, rules.CODE_NAME_PARTS + 1):
            for at in range(len(said) - size + 1):
                run = said[at : at + size]
                if tuple(run) in names or tuple([*run[:-1], run[-1].rstrip("s")]) in names:
                    return True
        return False


def _parts(ident: str) -> tuple[str, ...]:
    """``thinkingLevel`` → ("thinking", "level"); () when a part is a function word or short
    ("getThe", "isOk" name nothing a person says)."""
    parts = tuple(w.lower() for w in rules.NAME_PART.findall(ident))
    if any(len(w) < rules.CODE_NAME_CHARS or w in rules.ENGLISH_MARKERS for w in parts):
        return ()
    return parts


@dataclass(frozen=True)
class Resolved:
    """A request with its ``@path`` references and host paths made workspace-relative."""

    text: str
    """The rewritten request."""
    problem: str | None
    """Why it cannot stand alone, or None."""
    vague: bool = False
    """The only problem is that a short later turn names nothing (:data:`VAGUE`): it points
    nowhere, so when the thread changed no file the request is no task for another reason."""
    leans: bool = False
    """The problem is that the turn leans on the one before it (corrects it, continues it,
    points back to it, or names nothing): read after the request it follows, it may stand."""


def resolve(text: str, root: str | None, known: Known, later: bool = False) -> Resolved:
    """Resolve ``@path`` mentions against the session's files and rewrite host paths."""
    paths = set(known.paths)
    dirs = {p.rsplit("/", i)[0] for p in paths for i in range(1, p.count("/") + 1)}
    problem = None

    def at(m: re.Match[str]) -> str:
        nonlocal problem
        ref = m.group("ref")
        if text.startswith("://", m.end()):
            return m.group(0)  # "@local://{path}": a locator's scheme, not an attached file
        rel = _relative(ref, root)
        if rel is not None and (rel.rstrip("/") in paths or rel.rstrip("/") in dirs):
            return f"`{rel}`"
        if rules.NPM_PACKAGE.fullmatch(ref) and not rules.NOT_PACKAGE.search(ref):
            return m.group(0)  # @ai-sdk/react: an npm scoped package, not an attached file
        if "/" not in ref and "." not in ref:
            problem = problem or f"names the harness agent or tool @{ref}"
        else:
            problem = problem or f"@{ref} is not a file the session's workspace holds"
        return m.group(0)

    rewritten = rules.AT_MENTION.sub(at, text)
    rewritten = host_paths(rewritten, root)
    if problem is None:
        problem = _outside_paths(rewritten)
    leans = False
    if problem is None:
        problem, leans = _dangling(rewritten, later, _file_names(paths), known)
    return Resolved(rewritten, problem, problem == VAGUE, leans)


def _file_names(paths: Iterable[str]) -> list[re.Pattern[str]]:
    """Workspace files a request may name in words: ``theme-selector.ts`` is "the theme
    selector", ``RecordingStore.swift`` "the recording store". Only names of two words or
    more: one word ("theme", "index") is a common word, not a name."""
    found: dict[str, re.Pattern[str]] = {}
    for path in paths:
        stem = path.rsplit("/", 1)[-1].split(".", 1)[0]
        parts = [w.lower() for w in rules.NAME_PART.findall(stem)]
        if len(parts) >= 2 and all(len(w) >= rules.NAME_PART_CHARS for w in parts):
            joined = r"[\s_-]*".join(map(re.escape, parts))
            found.setdefault(joined, re.compile(rf"(?i)\b{joined}\b"))
    return list(found.values())


def _relative(ref: str, root: str | None) -> str | None:
    try:
        return confine(ref, root)
    except PathViolation:
        return None


def host_paths(text: str, root: str | None) -> str:
    """``/Users/me/proj/src/a.py`` → ``src/a.py`` (and the Windows spelling, and ``~/proj/…``
    where the root lies in a home folder: a pasted shell prompt names the workspace so)."""
    if not root:
        return text
    spellings = {root, root.replace("/", "\\")}
    if (home := home_spelling(root)) is not None:
        spellings.add(home)
    for spelling in spellings:
        sep = "\\" if "\\" in spelling else "/"
        folder = re.escape(spelling.rstrip(sep))
        text = re.sub(folder + re.escape(sep) + r"(?=\S)", "", text)
        text = re.sub(folder + r"(?![\w/\\.-])", "the workspace", text)
    return text


HOME_PATH = re.compile(r"(?:~|/Users/[^/\s]+|/home/[^/\s]+|[A-Z]:\\Users\\[^\\\s]+)[/\\]\S+")


def _outside_paths(text: str) -> str | None:
    m = HOME_PATH.search(text)
    return f"refers to {m.group(0)}, outside the workspace" if m else None


def body(text: str) -> str:
    """The request without the chat openers in front of it ("ok, oh, so, …")."""
    while (m := rules.CHAT_OPENER.match(text)) is not None:
        text = text[m.end() :]
    return text


def _dangling(
    text: str, later: bool, names: Sequence[re.Pattern[str]], known: Known
) -> tuple[str | None, bool]:
    """Why a request cannot be read alone (too short, pasted output, pointing back), and
    whether it is because it leans on the turn before it (:func:`_points_back`). ``names``:
    the workspace's files as a request may name them in words."""
    prose, pasted = _prose(text)
    words = word_count(prose)
    if words < rules.MIN_REQUEST_WORDS:
        return f"too short to state a task ({words} word(s))", False
    if (m := rules.BACK_REFERENCE.search(prose)) is not None:
        return f"refers to the conversation ({m.group(0)!r})", False
    if pasted and words < rules.MIN_PROSE_WORDS:
        return f"pasted output with little request around it ({words} word(s))", False
    short = words <= rules.SHORT_REQUEST_WORDS
    anchored = bool(rules.ANCHOR.search(prose)) or any(n.search(prose) for n in names)
    shown = pasted and prose.strip().split("\n", 1)[0].rstrip().endswith(":")
    found = _points_back(prose, later, short, anchored or shown)
    if found == VAGUE and known.names_in_words(prose):
        return None, False  # "our themes need explicit tokens for the thinking level border"
    return found, found is not None


def _prose(text: str) -> tuple[str, bool]:
    """The person's own lines (a quoted or speaker-tagged line of prose is theirs, without its
    marker), and whether pasted output was left out."""
    kept: list[str] = []
    pasted = False
    for line in text.splitlines():
        if (quoted := quoted_prose(line)) is not None:
            kept.append(quoted)
        elif not _pasted(line):
            kept.append(line)
        else:
            pasted = pasted or bool(line.strip())
    return "\n".join(kept), pasted


def _points_back(prose: str, later: bool, short: bool, anchored: bool) -> str | None:
    """A later turn that corrects the assistant, or a short one that points back
    (``anchored``: it names a file, an identifier or a value, or pastes what it is about under
    a line that introduces it: "then we need to tackle this bash issue:\n\n{…}")."""
    if later:
        while (m := rules.CHAT_OPENER.match(prose)) is not None:
            rest = _restated(prose) if rules.CORRECTION.match(m.group(0)) else prose[m.end() :]
            if rest is None:
                # "wait, do we only have a single link color? …": its question is judged, what
                # follows it may lean on that question
                rest = _own_question(m.group(0), prose[m.end() :])
            if rest is None:
                return f"corrects the assistant's last turn ({m.group(0).strip()!r}…)"
            prose = rest  # "ok, …" / "oh, …": judge what follows
    if rules.DEPENDENT_START.match(prose) and not (anchored and rules.SEQUENCE.match(prose)):
        return "continues the previous turn"
    if later and short and (m := rules.DENIES_LAST.match(prose)) is not None:
        return f"says the assistant's last turn is not it ({m.group(0).strip()!r}…)"
    if short and (m := _strong_pointer(prose)) is not None:
        return f"refers back ({m.group(0)!r})"
    if later and short and is_question(prose) and (m := turns.PRONOUN_SUBJECT.search(prose)):
        return f"a follow-up question whose subject ({m.group('it')!r}) is the previous turn"
    if later and short and not anchored and (m := rules.DEICTIC.search(prose)) is not None:
        return f"refers back ({m.group(0)!r}) without naming what"
    if later and short and not anchored and not is_question(prose):
        return VAGUE
    return None


def _own_question(opener: str, rest: str) -> str | None:
    """The question a "wait, …" / "actually, …" goes on to ask about the workspace in its own
    words ("wait, do we only have a single link color? we have link text and link link they
    are different in old pi"), or None: a question, no "you", no strong pointer back
    (``STRONG_DEICTIC``), and a first sentence that names its own subject (no pronoun: "wait,
    does it handle the empty case?" still corrects; later sentences may refer to it). "no, …"
    always corrects."""
    first = turns.SENTENCE_END.split(rest.strip(), maxsplit=1)[0]
    if not rules.SOFT_CORRECTION.match(opener) or not is_question(first):
        return None
    if rules.STRONG_DEICTIC.search(rest) or rules.SECOND_PERSON.search(rest):
        return None
    return None if rules.DEICTIC.search(first) else first


def _restated(prose: str) -> str | None:
    """What follows a correction's first sentence when it states the work in full: it names
    RESTATED_ANCHORS files, paths or code names or more ("no, that's horrible.\n\ntools ->
    core/tools\ntui -> modes/interactive/components …"), or it asks for work of its own at
    length, naming one ("… can you write a simple test using Theme …? put it in
    coding-agent/test"). None when it only steers."""
    parts = turns.SENTENCE_END.split(prose.strip(), maxsplit=1)
    rest = parts[1] if len(parts) > 1 else ""
    named = {m.group(0) for m in rules.ANCHOR.finditer(rest)}
    if len(named) >= turns.RESTATED_ANCHORS:
        return rest
    asks = directs(rest)
    return rest if asks and named and word_count(rest) >= turns.RESTATED_WORDS else None


def _strong_pointer(prose: str) -> re.Match[str] | None:
    """The first STRONG_DEICTIC word that points into the conversation: not an "again" whose
    action the request itself named before ("use /theme to preview, modify, use /theme again")."""
    for m in rules.STRONG_DEICTIC.finditer(prose):
        if m.group(0).lower() != "again" or not _repeats_itself(prose[: m.start()]):
            return m
    return None


def _repeats_itself(before: str) -> bool:
    """A content word (no English function word) among the last AGAIN_WINDOW words before
    "again" was already said earlier in the same request."""
    said = [w.strip(".,;:!?()'\"").lower() for w in before.split()]
    window, earlier = said[-rules.AGAIN_WINDOW :], set(said[: -rules.AGAIN_WINDOW])
    return any(w and w not in rules.ENGLISH_MARKERS and w in earlier for w in window)


def _pasted(line: str) -> bool:
    return bool(rules.PASTED_LINE.match(line))


def directs(request: str) -> bool:
    """A sentence of the request asks for a change ("what's footer using? should be dimmer,
    don't modify the theme, look into the footer sources"; "can you add some sfx?"), reports a
    defect ("userMessageText is not used it seems?") or challenges the design ("why would we
    track …?")."""
    said = [s.strip() for s in turns.SENTENCE_END.split(request.strip())]
    return any(
        rules.POLITE_REQUEST.match(s)
        or (turns.DIRECTIVE.match(s) and not s.endswith("?"))
        or turns.DEFECT_REPORT.match(s)
        or turns.CHALLENGE.match(s)
        for s in said
    )


def untagged(request: str) -> str:
    """The request without a closing tag question ("…\n\nor do you have other suggestions?",
    "…, does that make sense?"): what it asks for is the statement before it."""
    sentences = turns.SENTENCE_END.split(request.strip())
    if len(sentences) > 1 and turns.TAG_QUESTION.match(sentences[-1]):
        return request.strip()[: -len(sentences[-1])].rstrip()
    return request
