"""What a recorded shell command was: a check (tests, type-check, build) and/or a file mutation."""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

# A check command: its exit status says whether the code is right.
_CHECK = re.compile(
    r"""(?x)
    ^(
        (python[0-9.]*\s+-m\s+)?pytest\b
      | python[0-9.]*\s+-m\s+unittest\b
      | (npm|pnpm|yarn|bun)\s+(run\s+)?(test|check|typecheck|type-check|lint|build)\b
      | (npx\s+|pnpm\s+exec\s+)?(tsc|jest|vitest|mocha|eslint)\b
      | go\s+(test|vet|build)\b
      | cargo\s+(test|check|build|clippy)\b
      | make\s+(test|check)\b
      | (mvn|gradle|\./gradlew)\s+\S*test\b
      | ruff\s+check\b
      | mypy\b
      | deno\s+(test|check)\b
    )""",
)

# Commands that may change files in the workspace.
_MUTATING = re.compile(
    r"""(?x)
    (^|[\s;&|(])(
        sed\s+(-[a-zA-Z]*i|--in-place)
      | perl\s+-[0-9acnpstuwlTUWXS]*i
      | tee\b | mv\b | cp\b | rm\b | touch\b | mkdir\b | ln\b | truncate\b | patch\b
      | git\s+checkout\b(?!\s+-[bB]\s+[^\s;&|()]+\s*(?:$|[;&|)\n]))  # not a new branch at HEAD
      | git\s+(restore|apply|reset|stash|mv|rm|revert|cherry-pick|merge|rebase|pull)\b
      | (npm|pnpm|yarn)\s+(init|install|i|add|create)\b
      | npx\b | cargo\s+(new|init|fmt|fix) | go\s+(mod|generate|fmt)\b
      | (black|isort|prettier|gofmt|rustfmt)\b | ruff\s+(format|check\s+.*--fix)
      | eslint\s+.*--fix | cat\s*<<
    )""",
)
_PIPE_TAIL = re.compile(r"\s*(2>&1|\|\s*(tail|head|cat|less|grep)\b[^|;&]*)+\s*$")


_SEGMENTS = re.compile(r"&&|\|\||;|\||\(|\)|\n")
_PREFIX = re.compile(r"^(\s*(\w+=\S*|env|time|timeout\s+\S+|nice|uv\s+run|poetry\s+run)\s+)*")


def is_check(command: str) -> bool:
    """True when a command of the line runs tests, a type-checker, a linter or a build."""
    for segment in _SEGMENTS.split(command):
        words = _PREFIX.sub("", segment.strip())
        if _CHECK.match(words):
            return True
    return False


def check_key(command: str) -> str:
    """Normalised form used to decide whether two runs are "the same check".

    Whitespace collapsed, trailing output filters (``2>&1 | tail -30``) removed.
    """
    key = " ".join(command.split())
    previous = None
    while previous != key:
        previous = key
        key = _PIPE_TAIL.sub("", key).strip()
    return key


_LEADING_CD = re.compile(r"^\s*cd\s+(\"[^\"]+\"|'[^']+'|[^\s;&|]+)\s*&&\s*")


def split_cd(command: str) -> tuple[str | None, str]:
    """``cd DIR && rest`` → ``(DIR, rest)``; other commands → ``(None, command)``."""
    match = _LEADING_CD.match(command)
    if not match:
        return None, command
    return match.group(1).strip("'\""), command[match.end() :]


def filtered_exit(command: str) -> bool:
    """True when a pipe filter follows the check, so the recorded exit code may be the filter's."""
    return "|" in command and bool(re.search(r"\|\s*(tail|head|grep|less|cat)\b", command))


def is_mutating(command: str) -> bool:
    """True when the command may change workspace files (so replay cannot know the result):
    a known writer anywhere in its text, a redirection into a file, or an in-place ``sed`` /
    ``perl`` however its options are spelled (``sed -E -i``, ``perl -0pi``, ``perl -p -i``),
    also run by ``xargs`` or ``find -exec``, and ``find -delete``."""
    if _MUTATING.search(command) or redirect_targets(command):
        return True
    return any(_mutates(c.argv) for c in simple_commands(command))


