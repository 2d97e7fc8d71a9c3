"""JavaScript / TypeScript faults through tree-sitter byte ranges."""

from __future__ import annotations

import re

import tree_sitter

from trajforge.oracles import treesitter
from trajforge.oracles.edit import TEXT, Candidate, short, swap
from trajforge.oracles.edit import keep_lines as _keep_lines

COMPARE = {"<": "<=", "<=": "<", ">": ">=", ">=": ">", "===": "!==", "!==": "===",
           "==": "!=", "!=": "=="}  # fmt: skip
ARITH = {"+": "-", "-": "+", "*": "/", "/": "*", "%": "*", "**": "*", "<<": ">>", ">>": "<<",
         "&": "|", "|": "&", "^": "&"}  # fmt: skip
BOOL = {"&&": "||", "||": "&&", "??": "||"}
SLICERS = frozenset({"slice", "substring", "substr", "splice"})
TYPE_NODES = frozenset(
    {"type_annotation", "type_alias_declaration", "interface_declaration", "type_arguments",
     "type_parameters", "literal_type", "ambient_declaration", "enum_declaration"}
)  # fmt: skip
NO_STRINGS = frozenset({"import_statement", "export_statement", "pair", "jsx_attribute"})
"""Nodes whose strings are not emptied as constants: import paths, exported declarations, object
keys beside their values, JSX attributes. An exported function's strings would be faults too,
but with them a sample of 20 mutants holds several text constants any test of the output kills,
and a task's tests that miss every `>` → `>=` boundary the request states passed the kill rate
(pi-mono's footer: 17/20 on round 1, three boundaries surviving); without them the teacher is
sent back and its round 2 pins the boundaries."""
DIAGNOSTIC = re.compile(r"console\.(?:error|warn|debug|trace)\s*\(")
"""Statements that only write a diagnostic to stderr (``console.log`` may be a program's
output, so it stays a fault)."""
INT = re.compile(r"^\d+$")
FLOAT = re.compile(r"^(\d+\.\d*|\.\d+)$")
FUNCTIONS = frozenset(
    {"function_expression", "function", "arrow_function", "generator_function", "class"}
)
ATOMS = frozenset({"identifier", "member_expression", "call_expression", "subscript_expression"})


def candidates(grammar: str, source: str, lines: set[int]) -> list[Candidate]:
    """Faults on the given 1-based lines, in source order; [] when the file does not parse."""
    data = source.encode("utf-8")
    tree = treesitter.parse(grammar, data)
    if tree.root_node.has_error:
        return []
    collector = _Collector(data, lines)
    collector.visit(tree.root_node)
    return sorted(collector.out, key=lambda c: (c.start, c.end, c.operator, c.text))


def texts(grammar: str, source: str, lines: set[int]) -> list[Candidate]:
    """Every string and template literal starting on the given lines emptied (the fallback
    when :func:`candidates` finds none), outside imports, exports and module specifiers."""
    data = source.encode("utf-8")
    tree = treesitter.parse(grammar, data)
    if tree.root_node.has_error:
        return []
    found: list[Candidate] = []
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.type in TYPE_NODES or node.type in ("import_statement", "export_clause"):
            continue
        line = node.start_point.row + 1
        if node.type in ("string", "template_string") and line in lines:
            old = _text(node)
            if _specifier(node):
                continue
            if len(old) > 2:
                what = f"empty the text `{short(old)}`"
                text = _keep_lines(old, '""', TEXT).encode("utf-8")
                found.append(Candidate(line, TEXT, what, node.start_byte, node.end_byte, text))
            continue
        stack.extend(reversed(node.named_children))
    return sorted(found, key=lambda c: (c.start, c.end))


def _specifier(node: tree_sitter.Node) -> bool:
    """A module specifier: ``export … from "x"``, ``require("x")``, ``import("x")``."""
    parent = node.parent
    if parent is None:
        return False
    if parent.type == "export_statement":
        return True
    call = parent.parent if parent.type == "arguments" else None
    callee = call.child_by_field_name("function") if call is not None else None
    return callee is not None and _text(callee) in ("require", "import")


def _text(node: tree_sitter.Node) -> str:
    return (node.text or b"").decode("utf-8")


def _defines(node: tree_sitter.Node) -> bool:
    if node.type in FUNCTIONS:
        return True
    return any(_defines(child) for child in node.named_children)


