"""Where an environment value goes in Python code: printed, used, or only checked.

``print(os.getenv("HF_TOKEN"))`` shows the secret; ``print("set" if os.getenv("HF_TOKEN") else
"missing")``, ``os.getenv("HF_TOKEN") is not None`` and ``"HF_TOKEN" in os.environ`` only check
that it exists; ``requests.get(url, headers={"Authorization": os.environ["T"]})`` uses it. The
walk goes up from the access through the expressions that carry the value (f-strings, ``str()``,
slices, ``or`` defaults, containers) to what consumes it. Assignments hand the value to a name,
whose later uses are judged the same way (:class:`Taint`).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Literal

Use = Literal["print", "use", "check", "assign", "command"]

# Calls that run their first argument as a command (analysed as shell by the caller).
COMMAND_CALLS = frozenset(
    {"system", "popen", "run", "call", "check_call", "check_output", "Popen", "getoutput",
     "getstatusoutput"}
)  # fmt: skip
COMMAND_MODULES = ("os.", "subprocess.", "sp.", "commands.")

# What shows a value to the agent: functions by full name or last name, methods by name.
PRINT_FUNCTIONS = frozenset(
    {"print", "pprint", "pprint.pprint", "pprint.pp", "pp", "exit", "quit", "sys.exit",
     "json.dump", "pickle.dump", "yaml.dump", "yaml.safe_dump", "toml.dump", "click.echo"}
)  # fmt: skip
PRINT_METHODS = frozenset(
    {"write", "writelines", "debug", "info", "warning", "warn", "error", "critical",
     "exception", "log", "echo", "secho", "print", "print_json"}
)  # fmt: skip
# Calls whose result says something about the value but is not the value (length, truth).
CHECK_FUNCTIONS = frozenset({"bool", "len", "isinstance", "callable", "hash", "type"})
# Calls that return the value (or a container / text holding it) unchanged in substance.
CARRY_FUNCTIONS = frozenset(
    {"str", "repr", "ascii", "format", "dict", "list", "tuple", "set", "sorted", "reversed",
     "json.dumps", "yaml.dump_s", "pformat", "pprint.pformat", "textwrap.shorten", "iter",
     "next", "enumerate", "zip", "map", "filter"}
)  # fmt: skip
_CARRY_NODES = (
    ast.JoinedStr, ast.FormattedValue, ast.BinOp, ast.BoolOp, ast.Tuple, ast.List, ast.Set,
    ast.Dict, ast.Starred, ast.keyword, ast.comprehension, ast.ListComp, ast.SetComp,
    ast.DictComp, ast.GeneratorExp, ast.Await,
)  # fmt: skip
MAX_UP = 64


def parent(node: ast.AST) -> ast.AST | None:
    """The node's parent (set by the visitor before it visits children)."""
    return getattr(node, "_guard_parent", None)


def dotted(node: ast.AST) -> str:
    """``a.b.c`` of a name or attribute chain, ``""`` for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{dotted(node.value)}.{node.attr}"
    return ""


def command_call(name: str) -> bool:
    """``subprocess.run`` / ``os.system`` …: the first argument is a command."""
    return name.rsplit(".", 1)[-1] in COMMAND_CALLS and name.startswith(COMMAND_MODULES)


def _call_use(call: ast.Call, child: ast.AST) -> Use | None:
    """What a call does with a value passed as its argument (None: carries it on)."""
    name = dotted(call.func)
    last = name.rsplit(".", 1)[-1]
    if command_call(name) and call.args and child is call.args[0]:
        return "command"
    if name in PRINT_FUNCTIONS or (isinstance(call.func, ast.Attribute) and last in PRINT_METHODS):
        return "print"
    if name in CHECK_FUNCTIONS:
        return "check"
    if name in CARRY_FUNCTIONS or last in ("join", "format", "dumps", "pformat"):
        return None
    return "use"


def _statement_use(node: ast.AST, child: ast.AST) -> Use | None:
    """What a statement or test does with ``child`` (None: not a statement that decides)."""
    if isinstance(node, (ast.If, ast.While, ast.IfExp)) and child is node.test:
        return "check"
    if isinstance(node, ast.Assert):
        return "check" if child is node.test else "print"  # the message is shown on failure
    if isinstance(node, ast.Compare) or (
        isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not)
    ):
        return "check"
    if isinstance(node, ast.Expr):
        return "check"  # the value is computed and dropped: nothing is shown
    if isinstance(node, (ast.Assign, ast.AnnAssign, ast.NamedExpr, ast.For, ast.AsyncFor)):
        return "assign"
    return None


def usage(node: ast.AST) -> tuple[Use, ast.AST | None]:
    """How the value of expression ``node`` is consumed, and the statement that assigns it."""
    child, up = node, parent(node)
    for _ in range(MAX_UP):
        if up is None:
            return "use", None
        decided = _statement_use(up, child)
        if decided == "assign":
            iterated = isinstance(up, (ast.For, ast.AsyncFor)) and child is not up.iter
            return ("use", None) if iterated else ("assign", up)
        if decided is not None:
            return decided, None
        if isinstance(up, ast.Call) and child is not up.func:
            use = _call_use(up, child)
            if use is not None:
                return use, None
        elif isinstance(up, (ast.Subscript, ast.Attribute)) and child is not up.value:
            return "use", None  # the value is a key or index of something else
        elif not isinstance(up, (*_CARRY_NODES, ast.Call, ast.Subscript, ast.Attribute, ast.IfExp)):
            return "use", None
        child, up = up, parent(up)
    return "use", None


def assigned_names(statement: ast.AST) -> list[str]:
    """Plain names an assignment or ``for`` loop binds."""
    if isinstance(statement, ast.Assign):
        targets: list[ast.AST] = list(statement.targets)
    elif isinstance(statement, (ast.AnnAssign, ast.NamedExpr, ast.For, ast.AsyncFor)):
        targets = [statement.target]
    else:
        return []
    names: list[str] = []
    for target in targets:
        for sub in ast.walk(target):
            if isinstance(sub, ast.Name):
                names.append(sub.id)
    return names


@dataclass
class Taint:
    """Names that hold an environment value (variable name, or ``*`` for the environment)."""

    names: dict[str, str] = field(default_factory=dict)

    def forget(self, statement: ast.AST) -> None:
        """A new assignment replaces what its names held."""
        for name in assigned_names(statement):
            self.names.pop(name, None)

    def bind(self, statement: ast.AST, key: str) -> None:
        for name in assigned_names(statement):
            self.names[name] = key
