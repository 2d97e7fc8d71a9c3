"""Python faults through `ast` positions: only the exact source span of a fault changes, so
formatting elsewhere and every line number stay as they were."""

from __future__ import annotations

import ast

from trajforge.oracles.edit import TEXT, Candidate, short, swap
from trajforge.oracles.edit import keep_lines as _keep_lines
from trajforge.oracles.pysource import PySource

COMPARE = {
    ast.Lt: ("<", "<="), ast.LtE: ("<=", "<"), ast.Gt: (">", ">="), ast.GtE: (">=", ">"),
    ast.Eq: ("==", "!="), ast.NotEq: ("!=", "=="), ast.Is: ("is", "is not"),
    ast.IsNot: ("is not", "is"), ast.In: ("in", "not in"), ast.NotIn: ("not in", "in"),
}  # fmt: skip
ARITH = {
    ast.Add: ("+", "-"), ast.Sub: ("-", "+"), ast.Mult: ("*", "/"), ast.Div: ("/", "*"),
    ast.FloorDiv: ("//", "/"), ast.Mod: ("%", "/"), ast.Pow: ("**", "*"),
    ast.LShift: ("<<", ">>"), ast.RShift: (">>", "<<"), ast.BitAnd: ("&", "|"),
    ast.BitOr: ("|", "&"), ast.BitXor: ("^", "&"),
}  # fmt: skip
BOOL = {ast.And: ("and", "or"), ast.Or: ("or", "and")}
DROPPABLE = (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete, ast.Raise)
SKIPPED_FIELDS = frozenset({"annotation", "returns", "type_comment"})
METADATA_NAMES = frozenset(
    {"__all__", "__version__", "__author__", "__email__", "__license__", "__copyright__",
     "__credits__", "__maintainer__", "__status__", "__date__", "__docformat__"}
)  # fmt: skip
"""Module-level declarations no call through the task's interface can observe: the export list
(``from pkg import name`` works without it) and package metadata. Their statements get no
mutants: a mutant there survives every test and says nothing about the tests."""
TYPING_CALLS = frozenset({"cast", "TypeVar", "NewType", "ParamSpec", "TypeVarTuple"})
"""Calls whose string arguments are type names, as inert as annotations."""
ATOMS = (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Constant)


def candidates(source: str, lines: set[int]) -> list[Candidate]:
    """Faults on the given 1-based lines of a Python file, in source order.

    Raises SyntaxError / ValueError when the file does not parse.
    """
    collector = _Collector(PySource(source), lines)
    for stmt in collector.src.tree.body:
        collector.visit(stmt)
    return sorted(collector.out, key=lambda c: (c.start, c.end, c.operator, c.text))


def texts(source: str, lines: set[int]) -> list[Candidate]:
    """Every f-string and string literal (not a docstring) starting on the given lines emptied:
    the fallback when :func:`candidates` finds none. Raises as :func:`candidates` does."""
    src = PySource(source)
    marked = _docstrings(src.tree)
    docstrings = {
        id(d.value) for d in ast.walk(src.tree) if id(d) in marked and isinstance(d, ast.Expr)
    }
    found: list[Candidate] = []
    for node in ast.walk(src.tree):
        text = isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value
        if not (isinstance(node, ast.JoinedStr) or text) or id(node) in docstrings:
            continue
        if getattr(node, "lineno", None) not in lines:
            continue
        start, end = src.span(node)
        old = src.text(start, end)
        what = f"empty the text `{short(old)}`"
        new = _keep_lines(old, '""', TEXT).encode("utf-8")
        found.append(Candidate(node.lineno, TEXT, what, start, end, new))  # type: ignore[attr-defined]
    return sorted(found, key=lambda c: (c.start, c.end))


LOGGERS = frozenset({"logging", "log", "logger", "LOG", "LOGGER", "_log", "_logger"})
"""Names a module's logger goes by."""
LOG_LEVELS = frozenset({"debug", "info", "warning", "warn", "error", "exception", "critical"})


def _diagnostic(node: ast.stmt) -> bool:
    """``log.warning(...)``, ``logging.error(...)``: a statement that only logs."""
    call = node.value if isinstance(node, ast.Expr) else None
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Attribute):
        return False
    owner = call.func.value
    named = owner.id if isinstance(owner, ast.Name) else getattr(owner, "attr", "")
    return named in LOGGERS and call.func.attr in LOG_LEVELS