class _Collector:
    def __init__(self, data: bytes, lines: set[int]) -> None:
        self.data = data
        self.lines = lines
        self.out: list[Candidate] = []

    def add(self, node: tree_sitter.Node, new: str, operator: str, what: str = "") -> None:
        line = node.start_point.row + 1
        old = _text(node)
        if line in self.lines and old != new:
            text = _keep_lines(old, new, operator).encode("utf-8")
            what = what or swap(old, new)
            self.out.append(Candidate(line, operator, what, node.start_byte, node.end_byte, text))

    def visit(self, node: tree_sitter.Node, strings: bool = True) -> None:
        if node.type in TYPE_NODES:
            return
        if node.type == "expression_statement" and DIAGNOSTIC.match(_text(node)):
            return  # a log line is not behaviour a task states: no fair test must pin it
        handler = getattr(self, "on_" + node.type, None)
        if handler is not None:
            handler(node)
        if node.type == "string" and strings:
            self.string(node)
        strings = strings and node.type not in NO_STRINGS
        for child in node.named_children:
            self.visit(child, strings)

    def operator(self, node: tree_sitter.Node) -> None:
        op = node.child_by_field_name("operator")
        if op is None:
            return
        token = op.type.removesuffix("=") if node.type.startswith("augmented") else op.type
        suffix = "=" if node.type.startswith("augmented") else ""
        for table, kind in ((COMPARE, "compare"), (ARITH, "arith"), (BOOL, "bool")):
            if token in table and not (suffix and kind == "compare"):
                self.add(op, table[token] + suffix, kind)

    on_binary_expression = operator
    on_augmented_assignment_expression = operator

    def on_unary_expression(self, node: tree_sitter.Node) -> None:
        argument = node.child_by_field_name("argument")
        op = node.child_by_field_name("operator")
        if op is not None and op.type == "!" and argument is not None:
            self.add(node, f"({_text(argument)})", "negate")

    def negate(self, condition: tree_sitter.Node | None) -> None:
        if condition is None:
            return
        inner = condition
        if condition.type == "parenthesized_expression" and condition.named_child_count == 1:
            inner = condition.named_children[0]
        if inner.type == "unary_expression" and _text(inner).startswith("!"):
            return  # on_unary_expression removes the `!`
        self.add(inner, f"!({_text(inner)})", "negate")

    def on_if_statement(self, node: tree_sitter.Node) -> None:
        self.negate(node.child_by_field_name("condition"))

    on_while_statement = on_if_statement
    on_do_statement = on_if_statement
    on_ternary_expression = on_if_statement

    def on_number(self, node: tree_sitter.Node) -> None:
        text = _text(node)
        if INT.match(text):
            self.add(node, str(int(text) + 1), "const")
            self.add(node, str(int(text) - 1) if text != "0" else "(-1)", "const")
        elif FLOAT.match(text):
            self.add(node, repr(float(text) + 1), "const")

    def on_true(self, node: tree_sitter.Node) -> None:
        self.add(node, "false", "const")

    def on_false(self, node: tree_sitter.Node) -> None:
        self.add(node, "true", "const")

    def string(self, node: tree_sitter.Node) -> None:
        parent = node.parent
        directive = parent is not None and parent.type == "expression_statement"
        if node.end_byte - node.start_byte > 2 and not directive and not _specifier(node):
            self.add(node, '""', "const")

    def on_return_statement(self, node: tree_sitter.Node) -> None:
        values = [c for c in node.named_children if c.type != "comment"]
        if not values or values[0].type in ("null", "undefined"):
            return
        value = values[0]
        self.add(value, "null", "return", f"`return {_text(value)[:40]}` → `null`")
        empty = {"array": "[]", "object": "{}", "string": '""', "template_string": '""'}
        if value.type in empty:
            self.add(value, empty[value.type], "return")

    def on_expression_statement(self, node: tree_sitter.Node) -> None:
        parent = node.parent
        if parent is None or parent.type not in ("statement_block", "program"):
            return
        first = node.named_children[0] if node.named_child_count else None
        if first is None or first.type == "string":
            return  # "use strict" and other directives
        if _defines(node):
            return  # `module.exports = function …`: a definition, not a step of behaviour
        newlines = "\n" * (node.end_point.row - node.start_point.row)
        self.add(node, ";" + newlines, "drop", f"drop `{_text(node).strip()[:40]}`")

    on_throw_statement = on_expression_statement

    def on_call_expression(self, node: tree_sitter.Node) -> None:
        func = node.child_by_field_name("function")
        prop = func.child_by_field_name("property") if func is not None else None
        args = node.child_by_field_name("arguments")
        if prop is None or _text(prop) not in SLICERS or args is None:
            return
        for arg in args.named_children:
            if arg.type in ("number", "comment", "spread_element"):
                continue
            base = _text(arg) if arg.type in ATOMS else f"({_text(arg)})"
            self.add(arg, f"{base} + 1", "slice")
            self.add(arg, f"{base} - 1", "slice")
