"""Python code (``python -c``, Python heredocs, scripts the agent wrote) → effects.

Walks the AST: ``open()`` modes, ``pathlib`` reads / writes / unlinks, ``os`` / ``shutil``
file operations, ``os.environ`` dumps and secret lookups, ``subprocess`` / ``os.system``
commands (analysed as shell), and URL fetches. String arguments are resolved when they are
literals, simple names assigned literals, or concatenations / f-strings of those; anything
else becomes ``*``.
"""

from __future__ import annotations

import ast

from trajforge.guard.commands import Sink
from trajforge.guard.effects import EffectKind

UNKNOWN = "*"
_READ_CALLS = {"read_text": "read", "read_bytes": "read", "open": "read", "iterdir": "list"}
_WRITE_CALLS = {
    "write_text": "write", "write_bytes": "write", "touch": "write", "mkdir": "write",
    "unlink": "delete", "rmdir": "delete", "chmod": "write", "symlink_to": "write",
}  # fmt: skip
_OS_CALLS: dict[str, EffectKind] = {
    "remove": "delete", "unlink": "delete", "rmdir": "delete", "removedirs": "delete",
    "rmtree": "delete", "listdir": "list", "scandir": "list", "walk": "list", "chmod": "write",
    "truncate": "write", "copy": "read", "copyfile": "read", "copy2": "read", "copytree": "read",
    "move": "delete", "rename": "delete", "replace": "delete", "glob": "list", "iglob": "list",
}  # fmt: skip
_TWO_PATH = frozenset({"copy", "copyfile", "copy2", "copytree", "move", "rename", "replace"})
_SHELL_CALLS = frozenset({"system", "popen", "run", "call", "check_call", "check_output", "Popen",
                          "getoutput", "getstatusoutput"})  # fmt: skip
_NET_CALLS = frozenset({"urlopen", "urlretrieve", "get", "post", "put", "request", "Request"})