def _docstrings(tree: ast.AST) -> set[int]:
    found: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            value = body[0].value
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                found.add(id(body[0]))
    return found


def _targets(node: ast.stmt) -> list[ast.expr]:
    if isinstance(node, ast.Assign):
        return node.targets
    if isinstance(node, ast.AugAssign | ast.AnnAssign):
        return [node.target]
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        func = node.value.func  # __all__.extend([...]) / __all__.append("name")
        return [func.value] if isinstance(func, ast.Attribute) else []
    return []


def inert_statement(node: ast.stmt) -> bool:
    """A module-level statement no test can observe through the interface: assignments to
    :data:`METADATA_NAMES` (``__all__ = [...]``, ``__all__ += [...]``, ``__version__ = ...``)
    ``if TYPE_CHECKING:`` blocks (imports for annotations only) and type variables."""
    if isinstance(node, ast.If):
        test = node.test
        name = test.attr if isinstance(test, ast.Attribute) else getattr(test, "id", "")
        return name == "TYPE_CHECKING" and not node.orelse
    if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
        func = node.value.func
        called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if called in TYPING_CALLS and called != "cast":
            return True  # T = TypeVar("T"): a declaration for annotations
    targets = _targets(node)
    return bool(targets) and all(
        isinstance(t, ast.Name) and t.id in METADATA_NAMES for t in targets
    )


def _op_span(data: bytes, start: int, end: int) -> tuple[int, int] | None:
    """Span of the operator token(s) in a gap between two operands: whatever is left once
    whitespace, parentheses, line continuations and comments are skipped."""
    first = last = -1
    i = start
    while i < end:
        ch = data[i : i + 1]
        if ch == b"#":
            newline = data.find(b"\n", i, end)
            i = end if newline < 0 else newline
            continue
        if ch not in b" \t\f\r\n()\\":
            first = i if first < 0 else first
            last = i
        i += 1
    return None if first < 0 else (first, last + 1)


