"""Python code (``python -c``, Python heredocs, scripts the agent wrote) → effects.

Walks the AST: ``open()`` modes, ``pathlib`` reads / writes / unlinks, ``os`` / ``shutil``
file operations, ``os.environ`` dumps and secret lookups, ``subprocess`` / ``os.system``
commands (analysed as shell), and URL fetches. String arguments are resolved when they are
literals, simple names assigned literals, or concatenations / f-strings of those; anything
else becomes ``*``.
"""

from __future__ import annotations

import ast
import re

from trajforge import pyast
from trajforge.guard.argv import Sink
from trajforge.guard.effects import EffectKind
from trajforge.guard.pyenv import Taint, command_call, dotted, parent, usage

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
ENV_MARKER = re.compile(r"\$\{(\w+)\}")
_SEPARATORS = re.compile(r"&&|\|\||[;|&\n(]")
_NET_CALLS = frozenset({"urlopen", "urlretrieve", "get", "post", "put", "request", "Request"})


def python_effects(sink: Sink, code: str) -> None:
    """Report the effects of Python ``code`` to ``sink``."""
    try:
        tree = pyast.parse(code)
    except (SyntaxError, ValueError) as exc:
        sink.add("unparsed", "python", detail=f"python syntax error: {exc}")
        return
    _Visitor(sink).visit(tree)


