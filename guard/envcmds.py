"""Commands that print or change the environment: ``env``, ``printenv``, ``set``, ``export -p``."""

from __future__ import annotations

from collections.abc import Sequence

from trajforge.guard.argv import Sink, operands

ENV_DUMPERS = frozenset({"env", "printenv"})
# Builtins that print the environment when given no variable name, and the only options that
# keep them printing it. ``set`` dumps every variable only when called with no word at all
# (``set -e``, ``set -euo pipefail``, ``set -x``, ``set --`` change options or positional
# parameters); ``export`` / ``declare`` / ``typeset`` with no option or only -p / -x print the
# exported (or all) variables, while ``declare -f`` prints functions and ``local`` / ``readonly``
# print no inherited secrets.
DUMP_OPTION_LETTERS = {
    "export": frozenset("p"),
    "declare": frozenset("px"),
    "typeset": frozenset("px"),
}


def env_dump_builtin(prog: str, args: Sequence[str]) -> bool:
    """True when builtin ``prog`` with ``args`` prints the whole environment (``export -p``)."""
    if prog == "set":
        return not args
    letters = DUMP_OPTION_LETTERS.get(prog)
    if letters is None or operands(args):
        return False
    return all(a.startswith("-") and len(a) > 1 and set(a[1:]) <= letters for a in args)


def _env(sink: Sink, prog: str, args: list[str]) -> None:
    if prog == "printenv":
        names = operands(args)
        for name in names:
            sink.add("env-dump", name, detail="printenv")
        if not names:
            sink.add("env-dump", "*", detail="printenv")
        return
    rest = list(args)
    while rest and (rest[0].startswith("-") or "=" in rest[0]):
        word = rest.pop(0)
        if word in ("-u", "--unset") and rest:
            sink.add("env-set", rest.pop(0), detail="unset")
        elif word.startswith("--unset="):
            sink.add("env-set", word.split("=", 1)[1], detail="unset")
        elif "=" in word and not word.startswith("-"):
            name, _, value = word.partition("=")
            sink.add("env-set", name, detail=value)
    if rest:
        sink.argv(rest, "env")
    else:
        sink.add("env-dump", "*", detail=prog)