class _Collector:
    def __init__(self, src: PySource, lines: set[int]) -> None:
        self.src = src
        self.lines = lines
        self.docstrings = _docstrings(src.tree)
        self.top = {id(stmt) for stmt in src.tree.body}
        self.out: list[Candidate] = []
        self.params: list[list[str]] = []

    def add(self, start: int, end: int, new: str, operator: str, what: str = "") -> None:
        line = self.src.line_of(start)
        if line not in self.lines:
            return
        old = self.src.text(start, end)
        if old == new:
            return
        text = _keep_lines(old, new, operator).encode("utf-8")
        self.out.append(Candidate(line, operator, what or swap(old, new), start, end, text))

    def visit(self, node: ast.AST) -> None:
        if isinstance(node, ast.JoinedStr) or id(node) in self.docstrings:
            return  # f-string internals (positions are not reliable on 3.11) and docstrings
        if id(node) in self.top and inert_statement(node):  # type: ignore[arg-type]
            return  # __all__, __version__, TYPE_CHECKING imports: nothing a test can observe
        if isinstance(node, ast.Expr) and _diagnostic(node):
            return  # a log line is not behaviour a task states: no fair test must pin it
        handler = getattr(self, "on_" + type(node).__name__, None)
        if handler is not None:
            handler(node)
        if isinstance(node, ast.stmt):
            self.drop(node)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            self.params.append(_params(node.args))
        self.children(node)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            self.params.pop()

    def children(self, node: ast.AST) -> None:
        for field, value in ast.iter_fields(node):
            if field in SKIPPED_FIELDS:
                continue
            for child in value if isinstance(value, list) else [value]:
                if isinstance(child, ast.AST):
                    self.visit(child)

    def operator_gap(self, left: ast.AST, right: ast.AST, old: str, new: str, kind: str) -> None:
        span = _op_span(self.src.data, self.src.span(left)[1], self.src.span(right)[0])
        if span is None:
            return
        token = " ".join(self.src.text(*span).split())
        if token == old:
            self.add(span[0], span[1], new, kind)

    def on_Compare(self, node: ast.Compare) -> None:
        left: ast.AST = node.left
        for op, right in zip(node.ops, node.comparators, strict=True):
            old, new = COMPARE[type(op)]
            self.operator_gap(left, right, old, new, "compare")
            left = right

    def on_BinOp(self, node: ast.BinOp) -> None:
        if type(node.op) in ARITH:
            old, new = ARITH[type(node.op)]
            self.operator_gap(node.left, node.right, old, new, "arith")

    def on_AugAssign(self, node: ast.AugAssign) -> None:
        if type(node.op) in ARITH:
            old, new = ARITH[type(node.op)]
            self.operator_gap(node.target, node.value, old + "=", new + "=", "arith")

    def on_BoolOp(self, node: ast.BoolOp) -> None:
        old, new = BOOL[type(node.op)]
        for left, right in zip(node.values, node.values[1:], strict=False):
            self.operator_gap(left, right, old, new, "bool")

    def on_UnaryOp(self, node: ast.UnaryOp) -> None:
        if isinstance(node.op, ast.Not):
            start, end = self.src.span(node)
            operand = self.src.text(*self.src.span(node.operand))
            self.add(start, end, f"({operand})", "negate")

    def negate_test(self, test: ast.expr) -> None:
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            return  # on_UnaryOp removes the `not`
        start, end = self.src.span(test)
        self.add(start, end, f"not ({self.src.text(start, end)})", "negate")

    def on_If(self, node: ast.If) -> None:
        self.negate_test(node.test)

    def on_While(self, node: ast.While) -> None:
        self.negate_test(node.test)

    def on_IfExp(self, node: ast.IfExp) -> None:
        self.negate_test(node.test)

    def on_Constant(self, node: ast.Constant) -> None:
        value = node.value
        start, end = self.src.span(node)
        if isinstance(value, bool):
            self.add(start, end, str(not value), "const")
        elif isinstance(value, int):
            self.add(start, end, str(value + 1), "const")
            self.add(start, end, str(value - 1), "const")
        elif isinstance(value, float):
            self.add(start, end, repr(value + 1), "const")
        elif isinstance(value, str) and value:
            self.add(start, end, '""', "const")

    def on_Return(self, node: ast.Return) -> None:
        value = node.value
        if value is None or (isinstance(value, ast.Constant) and value.value is None):
            return
        start, end = self.src.span(value)
        self.add(start, end, "None", "return", f"`return {self.src.text(start, end)}` → `None`")
        empty = _empty(value)
        if empty:
            self.add(start, end, empty, "return")
        if isinstance(value, ast.Name) and self.params:
            for name in self.params[-1]:
                if name != value.id:
                    self.add(start, end, name, "return")  # the wrong variable returned

    def drop(self, node: ast.stmt) -> None:
        if not isinstance(node, DROPPABLE) or id(node) in self.docstrings:
            return
        if isinstance(node, ast.AnnAssign) and node.value is None:
            return
        start, end = self.src.stmt_start(node), self.src.span(node)[1]
        newlines = "\n" * (node.end_lineno - node.lineno) if node.end_lineno else ""
        what = f"drop `{self.src.text(start, end).strip()[:40]}`"
        self.add(start, end, "pass" + newlines, "drop", what)

    def off_by_one(self, bound: ast.expr | None) -> None:
        if bound is None or (isinstance(bound, ast.Constant) and isinstance(bound.value, int)):
            return  # missing bounds have nothing to shift; literal ones are `const` faults
        start, end = self.src.span(bound)
        text = self.src.text(start, end)
        base = text if isinstance(bound, ATOMS) else f"({text})"
        self.add(start, end, f"{base} + 1", "slice")
        self.add(start, end, f"{base} - 1", "slice")

    def on_Slice(self, node: ast.Slice) -> None:
        self.off_by_one(node.lower)
        self.off_by_one(node.upper)

    def on_Call(self, node: ast.Call) -> None:
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if name in TYPING_CALLS and node.args and isinstance(node.args[0], ast.Constant):
            self.docstrings.add(id(node.args[0]))  # a type name: as inert as an annotation
        if isinstance(node.func, ast.Name) and node.func.id == "range" and node.args:
            self.off_by_one(node.args[1] if len(node.args) > 1 else node.args[0])


def _params(args: ast.arguments) -> list[str]:
    names = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
    return [n for n in names if n not in ("self", "cls")]


def _empty(value: ast.expr) -> str | None:
    if isinstance(value, ast.List | ast.ListComp | ast.Tuple):
        return "[]" if not isinstance(value, ast.Tuple) else "()"
    if isinstance(value, ast.Dict | ast.DictComp):
        return "{}"
    if isinstance(value, ast.Set | ast.SetComp):
        return "set()"
    if isinstance(value, ast.JoinedStr) or (
        isinstance(value, ast.Constant) and isinstance(value.value, str)
    ):
        return '""'
    return None
