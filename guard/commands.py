"""Effects of one simple command given its evaluated argv (``cat``, ``rm``, ``git``, ``curl``...).

The shell walker (:mod:`trajforge.guard.shell`) evaluates words and hands each command's argv
here; commands that run other commands (``bash -c``, ``eval``, ``sudo``, ``xargs``,
``find -exec``, ``python -c``) call back into the walker through :class:`Sink`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from trajforge.guard.argv import Handler, Sink, copy_move, operands, paths
from trajforge.guard.effects import EffectKind
from trajforge.guard.envcmds import DUMP_OPTION_LETTERS, ENV_DUMPERS, _env, env_dump_builtin
from trajforge.guard.remote import _git, _net, _package, _remote
from trajforge.guard.search import LOCATES, _fd, _find, _locate

SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh", "ash", "fish"})
PYTHONS = re.compile(r"^(python|python3|python3\.\d+|python2|pypy3?)$")
PREFIXES = frozenset(
    {"sudo", "nohup", "time", "nice", "ionice", "stdbuf", "command", "builtin", "exec", "doas"}
)
READERS = frozenset(
    {
        "cat", "tac", "head", "tail", "less", "more", "nl", "bat", "batcat", "od", "hexdump",
        "strings", "file", "wc", "sort", "uniq", "cut", "diff", "cmp", "comm", "md5sum",
        "sha1sum", "sha256sum", "paste", "column", "fold", "fmt", "iconv", "base32", "xxd",
        "base64", "zcat", "gunzip", "bzcat", "xzcat", "pr", "expand", "look", "split", "csplit",
    }
)  # fmt: skip
LISTERS = frozenset({"ls", "tree", "du", "stat", "realpath", "readlink", "dir", "exa", "eza"})
EDITORS = frozenset({"vim", "vi", "nvim", "nano", "emacs", "ed", "code"})
PATTERN_FIRST = frozenset({"grep", "egrep", "fgrep", "rg", "ag", "ack", "awk", "gawk", "jq", "yq"})
NET = frozenset({"curl", "wget", "http", "https", "httpie", "nc", "ncat", "netcat", "telnet"})
NET_REMOTE = frozenset({"ssh", "scp", "sftp", "rsync", "ftp", "lftp"})
PKG = frozenset(
    {"pip", "pip3", "uv", "npm", "pnpm", "yarn", "bun", "poetry", "pipx", "conda", "cargo"}
)


def _reader(sink: Sink, prog: str, args: list[str]) -> None:
    if prog == "xxd" and any(a.startswith("-r") for a in args):
        return
    paths(sink, "read", operands(args, frozenset({"-n", "-c", "-t", "-k", "-f", "-d"})))


_GREP_VALUE_OPTS = frozenset(
    {"-e", "-f", "-A", "-B", "-C", "-m", "--include", "--exclude", "-g", "-t", "-T", "--glob",
     "--type", "-F", "-v", "--arg", "--argjson"}
)  # fmt: skip


def _pattern_first(sink: Sink, prog: str, args: list[str]) -> None:
    awk = prog in ("awk", "gawk")
    words = operands(args, frozenset({"-F", "-v"}) if awk else _GREP_VALUE_OPTS)
    explicit = any(a in ("-e", "-f", "--regexp") for a in args)
    files = words if explicit else words[1:]
    recursive = prog in ("rg", "ag", "ack") or any(
        re.fullmatch(r"-[a-zA-Z]*[rR][a-zA-Z]*|--recursive|--dereference-recursive", a)
        for a in args
    )
    if not files and recursive:
        files = ["."]
    from trajforge.guard.search import include_patterns

    globs = include_patterns(args) if recursive else []
    for word in files:
        if word and not word.startswith("/dev/"):
            sink.add("read", sink.path(word), tree=recursive)
            for pattern in globs:
                sink.add("search", sink.path(word), detail=f"--include {pattern}")


def _sed(sink: Sink, prog: str, args: list[str]) -> None:
    inplace = any(a.startswith("-i") or a.startswith("--in-place") for a in args)
    in_mac = "-i" in args and args.index("-i") + 1 < len(args) and args[args.index("-i") + 1] == ""
    words = [a for a in args if a != ""] if in_mac else args
    ops = operands(words, frozenset({"-e", "-f", "-l"}))
    explicit = any(a in ("-e", "-f", "--expression") for a in args)
    files = ops if explicit else ops[1:]
    script = " ".join(ops[:1]) if not explicit else ""
    kind: EffectKind = "write" if inplace else "read"
    for word in files:
        sink.add(kind, sink.path(word), detail=f"sed {script}" if inplace else "")


def _delete(sink: Sink, prog: str, args: list[str]) -> None:
    tree = any(re.fullmatch(r"-[a-zA-Z]*[rR][a-zA-Z]*|--recursive", a) for a in args)
    paths(sink, "delete", operands(args), tree=tree or prog == "rmdir")


def _write_all(sink: Sink, prog: str, args: list[str]) -> None:
    opts = frozenset({"-s", "--size", "-r", "-d", "-t", "-m", "-o", "-g", "--mode"})
    words = operands(args, opts)
    if prog in ("chmod", "chown", "chgrp", "setfacl", "chattr"):
        words = words[1:]
    detail = sink.stdin_text() or "" if prog == "tee" else ""
    for word in words:
        if word and not word.startswith("/dev/"):
            sink.add("write", sink.path(word), detail=detail)


def _lister(sink: Sink, prog: str, args: list[str]) -> None:
    paths(sink, "list", operands(args) or ["."], tree="-R" in args or prog in ("tree", "du"))


def _shell(sink: Sink, prog: str, args: list[str]) -> None:
    for i, word in enumerate(args):
        if word in ("-c", "-lc", "-ic", "-cl") or re.fullmatch(r"-[a-z]*c[a-z]*", word):
            if i + 1 < len(args):
                sink.shell(args[i + 1], f"{prog} -c")
            return
        if not word.startswith("-"):
            if not sink.script(sink.path(word), f"{prog} script"):
                sink.add("exec", sink.path(word), detail=" ".join([prog, *args]))
            return
    text = sink.stdin_text()
    if text is not None:
        sink.shell(text, f"| {prog}")
    else:
        sink.add("unparsed", prog, detail=f"{prog} reads commands from an unknown stdin")


def _python(sink: Sink, prog: str, args: list[str]) -> None:
    for i, word in enumerate(args):
        if word == "-c" and i + 1 < len(args):
            sink.python(args[i + 1], f"{prog} -c")
            return
        if word == "-m" and i + 1 < len(args):
            module, rest = args[i + 1], args[i + 2 :]
            if module == "pip":
                _package(sink, "pip", rest)
            sink.add("exec", f"{prog} -m {module}", detail=" ".join([prog, *args]))
            return
        if word == "-" or not word.startswith("-"):
            break
    script = next((w for w in args if not w.startswith("-")), None)
    if script is not None and script != "-":
        if not sink.script(sink.path(script), f"{prog} script"):
            sink.add("exec", prog, detail=" ".join([prog, *args]))
        return
    text = sink.stdin_text()
    if text is not None:
        sink.python(text, f"{prog} stdin")
    else:
        sink.add("unparsed", prog, detail=f"{prog} reads code from an unknown stdin")


def _eval(sink: Sink, prog: str, args: list[str]) -> None:
    if prog in ("source", "."):
        if args and not sink.script(sink.path(args[0]), prog):
            sink.add("read", sink.path(args[0]))
        return
    sink.shell(" ".join(args), prog)


def _prefix(sink: Sink, prog: str, args: list[str]) -> None:
    ops = {"timeout": 1, "nice": 0, "stdbuf": 0, "sudo": 0, "ionice": 0}
    rest = list(args)
    while rest and rest[0].startswith("-"):
        flag = rest.pop(0)
        if prog in ("sudo", "doas") and flag in ("-u", "-g", "-C") and rest:
            rest.pop(0)
    rest = rest[ops.get(prog, 0) :]
    if rest:
        sink.argv(rest, prog)


def _xargs(sink: Sink, prog: str, args: list[str]) -> None:
    rest = operands(args, frozenset({"-I", "-n", "-P", "-d", "-L", "-s", "-a", "-E"}))
    placeholder = (
        args[args.index("-I") + 1] if "-I" in args and args.index("-I") + 1 < len(args) else None
    )
    inner = ["*" if w == placeholder else w for w in rest] or ["echo"]
    sink.argv([*inner, "*"] if placeholder is None else inner, "xargs")


def _editor(sink: Sink, prog: str, args: list[str]) -> None:
    paths(sink, "write", operands(args))


def _dd(sink: Sink, prog: str, args: list[str]) -> None:
    for word in args:
        if word.startswith("if="):
            sink.add("read", sink.path(word[3:]))
        elif word.startswith("of="):
            sink.add("write", sink.path(word[3:]))


def _ln(sink: Sink, prog: str, args: list[str]) -> None:
    words = operands(args, frozenset({"-t", "-S"}))
    if len(words) >= 2:
        sink.add("read", sink.path(words[0]))
        sink.add("write", sink.path(words[-1]))


def _tar(sink: Sink, prog: str, args: list[str]) -> None:
    for i, word in enumerate(args):
        if word in ("-C", "--directory") and i + 1 < len(args):
            sink.add("write", sink.path(args[i + 1]), tree=True)
    paths(sink, "read", operands(args, frozenset({"-f", "-C", "--directory", "--file"})), True)


def _patch(sink: Sink, prog: str, args: list[str]) -> None:
    from trajforge.guard.patchpaths import patch_paths

    text = sink.stdin_text()
    for kind, path in patch_paths(text or ""):
        whole = kind == "create"
        sink.add("write" if whole else kind, sink.path(path), detail=text or "", whole=whole)
    if text is None:
        sink.add("write", sink.path("."), detail=" ".join([prog, *args]), tree=True)


HANDLERS: dict[str, Handler] = {
    **dict.fromkeys(READERS, _reader),
    **dict.fromkeys(PATTERN_FIRST, _pattern_first),
    **dict.fromkeys(LISTERS, _lister),
    **dict.fromkeys(EDITORS, _editor),
    **dict.fromkeys(SHELLS, _shell),
    **dict.fromkeys(PREFIXES, _prefix),
    **dict.fromkeys(ENV_DUMPERS, _env),
    **dict.fromkeys(NET, _net),
    **dict.fromkeys(NET_REMOTE, _remote),
    **dict.fromkeys(PKG, _package),
    **dict.fromkeys(("rm", "unlink", "shred", "rmdir"), _delete),
    **dict.fromkeys(("touch", "truncate", "tee", "chmod", "chown", "chgrp", "chattr"), _write_all),
    **dict.fromkeys(("cp", "mv", "install", "rsync"), copy_move),
    **dict.fromkeys(("eval", "source", "."), _eval),
    **dict.fromkeys(("timeout",), _prefix),
    **dict.fromkeys(("patch", "applypatch", "apply_patch"), _patch),
    "sed": _sed,
    "gsed": _sed,
    **dict.fromkeys(LOCATES, _locate),
    "find": _find,
    "fd": _fd,
    "fdfind": _fd,
    "xargs": _xargs,
    "git": _git,
    "dd": _dd,
    "ln": _ln,
    "tar": _tar,
}


def command_effects(sink: Sink, argv: Sequence[str]) -> None:
    """Report the effects of one evaluated command."""
    if not argv:
        return
    prog = argv[0].rsplit("/", 1)[-1] if "/" in argv[0] else argv[0]
    args = list(argv[1:])
    if prog in ("set", *DUMP_OPTION_LETTERS):
        if env_dump_builtin(prog, args):
            sink.add("env-dump", "*", detail=" ".join(argv))
        return
    handler = HANDLERS.get(prog)
    if handler is None and PYTHONS.match(prog):
        handler = _python
    if handler is not None:
        handler(sink, prog, args)
        if handler in (_prefix, _env, _xargs):
            return
    elif argv[0].startswith(("./", "/", "~")) and sink.script(sink.path(argv[0]), "script"):
        return
    else:
        paths(sink, "read", [a for a in args if _path_like(a)])
    sink.add("exec", prog, detail=" ".join(argv))


_PATH_LIKE = re.compile(r"^(~|\.{1,2}/|/)|/|\.[A-Za-z0-9]{1,6}$")


def _path_like(word: str) -> bool:
    """An argument of an unknown program that names a file (it may read it)."""
    return (
        not word.startswith("-")
        and "://" not in word
        and "=" not in word
        and len(word) < 4096
        and _PATH_LIKE.search(word) is not None
    )
