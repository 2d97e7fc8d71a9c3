"""Reading a request's text in any language: its words, whether the English rules apply,
and which of its lines are the person's prose rather than pasted output.

Words are runs of letters in any script (a Chinese sentence is not "2 words"); scripts written
without spaces are counted by characters (:data:`~.triage_rules.CHARS_PER_WORD`). The rules that
read meaning — questions, polite requests, continuations — are English, so they apply only to
text :func:`english` accepts: by default other text is neither an acknowledgement nor a question.
"""

from __future__ import annotations

import re
import unicodedata

from trajforge.reconstruct import triage_rules as rules
from trajforge.reconstruct.triage_rules_qa import QUESTION
from trajforge.reconstruct.triage_rules_turns import BY_HAND

APOSTROPHES = "'’"


def _unspaced(ch: str) -> bool:
    code = ord(ch)
    return any(lo <= code <= hi for lo, hi in rules.UNSPACED_SCRIPTS)


def _runs(text: str) -> list[tuple[str, bool]]:
    """Runs of letters (and their marks), each with whether its script is unspaced."""
    runs: list[tuple[str, bool]] = []
    current: list[str] = []
    kind = False
    for ch in text:
        letter = unicodedata.category(ch)[0] in "LM"
        inner = ch in APOSTROPHES and bool(current) and not kind
        if letter and current and _unspaced(ch) != kind:
            runs.append(("".join(current), kind))
            current = []
        if letter or inner:
            if not current:
                kind = _unspaced(ch)
            current.append(ch)
        elif current:
            runs.append(("".join(current), kind))
            current = []
    if current:
        runs.append(("".join(current), kind))
    return runs


def tokens(text: str) -> list[str]:
    """The words of ``text`` in any script; an unspaced run is cut into CHARS_PER_WORD pieces."""
    found: list[str] = []
    size = rules.CHARS_PER_WORD
    for run, unspaced in _runs(text):
        run = run.strip(APOSTROPHES)
        if not run:
            continue
        if unspaced:
            found.extend(run[i : i + size] for i in range(0, len(run), size))
        else:
            found.append(run)
    return found


def word_count(text: str) -> int:
    """How many words ``text`` has, in any script."""
    return len(tokens(text))


def english(text: str) -> bool:
    """Whether the English rules can read ``text`` (text with no words at all counts as
    English: there is nothing else to read it as)."""
    found = [w.lower() for w in tokens(rules.CODE_TOKEN.sub(" ", text))]
    if not found:
        return True
    foreign_script = sum(1 for w in found if not w.isascii() and not _latin(w))
    if foreign_script > rules.FOREIGN_SCRIPT_SHARE * len(found):
        return False
    ours = sum(1 for w in found if w in rules.ENGLISH_MARKERS)
    theirs = sum(1 for w in found if w in rules.FOREIGN_MARKERS)
    if ours < theirs:
        return False
    return ours > 0 or len(found) < rules.ENGLISH_MIN_WORDS


def is_question(text: str) -> bool:
    """The request asks for information (English only: "Kan du endre fargen på knappen til
    blå?" asks for a change, and no rule here reads Norwegian)."""
    return bool(QUESTION.search(text)) and english(text)


def _latin(word: str) -> bool:
    """Latin letters with diacritics ("på", "café") are Latin script, not another one."""
    return all("LATIN" in unicodedata.name(ch, "") for ch in word if ch.isalpha())


def unspaced_ack(text: str) -> bool:
    """The text splits wholly into UNSPACED_ACKS ("好的，继续")."""
    runs = [run for run, unspaced in _runs(text)]
    return bool(runs) and all(_splits(run) for run in runs)


def _splits(run: str) -> bool:
    ok = [True] + [False] * len(run)
    for end in range(1, len(run) + 1):
        ok[end] = any(ok[start] and run[start:end] in rules.UNSPACED_ACKS for start in range(end))
    return ok[-1]


QUOTE = re.compile(r"^\s*(?:>\s?)+")
PLAIN = re.compile(r"^[\"'(“‘¿¡*_]*[^\W\d_][\w'’-]*[\"')”’.,;:!?*_…]*$")
NEUTRAL = re.compile(r"^[\W\d_]*$")


def quoted_prose(line: str) -> str | None:
    """The prose of a line behind ``> `` or a speaker tag, or None when it is no such line or
    what follows is not prose (an echoed command, a log line)."""
    if (m := QUOTE.match(line)) is not None:
        inner = line[m.end() :]
    elif (tag := speaker_tag(line)) is not None:
        inner = line[tag:]
    else:
        return None
    return inner if prose_shaped(inner) else None


def speaker_tag(line: str) -> int | None:
    """Where the text after a leading ``[Name]`` speaker tag starts, or None."""
    m = rules.SPEAKER_TAG.match(line)
    if m is None:
        return None
    name = m.group("name").strip()
    if len(name) < 2 or not any(ch.isalpha() for ch in name):
        return None
    if len(name.split()) > rules.SPEAKER_MAX_WORDS:
        return None  # "[Request interrupted by user for tool use]": a notice, not a name
    if name.lower() in rules.NOT_SPEAKERS or rules.GATEWAY_PREFIX.match(line):
        return None
    return m.end()


def prose_shaped(text: str) -> bool:
    """Enough plain words, and mostly plain words, to be a sentence someone wrote."""
    counted = [t for t in text.split() if not NEUTRAL.match(t)]
    plain = sum(1 for t in counted if PLAIN.match(t))
    return plain >= rules.QUOTED_PROSE_WORDS and plain >= rules.QUOTED_PROSE_SHARE * len(counted)


def hand_edit(text: str) -> str | None:
    """The words of a turn saying the person changed the workspace themself
    (:data:`~.triage_rules_turns.BY_HAND`), or None."""
    m = BY_HAND.search(text) if english(text) else None
    return m.group(0) if m else None
