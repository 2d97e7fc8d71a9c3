"""Which revisions a git command reads: the task's own history, another ref, or maybe another ref.

``git log``, ``git show origin/fix:src/app.py``, ``git diff main..fix``, ``git checkout
origin/fix -- src/app.py`` or ``git rebase upstream/main`` read commits outside the history the
task starts from, where an upstream fix can be. Revisions are classified from their syntax:

* own — ``HEAD`` and its ancestors (``HEAD~3``, ``@^``), commit ids, ``-`` (the previous
  checkout) and branches or tags the agent created earlier in the rollout;
* other — remote-tracking refs (``origin/…``, ``refs/…``), ``@{upstream}``, the stash, ``:/text``
  (a commit found by message across every ref); reflog entries (``HEAD@{2}``) are ``reflog``;
* maybe — a bare name (``main``, ``fix-123``) that is not the agent's: another branch or tag,
  or the branch the task is on, or (where git also takes paths) a file.

``A..B`` in log-like commands reads only what B reaches; in ``diff`` both ends, ``A...B`` in
``diff`` only B (the merge base is in both histories).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Literal

RefKind = Literal["other-ref", "maybe-ref", "reflog"]

OWN_NAMES = frozenset(
    {"HEAD", "@", "ORIG_HEAD", "FETCH_HEAD", "MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD",
     "AUTO_MERGE", "-"}
)  # fmt: skip
# Names that are another ref whatever the repository holds: remote-tracking branches under the
# remotes every clone has (origin; upstream by convention), the full ref namespace, the stash.
OTHER_PREFIXES = ("refs/", "remotes/", "origin/", "upstream/")
OTHER_NAMES = frozenset({"stash", "origin", "upstream"})
UPSTREAM_SELECTORS = frozenset({"u", "upstream", "push"})
COMMIT_ID = re.compile(r"[0-9a-fA-F]{7,40}")
_SUFFIX = re.compile(r"(?:[~^]\d*|\^\{[^}]*\}|\^[!@-])+$")
_GLOB = frozenset("*?[")

_LOG_OPTS = frozenset(
    {"-n", "--max-count", "--skip", "-S", "-G", "-L", "--author", "--committer", "--grep",
     "--since", "--until", "--after", "--before", "--format", "--pretty", "--date", "-O",
     "--diff-filter", "--encoding", "-U", "--unified", "--stat-width", "--output"}
)  # fmt: skip
LOG_LIKE = frozenset({"log", "shortlog", "whatchanged", "rev-list", "cherry", "format-patch"})
# Subcommand → options that take a value (the value is not a revision).
AMBIGUOUS: dict[str, frozenset[str]] = {
    **dict.fromkeys(("log", "shortlog", "whatchanged", "rev-list", "show", "diff-tree"), _LOG_OPTS),
    "diff": _LOG_OPTS,
    "blame": frozenset({"-L", "-S", "--contents", "--date", "--ignore-rev", "--ignore-revs-file"}),
    "annotate": frozenset({"-L", "-S", "--contents"}),
    "rev-parse": frozenset({"--git-path", "--prefix", "--default", "--resolve-git-dir"}),
    "show-branch": frozenset({"--more", "--reflog", "--color"}),
}
# Subcommands whose operands are all revisions (never paths), with their value options.
REV_ONLY: dict[str, frozenset[str]] = {
    "cherry-pick": frozenset({"-m", "--mainline", "-X", "--strategy", "--strategy-option"}),
    "merge": frozenset({"-m", "-F", "--file", "-X", "-s", "--strategy", "--strategy-option"}),
    "rebase": frozenset({"-X", "-s", "--strategy", "--strategy-option", "-x", "--exec"}),
    "cherry": frozenset(),
    "range-diff": frozenset(),
    "read-tree": frozenset({"--prefix", "--index-output"}),
    "format-patch": frozenset(
        {"-o", "--output-directory", "-v", "--reroll-count", "--subject-prefix"}
    ),
}
REV_VALUE_OPTS = frozenset({"--onto", "--source", "-s", "--base", "--fork-point"})


def split_words(args: Sequence[str], with_value: frozenset[str]) -> tuple[list[str], list[str]]:
    """(operands before ``--``, values of revision-valued options such as ``--onto X``)."""
    words: list[str] = []
    revs: list[str] = []
    i = 0
    while i < len(args):
        word = args[i]
        if word == "--":
            break
        name, eq, value = word.partition("=")
        if name in REV_VALUE_OPTS:
            if eq:
                revs.append(value)
            elif i + 1 < len(args):
                revs.append(args[i + 1])
                i += 1
        elif word in with_value:
            i += 1
        elif not word.startswith("-") or word == "-":
            words.append(word)
        i += 1
    return words, revs


def _path_like(word: str) -> bool:
    return (
        word in (".", "..")
        or word.startswith(("./", "../", "/", "~"))
        or "/../" in word
        or "." in word
        or "/" in word
        or not _GLOB.isdisjoint(word)
    )


def sides(word: str, sub: str) -> tuple[list[str], bool]:
    """The revision names ``word`` reads (range ends, the rev of ``rev:path``), and whether the
    syntax says it is a revision at all."""
    if word.startswith(":/"):
        return [":/"], True
    if ":" in word:
        return [word.split(":", 1)[0]], True
    for sep in ("...", ".."):
        if sep in word and not word.startswith((".", "/")):
            left, right = word.split(sep, 1)
            if sub in LOG_LIKE:
                return ([left, right] if sep == "..." else [right]), True
            if sub == "diff" and sep == "...":
                return [right], True
            return [left, right], True
    if word.startswith("^"):
        return ([] if sub in LOG_LIKE else [word[1:]]), True
    return [word], _SUFFIX.search(word) is not None and not _path_like(_SUFFIX.sub("", word))


def kind_of(name: str, certain: bool, own: Callable[[str], bool]) -> RefKind | None:
    """Classify one revision name (suffixes such as ``~2`` allowed); None: own history or a path."""
    base = _SUFFIX.sub("", name) if name not in OWN_NAMES else name
    if "@{" in base:
        selector = base.partition("@{")[2]
        selector = selector.rstrip("}")
        if selector.startswith("-"):
            return None  # @{-1}: the branch checked out before, the agent's own move
        if selector in UPSTREAM_SELECTORS:
            return "other-ref"
        return "reflog"
    if not base or base in OWN_NAMES or COMMIT_ID.fullmatch(base) or own(base):
        return None
    if base.startswith(OTHER_PREFIXES) or base in OTHER_NAMES or base == ":/":
        return "other-ref"
    if certain or not _path_like(base):
        return "maybe-ref"
    return None


def revisions(sub: str, args: Sequence[str]) -> list[tuple[str, bool]]:
    """(word, certainly a revision) for each revision-or-path operand of ``git sub args``."""
    if sub in AMBIGUOUS:
        words, revs = split_words(args, AMBIGUOUS[sub])
        return [(w, False) for w in words] + [(r, True) for r in revs]
    if sub in REV_ONLY:
        words, revs = split_words(args, REV_ONLY[sub])
        return [(w, True) for w in [*words, *revs]]
    if sub in ("ls-tree", "archive"):
        opts = frozenset({"--format", "-o", "--output", "--prefix", "--remote", "--abbrev"})
        words, revs = split_words(args, opts)
        return [(w, True) for w in [*words[:1], *revs]]
    if sub in ("checkout", "switch", "reset", "restore", "worktree"):
        return _moving(sub, args)
    if sub == "grep":
        opts = frozenset({"-e", "-f", "-A", "-B", "-C", "-m", "--max-depth", "--max-count"})
        words, _ = split_words(args, opts)
        explicit = any(a in ("-e", "-f") for a in args)
        return [(w, False) for w in (words if explicit else words[1:])]
    return []


CREATE_OPTS = {"checkout": ("-b", "-B", "--orphan"), "switch": ("-c", "-C", "--orphan")}
MOVE_VALUE_OPTS = frozenset(
    {"-b", "-B", "--orphan", "-c", "-C", "--conflict", "--pathspec-from-file"}
)


def _moving(sub: str, args: Sequence[str]) -> list[tuple[str, bool]]:
    """checkout / switch / reset / restore / worktree add: the revision they move to or read."""
    creating = [a for a in args if a in CREATE_OPTS.get(sub, ())]
    words, revs = split_words(args, MOVE_VALUE_OPTS)
    if sub == "restore":
        return [(r, True) for r in revs]
    if sub == "worktree":
        return [(w, True) for w in words[2:3]] if words[:1] == ["add"] else []
    first = words[:1]
    return [(w, sub == "switch" or bool(creating)) for w in first] + [(r, True) for r in revs]


def created(sub: str, args: Sequence[str]) -> list[str]:
    """Branch or tag names ``git sub args`` creates (checkout -b, switch -c, branch X, tag X)."""
    names: list[str] = []
    for i, word in enumerate(args[:-1]):
        if word in (*CREATE_OPTS.get(sub, ()), *(("-b", "-B") if sub == "worktree" else ())):
            names.append(args[i + 1])
    if sub == "branch":
        listing = {"-a", "-r", "-l", "--list", "-v", "-vv", "--verbose", "--all", "--remotes",
                   "-d", "-D", "--delete", "--contains", "--merged", "--no-merged",
                   "--show-current", "--unset-upstream", "--edit-description"}  # fmt: skip
        words, _ = split_words(args, frozenset({"-u", "--set-upstream-to", "--format", "--sort"}))
        if not listing & set(args) and words:
            renaming = {"-m", "-M", "-c", "-C", "--move", "--copy"} & set(args)
            names.append(words[-1] if renaming else words[0])
    if sub == "tag":
        words, _ = split_words(args, frozenset({"-m", "-F", "-u", "--message", "--file"}))
        if words and not {"-d", "--delete", "-l", "--list", "-v", "--verify"} & set(args):
            names.append(words[0])
    return names


def branch_listing(args: Sequence[str]) -> str | None:
    """``git branch -a`` / ``-r``: ``names`` of other refs, or ``ids`` when -v / --format adds
    their commit ids; None for a listing of local branches or any other branch command."""
    wide = {"-a", "-r", "--all", "--remotes"} & set(args) or any(
        re.fullmatch(r"-[a-zA-Z]*[ar][a-zA-Z]*", a) for a in args
    )
    if not wide:
        return None
    verbose = any(
        a.startswith("--format") or a == "--verbose" or re.fullmatch(r"-[a-zA-Z]*v[a-zA-Z]*", a)
        for a in args
    )
    return "ids" if verbose else "names"