def _mutates(argv: Sequence[str]) -> bool:
    words = next(_argv([w for w in argv if w]), [])
    program, args = (words[0], words[1:]) if words else ("", [])
    if program == "find":
        return "-delete" in args or any(_mutates(run) for run, _ in find_actions(args))
    return program in ("sed", "perl") and in_place(program, args)


_SED_BUNDLED = frozenset("Ernsuz")
"""sed flags that may run together before ``-i`` (``-Ei``, ``-ni``)."""
_PERL_BUNDLED = frozenset("acnpstuwTUWXS")
"""perl switches without a value that may run together before ``-i`` (``-pi``)."""


def in_place(program: str, args: Sequence[str]) -> bool:
    """Whether ``sed`` / ``perl`` with ``args`` edit their files in place."""
    for arg in args:
        if arg == "--" or arg[:1] != "-":
            continue
        if program == "sed" and (arg.startswith("--in-place") or _sed_bundle(arg[1:])):
            return True
        if program == "perl" and _perl_bundle(arg[1:]):
            return True
    return False


def _sed_bundle(flags: str) -> bool:
    rest = flags.lstrip("".join(_SED_BUNDLED))
    return rest[:1] in ("i", "I") and set(flags[: len(flags) - len(rest)]) <= _SED_BUNDLED


def _perl_bundle(flags: str) -> bool:
    """``-pi``, ``-0pi``, ``-0777pi``, ``-i.bak``, ``-lpi``: perl reads a bundle switch by
    switch; ``-0`` and ``-l`` take the digits after them, a valued switch ends it."""
    i = 0
    while i < len(flags):
        ch = flags[i]
        if ch == "i":
            return True
        if ch in "0l":
            i += 1
            while i < len(flags) and (flags[i].isdigit() or flags[i] in "xX"):
                i += 1
            continue
        if ch not in _PERL_BUNDLED:
            return False
        i += 1
    return False


_XARGS_VALUED = frozenset("adEILnPs")
"""xargs options whose value is the next word when not attached."""


def xargs_command(args: Sequence[str]) -> tuple[list[str], str | None]:
    """The command ``xargs`` runs (its options taken off) and the ``-I`` / ``-i`` string its
    input replaces (None: the input words are appended)."""
    i, replace = 0, None
    while i < len(args) and args[i][:1] == "-" and args[i] != "-":
        arg = args[i]
        if arg == "--":
            i += 1
            break
        name, _, value = arg.partition("=")
        if arg.startswith("--"):
            replace = value or "{}" if name == "--replace" else replace
        elif arg[1] in "iI":
            replace = arg[2:] or (None if arg[1] == "i" else _at(args, i + 1)) or "{}"
            i += arg[1] == "I" and not arg[2:]
        elif arg[1] in _XARGS_VALUED and not arg[2:]:
            i += 1
        i += 1
    return list(args[i:]), replace


def _at(args: Sequence[str], i: int) -> str | None:
    return args[i] if i < len(args) else None


_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})


def find_actions(args: Sequence[str]) -> list[tuple[list[str], str]]:
    """The commands ``find`` runs for its files (``-exec CMD {} ;`` or ``+``), each with its
    terminator (``;``, ``+`` or '' when the line ends first)."""
    found: list[tuple[list[str], str]] = []
    i = 0
    while i < len(args):
        if args[i] in _EXEC:
            end = i + 1
            while end < len(args) and args[end] not in (";", "+"):
                end += 1
            found.append((list(args[i + 1 : end]), args[end] if end < len(args) else ""))
            i = end
        i += 1
    return found


def redirect_targets(command: str) -> list[str]:
    """Files named as output redirection targets (``> f``, ``>> f``, ``&> f``), excluding
    /dev/*: read through the shell's quoting, so a ``>`` inside a quoted argument is none."""
    return [t for c in simple_commands(command) for t in c.writes if not t.startswith("/dev/")]


UNRESOLVED = re.compile(r"[$`*?{}\[\]]")
"""Shell words still holding a variable, substitution or glob: no path can be known from them."""


HEREDOC = re.compile(r"<<-?\s*(['\"]?)(\w+)\1([^\n]*)\n.*?\n\s*\2\b", re.DOTALL)
"""A here-document: its body is data, the rest of its first line (``> out``) is still shell."""
SEPARATORS = "();<>|&\n"
PREFIX_WORDS = frozenset({"env", "time", "nohup", "command", "exec", "builtin", "nice", "xargs"})
ASSIGNMENT = re.compile(r"^\w+=")