def python_effects(sink: Sink, code: str) -> None:
    """Report the effects of Python ``code`` to ``sink``."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError) as exc:
        sink.add("unparsed", "python", detail=f"python syntax error: {exc}")
        return
    _Visitor(sink).visit(tree)


class _Visitor(ast.NodeVisitor):
    def __init__(self, sink: Sink) -> None:
        self.sink = sink
        self.names: dict[str, str] = {}

    def visit_Assign(self, node: ast.Assign) -> None:
        value = self.string(node.value)
        for target in node.targets:
            if isinstance(target, ast.Name) and value is not None:
                self.names[target.id] = value
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr == "environ" and _dotted(node.value) == "os":
            self._environ(node)
        self.generic_visit(node)

    def _environ(self, node: ast.Attribute) -> None:
        parent = getattr(node, "_guard_parent", None)
        if isinstance(parent, ast.Subscript):
            key = self.string(parent.slice)
            self.sink.add("env-dump", key or UNKNOWN, detail="python os.environ[]")
        elif isinstance(parent, ast.Attribute) and parent.attr in ("get", "setdefault", "pop"):
            call = getattr(parent, "_guard_parent", None)
            key = self.string(call.args[0]) if isinstance(call, ast.Call) and call.args else None
            self.sink.add("env-dump", key or UNKNOWN, detail=f"python os.environ.{parent.attr}")
        else:
            self.sink.add("env-dump", "*", detail="python os.environ")

    def visit_Call(self, node: ast.Call) -> None:
        name = _dotted(node.func)
        last = name.rsplit(".", 1)[-1]
        args = [self.string(a) for a in node.args]
        if name in ("open", "io.open", "builtins.open", "codecs.open") and args:
            self._open(node, args[0])
        elif last in ("getenv", "getenvb") and name.startswith("os"):
            self.sink.add("env-dump", args[0] or UNKNOWN if args else UNKNOWN, detail="getenv")
        elif name.startswith(("os.", "shutil.", "glob.")) and last in _OS_CALLS and args:
            self._os_call(last, args)
        elif last in _SHELL_CALLS and name.startswith(("os.", "subprocess.", "sp.", "commands.")):
            self._subprocess(node)
        elif last in _NET_CALLS and name.startswith(("urllib", "requests", "httpx", "http")):
            self.sink.add("network", args[0] or UNKNOWN if args else UNKNOWN, detail=name)
        elif isinstance(node.func, ast.Attribute) and last in (*_READ_CALLS, *_WRITE_CALLS):
            self._path_method(node, last)
        elif name == "exec" and args and args[0] is not None:
            self.sink.python(args[0], "python exec")
        self.generic_visit(node)

    def _open(self, node: ast.Call, path: str | None) -> None:
        mode_node = (
            node.args[1]
            if len(node.args) > 1
            else next((k.value for k in node.keywords if k.arg == "mode"), None)
        )
        mode = (self.string(mode_node) or "r") if mode_node is not None else "r"
        kind: EffectKind = "write" if set(mode) & set("wax+") else "read"
        self.sink.add(kind, self.sink.path(path or UNKNOWN), detail=f"python open {mode}")

    def _os_call(self, last: str, args: list[str | None]) -> None:
        kind = _OS_CALLS[last]
        src = self.sink.path(args[0] or UNKNOWN)
        self.sink.add(
            kind, src, detail=f"python {last}", tree=last in ("rmtree", "walk", "copytree")
        )
        if last in _TWO_PATH and len(args) > 1:
            self.sink.add("write", self.sink.path(args[1] or UNKNOWN), detail=f"python {last}")

    def _path_method(self, node: ast.Call, method: str) -> None:
        assert isinstance(node.func, ast.Attribute)
        base = node.func.value
        path: str | None = None
        if isinstance(base, ast.Call) and _dotted(base.func).rsplit(".", 1)[-1] in (
            "Path",
            "PurePath",
        ):
            parts = [self.string(a) for a in base.args]
            path = "/".join(p or UNKNOWN for p in parts) if parts else "."
        elif isinstance(base, ast.Name) and base.id in self.names:
            path = self.names[base.id]
        if path is None:
            return
        kind: EffectKind = _READ_CALLS.get(method) or _WRITE_CALLS.get(method) or "read"  # type: ignore[assignment]
        detail = self.string(node.args[0]) if kind == "write" and node.args else None
        self.sink.add(kind, self.sink.path(path), detail=detail or f"python {method}")

    def _subprocess(self, node: ast.Call) -> None:
        if not node.args:
            return
        first = node.args[0]
        if isinstance(first, (ast.List, ast.Tuple)):
            argv = [self.string(e) or UNKNOWN for e in first.elts]
            self.sink.argv(argv, "python subprocess")
            return
        text = self.string(first)
        if text is None:
            self.sink.add("unparsed", "python", detail="subprocess with a computed command")
        else:
            self.sink.shell(text, "python subprocess")

    def string(self, node: ast.AST | None) -> str | None:
        """Static value of a string expression, or None."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.Name):
            return self.names.get(node.id)
        if isinstance(node, ast.JoinedStr):
            return "".join(
                v.value if isinstance(v, ast.Constant) and isinstance(v.value, str) else UNKNOWN
                for v in node.values
            )
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left, right = self.string(node.left), self.string(node.right)
            return None if left is None or right is None else left + right
        if isinstance(node, ast.Call) and _dotted(node.func) in ("os.path.join", "posixpath.join"):
            parts = [self.string(a) or UNKNOWN for a in node.args]
            return "/".join(parts)
        method = node.func if isinstance(node, ast.Call) else None
        if isinstance(method, ast.Attribute) and method.attr == "decode" and not node.args:  # type: ignore[union-attr]
            return self.string(method.value)
        if isinstance(node, ast.Call) and _dotted(node.func).endswith("b64decode") and node.args:
            from trajforge.guard.decode import b64decode

            inner = self.string(node.args[0])
            return b64decode(inner) if inner else None
        return None

    def generic_visit(self, node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            child._guard_parent = node  # type: ignore[attr-defined]
        super().generic_visit(node)


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""