class _Visitor(ast.NodeVisitor):
    def __init__(self, sink: Sink) -> None:
        self.sink = sink
        self.names: dict[str, str] = {}
        self.taint = Taint()
        self.command_mode = False
        """True while a subprocess command is evaluated (environment reads become ${NAME})."""

    def visit_Assign(self, node: ast.Assign) -> None:
        value = self.string(node.value)
        for target in node.targets:
            if isinstance(target, ast.Name) and value is not None:
                self.names[target.id] = value
        self.taint.forget(node)
        self.generic_visit(node)

    def visit_For(self, node: ast.For) -> None:
        self.taint.forget(node)
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        key = self.taint.names.get(node.id)
        if key is not None and isinstance(node.ctx, ast.Load):
            self._env_value(node, key)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr == "environ" and _dotted(node.value) == "os":
            self._environ(node)
        self.generic_visit(node)

    def _env_value(self, node: ast.AST, key: str) -> None:
        """Environment value ``key`` (``*``: all of it) read at ``node``: printed, used, checked."""
        use, statement = usage(node)
        if use == "assign" and statement is not None:
            self.taint.bind(statement, key)
        elif use != "command":  # a command's words are judged by the shell analysis
            self.sink.add("env-dump", key, detail=f"python {use}")

    def _environ(self, node: ast.Attribute) -> None:
        up = parent(node)
        if isinstance(up, ast.Subscript) and up.value is node:
            key = self.string(up.slice) or UNKNOWN
            if isinstance(up.ctx, ast.Load):
                self._env_value(up, key)
            else:
                self.sink.add("env-set", key, detail="python os.environ[]")
        elif isinstance(up, ast.Attribute) and up.attr in ("get", "setdefault", "pop"):
            call = parent(up)
            name = self.string(call.args[0]) if isinstance(call, ast.Call) and call.args else None
            self._env_value(call if isinstance(call, ast.Call) else up, name or UNKNOWN)
        elif isinstance(up, ast.Compare) and node in up.comparators:
            self.sink.add("env-dump", self.string(up.left) or UNKNOWN, detail="python check")
        elif not _names_only(node, up):
            self._env_value(node, "*")

    def visit_Call(self, node: ast.Call) -> None:
        name = _dotted(node.func)
        last = name.rsplit(".", 1)[-1]
        args = [self.string(a) for a in node.args]
        if name in ("open", "io.open", "builtins.open", "codecs.open") and args:
            self._open(node, args[0])
        elif last in ("getenv", "getenvb") and name.startswith("os"):
            self._env_value(node, (args[0] if args else None) or UNKNOWN)
        elif name.startswith(("os.", "shutil.", "glob.")) and last in _OS_CALLS and args:
            self._os_call(last, args)
        elif command_call(name):
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
        """A command run by ``subprocess`` / ``os.system``: analysed as shell; environment
        values in it become ``${NAME}`` so the shell analysis judges them (echo vs curl)."""
        if not node.args:
            return
        first = node.args[0]
        self.command_mode = True
        try:
            words = first.elts if isinstance(first, (ast.List, ast.Tuple)) else None
            argv = [self.string(e) or UNKNOWN for e in words] if words is not None else []
            text = self.string(first) if words is None else None
        finally:
            self.command_mode = False
        if words is not None:
            prog = argv[0] if argv else ""
            for word in argv:
                for name in ENV_MARKER.findall(word):
                    self._spliced(name, prog)
            self.sink.argv([_argv_word(w) for w in argv], "python subprocess")
            return
        if text is None:
            self.sink.add("unparsed", "python", detail="subprocess with a computed command")
            return
        for m in ENV_MARKER.finditer(text):
            segment = _SEPARATORS.split(text[: m.start()])[-1].split()
            self._spliced(m.group(1), segment[0] if segment else "")
        self.sink.shell(text, "python subprocess")  # ${HOME} resolves there like any $HOME

    def _spliced(self, name: str, prog: str) -> None:
        """Environment value ``name`` spliced into a command run by ``prog`` (as the shell's
        ``$NAME`` would be: printed by echo / printf …, used by curl …)."""
        prog = prog.strip("'\"").rsplit("/", 1)[-1]
        self.sink.add("env-dump", name, detail=f"expand:{prog}")

    def _env_key(self, node: ast.AST | None) -> str | None:
        """The variable an environment read names (``os.getenv("X")``, ``os.environ["X"]``,
        ``os.environ.get("X")``, a name holding one), or None."""
        if isinstance(node, ast.Name):
            key = self.taint.names.get(node.id)
            return key if key != "*" else None
        if isinstance(node, ast.Subscript) and _dotted(node.value) == "os.environ":
            return self.string(node.slice)
        if isinstance(node, ast.Call) and node.args:
            name = _dotted(node.func)
            if name in ("os.getenv", "os.getenvb", "os.environ.get", "getenv"):
                return self.string(node.args[0])
        return None

    def string(self, node: ast.AST | None) -> str | None:
        """Static value of a string expression, or None."""
        if self.command_mode:
            key = self._env_key(node)
            if key is not None:
                return "${" + key + "}"
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.Name):
            return self.names.get(node.id)
        if isinstance(node, ast.JoinedStr):
            return "".join(self._fstring_part(v) for v in node.values)
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

    def _fstring_part(self, value: ast.AST) -> str:
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            return value.value
        if self.command_mode and isinstance(value, ast.FormattedValue):
            return self.string(value.value) or UNKNOWN
        return UNKNOWN

    def generic_visit(self, node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            child._guard_parent = node  # type: ignore[attr-defined]
        super().generic_visit(node)


_dotted = dotted


def _argv_word(word: str) -> str:
    """An argv word with environment values: ``${HOME}/x`` is ``~/x``; others are unknown."""
    if word.startswith("${HOME}"):
        word = "~" + word[len("${HOME}") :]
    return ENV_MARKER.sub(UNKNOWN, word)


def _names_only(environ: ast.AST, up: ast.AST | None) -> bool:
    """``os.environ`` iterated, listed or sorted directly, or its ``.keys()``: names, no values."""
    if isinstance(up, ast.Attribute):
        return up.attr == "keys"
    if isinstance(up, (ast.For, ast.comprehension)):
        return up.iter is environ
    if isinstance(up, ast.Call) and environ in up.args:
        return _dotted(up.func) in ("list", "sorted", "set", "tuple", "len")
    return False
