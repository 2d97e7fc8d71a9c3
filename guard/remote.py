"""Effects of git, network and package-manager commands (``git log --all``, ``curl``, ``pip``)."""

from __future__ import annotations

import re

from trajforge.guard import gitrefs
from trajforge.guard.argv import Sink, copy_move, operands, paths

URL = re.compile(r"^(?:[a-z][a-z0-9+.-]*://|git@)\S+", re.IGNORECASE)

GIT_HISTORY = frozenset(
    {"log", "reflog", "rev-list", "fsck", "show", "cat-file", "for-each-ref", "show-ref",
     "fetch", "pull", "ls-remote", "shortlog", "whatchanged", "blame", "branch", "tag", "stash",
     "describe", "rev-parse", "bundle", "verify-pack", "count-objects", "unpack-objects",
     "show-branch"}
)  # fmt: skip


# Package-manager words after which packages (or index settings) come from an index.
INDEX_VERBS = frozenset(
    {"install", "add", "i", "download", "config", "sync", "set", "index", "fetch", "update",
     "lock", "source"}
)  # fmt: skip


def _git(sink: Sink, prog: str, args: list[str]) -> None:
    i = 0
    while i < len(args) and args[i].startswith("-"):
        i += 2 if args[i] in ("-C", "-c", "--git-dir", "--work-tree") else 1
    sub, rest = (args[i], args[i + 1 :]) if i < len(args) else ("", [])
    detail = " ".join(["git", sub, *rest])
    if sub in GIT_HISTORY:
        sink.add("git-history", sub, detail=detail)
    _git_refs(sink, sub, rest, detail)
    if sub in ("clone", "fetch", "pull", "ls-remote", "submodule", "remote", "push"):
        urls = [w for w in rest if URL.match(w)]
        sink.add("network", urls[0] if urls else f"git {sub}", detail=detail)
    if sub in ("checkout", "restore") and "--" in rest:
        paths(sink, "write", rest[rest.index("--") + 1 :])
    elif sub == "restore":
        paths(sink, "write", operands(rest, frozenset({"-s", "--source"})))
    elif sub == "rm":
        paths(sink, "delete", operands(rest))
    elif sub == "clean":
        sink.add("delete", sink.path("."), detail=detail, tree=True)
    elif sub == "mv":
        copy_move(sink, "mv", rest)
    elif sub == "show" and any(":" in w for w in rest):
        paths(sink, "read", [w.split(":", 1)[1] for w in rest if ":" in w and w.split(":", 1)[1]])


def _git_refs(sink: Sink, sub: str, rest: list[str], detail: str) -> None:
    """Revisions outside the task's own history, refs listed, refs the agent creates."""
    for name in gitrefs.created(sub, rest):
        sink.add("git-history", "create-ref", detail=f"create-ref {name}")
    for word, certain in gitrefs.revisions(sub, rest):
        names, syntax = gitrefs.sides(word, sub)
        for name in names:
            kind = gitrefs.kind_of(name, certain or syntax, sink.own_ref)
            if kind is not None:
                sink.add("git-history", f"{kind} {name}", detail=f"{kind} {name}: {detail}")
    if sub == "branch":
        listing = gitrefs.branch_listing(rest)
        if listing is not None:
            sink.add("git-history", "ref-list", detail=f"ref-list {listing}: {detail}")


def _net(sink: Sink, prog: str, args: list[str]) -> None:
    urls = [w for w in args if URL.match(w)]
    if not urls:
        hosts = [w for w in operands(args) if "/" not in w[:1]]
        urls = [w for w in hosts if "." in w or w.startswith("localhost")][:1]
    sink.add("network", urls[0] if urls else prog, detail=" ".join([prog, *args]))
    for flag in ("-o", "--output", "-O", "--output-document"):
        if flag in args and args.index(flag) + 1 < len(args):
            sink.add("write", sink.path(args[args.index(flag) + 1]))
    for i, word in enumerate(args):
        if word in ("-d", "--data", "--data-binary", "-F", "-T", "--upload-file") and i + 1 < len(
            args
        ):
            value = args[i + 1]
            if value.startswith("@") or word in ("-T", "--upload-file"):
                sink.add("read", sink.path(value.lstrip("@")))


def _package(sink: Sink, prog: str, args: list[str]) -> None:
    detail = " ".join([prog, *args])
    if any(a in INDEX_VERBS for a in args):
        sink.add("network", f"{prog} index", detail=detail)
    sink.add("exec", prog, detail=detail)


def _remote(sink: Sink, prog: str, args: list[str]) -> None:
    sink.add("network", next((w for w in operands(args) if "@" in w or ":" in w), prog),
             detail=" ".join([prog, *args]))  # fmt: skip
