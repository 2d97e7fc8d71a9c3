"""Self-contained requests: can a thread's request be read without the session?

``@path`` mentions are resolved against the files the session knew and host paths made
relative to the workspace; a request that stays unresolved, is too short, is mostly pasted
output, or points back into the conversation cannot stand alone (``not_self_contained``).
Words are counted in any script and quoted or speaker-tagged prose is the person's own
(:mod:`.triage_text`); the word lists are in :mod:`.triage_rules`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from trajforge.reconstruct import triage_rules as rules
from trajforge.reconstruct.paths import PathViolation, confine
from trajforge.reconstruct.triage_text import is_question, quoted_prose, word_count


@dataclass(frozen=True)
class Resolved:
    """A request with its ``@path`` references and host paths made workspace-relative."""

    text: str
    """The rewritten request."""
    problem: str | None
    """Why it cannot stand alone, or None."""


def resolve(text: str, root: str | None, known: Iterable[str], later: bool = False) -> Resolved:
    """Resolve ``@path`` mentions against the session's files and rewrite host paths."""
    paths = set(known)
    dirs = {p.rsplit("/", i)[0] for p in paths for i in range(1, p.count("/") + 1)}
    problem = None

    def at(m: re.Match[str]) -> str:
        nonlocal problem
        ref = m.group("ref")
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
    if problem is None:
        problem = _dangling(rewritten, later)
    return Resolved(rewritten, problem)


def _relative(ref: str, root: str | None) -> str | None:
    try:
        return confine(ref, root)
    except PathViolation:
        return None


def host_paths(text: str, root: str | None) -> str:
    """``/Users/me/proj/src/a.py`` → ``src/a.py`` (and the Windows spelling)."""
    if not root:
        return text
    for spelling in {root, root.replace("/", "\\")}:
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


def _dangling(text: str, later: bool) -> str | None:
    """A request that cannot be read alone: too short, pasted output, pointing back."""
    prose, pasted = _prose(text)
    words = word_count(prose)
    if words < rules.MIN_REQUEST_WORDS:
        return f"too short to state a task ({words} word(s))"
    if (m := rules.BACK_REFERENCE.search(prose)) is not None:
        return f"refers to the conversation ({m.group(0)!r})"
    if pasted and words < rules.MIN_PROSE_WORDS:
        return f"pasted output with little request around it ({words} word(s))"
    return _points_back(prose, later, words <= rules.SHORT_REQUEST_WORDS)


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


def _points_back(prose: str, later: bool, short: bool) -> str | None:
    """A later turn that corrects the assistant, or a short one that points back."""
    if later:
        while (m := rules.CHAT_OPENER.match(prose)) is not None:
            if rules.CORRECTION.match(m.group(0)):
                return f"answers the assistant ({m.group(0).strip()!r}…)"
            prose = prose[m.end() :]  # "ok, …" / "oh, …": judge what follows
    if rules.DEPENDENT_START.match(prose):
        return "continues the previous turn"
    anchored = bool(rules.ANCHOR.search(prose))
    if short and (m := rules.STRONG_DEICTIC.search(prose)) is not None:
        return f"refers back ({m.group(0)!r})"
    if later and short and not anchored and (m := rules.DEICTIC.search(prose)) is not None:
        return f"refers back ({m.group(0)!r}) without naming what"
    if later and short and not anchored and not is_question(prose):
        return "a short follow-up that names no file, identifier or value"
    return None


def _pasted(line: str) -> bool:
    return bool(rules.PASTED_LINE.match(line))