def strip_comments(command: str) -> str:
    """``command`` without its comments: a ``#`` that starts a word outside quotes, to the end
    of its line (``a#b`` and ``'# x'`` are words, as in the shell)."""
    out: list[str] = []
    quote, i, size = "", 0, len(command)
    while i < size:
        ch = command[i]
        if quote:
            if ch == quote:
                quote = ""
            elif ch == "\\" and quote == '"':
                out.append(command[i : i + 2])
                i += 2
                continue
        elif ch in "'\"":
            quote = ch
        elif ch == "\\":
            out.append(command[i : i + 2])
            i += 2
            continue
        elif ch == "#" and (i == 0 or command[i - 1] in " \t\n;&|()"):
            end = command.find("\n", i)
            i = size if end < 0 else end
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def _lex(command: str) -> list[str]:
    """Shell words and operators (runs of ``SEPARATORS``); ValueError on unbalanced quotes."""
    text = HEREDOC.sub(lambda m: f" {m.group(3)}", strip_comments(command))
    lexer = shlex.shlex(text, posix=True, punctuation_chars=SEPARATORS)
    lexer.whitespace = " \t\r"
    lexer.whitespace_split = True
    lexer.commenters = ""
    return list(lexer)


@dataclass
class SimpleCommand:
    """One simple command of a line: its words and the files it redirects output into."""

    argv: list[str] = field(default_factory=list)
    """Words, redirections and their file descriptors taken out."""
    writes: list[str] = field(default_factory=list)
    """Targets of ``>``, ``>>``, ``&>``, ``>|`` (not of ``>&`` duplications)."""
    depth: int = 0
    """Subshell nesting: a ``cd`` inside ``( … )`` does not outlive it."""
    piped: bool = False
    """Its output is the next command's input (``find … | xargs …``)."""


def simple_commands(command: str) -> list[SimpleCommand]:
    """The simple commands of a line, in order; none when its quotes do not balance (the
    shell would not have run it)."""
    try:
        return _commands(_lex(command))
    except ValueError:
        return []


def _commands(tokens: list[str]) -> list[SimpleCommand]:
    """Tokens from :func:`_lex` split into simple commands, redirections taken out."""
    found, current, depth, i = [], SimpleCommand(), 0, 0
    while i < len(tokens):
        token = tokens[i]
        operator = bool(token) and all(ch in SEPARATORS for ch in token)
        if operator and ("<" in token or ">" in token):
            if current.argv and current.argv[-1].isdigit():  # 2>, 1>>: a descriptor
                current.argv.pop()
            target = tokens[i + 1] if i + 1 < len(tokens) else ""
            if ">" in token and "&" not in token.replace("&>", "") and "<" not in token:
                current.writes.append(target)
            i += 2
            continue
        if operator:
            current.piped = token.endswith(("|", "|&")) and not token.endswith("||")
            found.append(current)
            depth += token.count("(") - token.count(")")
            current = SimpleCommand(depth=max(depth, 0))
        else:  # a word, '' included (``sed -i ''`` passes an empty suffix)
            current.argv.append(token)
        i += 1
    found.append(current)
    return [c for c in found if c.argv or c.writes]


def programs(command: str) -> Iterator[list[str]]:
    """The argv (program first, wrappers and assignments dropped) of each simple command.

    Quote-aware: ``python3 -c "…open('f')…"`` is one command, not a call of ``open``; a
    redirection's target is no program. Unbalanced quotes: the line's words, as one command.
    """
    try:
        found = _commands(_lex(command))
    except ValueError:
        found = [SimpleCommand(argv=re.split(r"[\s;&|()]+", command))]
    for cmd in found:
        yield from _argv([w for w in cmd.argv if w])


def _argv(words: list[str]) -> Iterator[list[str]]:
    while words and (ASSIGNMENT.match(words[0]) or words[0] in PREFIX_WORDS or words[0] == "$"):
        words = xargs_command(words[1:])[0] if words[0] == "xargs" else words[1:]
        if words and words[0].lstrip("-").isdigit():  # nice -n 5
            words = words[1:]
    if words and words[0] == "timeout":
        words = words[2:] if len(words) > 2 else []
    if words:
        yield [posixpath.basename(words[0]), *words[1:]]
