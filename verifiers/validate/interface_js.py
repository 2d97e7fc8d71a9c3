"""The interface JS/TS hidden tests use, through the tree-sitter grammars the oracles use.

``const {add} = require('./math')``, ``import {add} from './math'``, and a module bound to a
name (``const m = require('./m')``, ``import * as m``, a default import) whose members the tests
read (``m.add``) name what is used. Only relative module specifiers resolve (to an oracle
file by the usual extensions and ``index`` files); each name is shown as declared there:
``function add(a, b = 2): number``, ``const sub = (a, b) =>``, ``class Stack`` with its
constructor and the methods the tests call.
"""

from __future__ import annotations

import posixpath
import re

import tree_sitter

from trajforge.oracles import treesitter
from trajforge.reconstruct.changed_files import is_test_file
from trajforge.verifiers.validate.interface import Module, Reader

DEFAULT = "default"
EXTENSIONS = (".js", ".ts", ".mjs", ".cjs", ".jsx", ".tsx")
_SPACE = re.compile(r"\s+")
_FUNCTIONS = ("function_declaration", "generator_function_declaration")
_VALUES = ("arrow_function", "function_expression", "function")


def _text(node: tree_sitter.Node | None) -> str:
    return _SPACE.sub(" ", (node.text or b"").decode("utf-8", errors="replace")) if node else ""


def resolve(spec: str, test_path: str, paths: frozenset[str]) -> str | None:
    """Oracle path of a relative module specifier; None for packages and unknown files."""
    if not spec.startswith("."):
        return None
    stem = posixpath.normpath(posixpath.join(posixpath.dirname(test_path), spec))
    if stem.startswith(".."):
        return None
    return next((c for c in module_files(stem) if c in paths and not is_test_file(c)), None)


def module_files(stem: str) -> list[str]:
    """The files a relative module resolved to ``stem`` (from the workspace root) may be, in
    the order Node and TypeScript try them: itself, with a suffix, its ``index`` file, and the
    TypeScript source of a compiled suffix (ESM's ``"./a.js"`` for ``a.ts``)."""
    files = [stem, *(stem + e for e in EXTENSIONS), *(f"{stem}/index{e}" for e in EXTENSIONS)]
    base, ext = posixpath.splitext(stem)
    return files + [base + e for e in _COMPILED_FROM.get(ext, ())]


_COMPILED_FROM = {".js": (".ts", ".tsx"), ".mjs": (".mts",), ".cjs": (".cts",), ".jsx": (".tsx",)}
"""The TypeScript sources an import spelled with the compiled suffix names (``import "./a.js"``
of ``a.ts``, as Node16 / NodeNext module resolution has TypeScript written)."""


def _string(node: tree_sitter.Node | None) -> str | None:
    if node is None or node.type != "string":
        return None
    return "".join(_text(c) for c in node.named_children)


def _require(node: tree_sitter.Node | None) -> tuple[str, bool] | None:
    """The specifier of ``require('x')`` or ``await import('x')`` (declared, or assigned to a
    variable declared earlier), and whether the value is
    the module's namespace (a dynamic import) rather than its default export."""
    dynamic = node is not None and node.type == "await_expression" and bool(node.named_children)
    if dynamic and node is not None:
        node = node.named_children[0]
    if node is None or node.type != "call_expression":
        return None
    func, args = node.child_by_field_name("function"), node.child_by_field_name("arguments")
    wanted = "import" if dynamic else "require"
    if _text(func) != wanted or args is None or not args.named_children:
        return None
    spec = _string(args.named_children[0])
    return (spec, dynamic) if spec is not None else None


class _Scan:
    """Imports and member reads of one test file."""

    def __init__(self, test_path: str, paths: frozenset[str]) -> None:
        self.test_path = test_path
        self.paths = paths
        self.names: dict[str, set[str]] = {}
        self.labels: dict[str, str] = {}
        self.bound: dict[str, str] = {}  # local name → module path (namespace / default)
        self.defaults: set[str] = set()  # locals bound to the module's default export
        self.members: dict[str, set[str]] = {}  # local name → properties read
        self.props: set[str] = set()  # every property read (methods of imported classes)

    def use(self, spec: str, names: list[str]) -> str | None:
        path = resolve(spec, self.test_path, self.paths)
        if path is not None:
            self.labels.setdefault(path, spec)
            self.names.setdefault(path, set()).update(names)
        return path

    def bind(self, spec: str, local: str, default: bool = True) -> None:
        path = self.use(spec, [])
        if path is not None:
            self.bound[local] = path
            if default:
                self.defaults.add(local)

    def visit(self, node: tree_sitter.Node) -> None:
        if node.type == "import_statement":
            self._import(node)
        elif node.type in ("variable_declarator", "assignment_expression"):
            value, name = (
                ("value", "name") if node.type == "variable_declarator" else ("right", "left")
            )
            found = _require(node.child_by_field_name(value))
            target = node.child_by_field_name(name)
            if found is not None and target is not None:
                self._declarator(found[0], target, namespace=found[1])
        elif node.type == "member_expression":
            obj = node.child_by_field_name("object")
            prop = _text(node.child_by_field_name("property"))
            self.props.add(prop)
            if obj is not None and obj.type == "identifier":
                self.members.setdefault(_text(obj), set()).add(prop)

    def _declarator(self, spec: str, target: tree_sitter.Node, namespace: bool = False) -> None:
        if target.type == "identifier":
            self.bind(spec, _text(target), default=not namespace)
        elif target.type == "object_pattern":
            names = []
            for child in target.named_children:
                key = child.child_by_field_name("key") if child.type == "pair_pattern" else child
                names.append(_text(key))
            self.use(spec, names)

    def _import(self, node: tree_sitter.Node) -> None:
        spec = _string(node.child_by_field_name("source"))
        clause = next((c for c in node.named_children if c.type == "import_clause"), None)
        if spec is None or clause is None:
            return
        for part in clause.named_children:
            if part.type == "identifier":
                self.bind(spec, _text(part))
            elif part.type == "namespace_import" and part.named_children:
                self.bind(spec, _text(part.named_children[-1]), default=False)
            elif part.type == "named_imports":
                names = [
                    _text(s.child_by_field_name("name"))
                    for s in part.named_children
                    if s.type == "import_specifier"
                ]
                self.use(spec, names)

    def finish(self) -> dict[str, set[str]]:
        for local, path in self.bound.items():
            self.names[path].update(self.members.get(local, set()))
            if local in self.defaults:
                self.names[path].add(DEFAULT)
        return self.names


def _declarations(root: tree_sitter.Node) -> tuple[dict[str, tree_sitter.Node], str | None]:
    """Top-level declarations by name, and the name of the default export when known."""
    found: dict[str, tree_sitter.Node] = {}
    default: str | None = None
    for top in root.named_children:
        node = top.child_by_field_name("declaration") if top.type == "export_statement" else top
        if top.type == "export_statement" and any(c.type == "default" for c in top.children):
            named = node.child_by_field_name("name") if node is not None else None
            value = top.child_by_field_name("value")
            default = _text(named) if named is not None else _text(value) or None
        elif node is not None and node.type == "expression_statement" and node.named_children:
            default = _module_exports(node.named_children[0]) or default
        if node is None:
            continue
        if node.type in (*_FUNCTIONS, "class_declaration", "abstract_class_declaration"):
            found.setdefault(_text(node.child_by_field_name("name")), node)
        elif node.type in ("lexical_declaration", "variable_declaration"):
            for decl in node.named_children:
                value = decl.child_by_field_name("value")
                if decl.type == "variable_declarator" and value is not None:
                    found.setdefault(_text(decl.child_by_field_name("name")), decl)
        elif node.type == "expression_statement" and node.named_children:
            _exported(node.named_children[0], found)
    return found, default


def _module_exports(node: tree_sitter.Node) -> str | None:
    """``X`` of ``module.exports = X`` (an identifier or a named class / function)."""
    if node.type != "assignment_expression":
        return None
    left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
    if _text(left) != "module.exports" or right is None:
        return None
    if right.type == "identifier":
        return _text(right)
    return _text(right.child_by_field_name("name")) or None


def _exported(node: tree_sitter.Node, found: dict[str, tree_sitter.Node]) -> None:
    """``exports.x = …`` / ``module.exports.x = …``."""
    if node.type != "assignment_expression":
        return
    left = node.child_by_field_name("left")
    if left is not None and left.type == "member_expression":
        owner = _text(left.child_by_field_name("object"))
        if owner in ("exports", "module.exports"):
            found.setdefault(_text(left.child_by_field_name("property")), node)


def _params(node: tree_sitter.Node) -> str:
    params = node.child_by_field_name("parameters")
    if params is None:
        return f"({_text(node.child_by_field_name('parameter'))})"
    returns = _text(node.child_by_field_name("return_type"))
    return _text(params) + returns


def _describe(name: str, node: tree_sitter.Node, members: set[str]) -> list[str]:
    if node.type in _FUNCTIONS:
        return [f"function {name}{_params(node)}"]
    if node.type in ("class_declaration", "abstract_class_declaration"):
        lines = [f"class {name}{_text(node.child_by_field_name('type_parameters'))}"]
        body = node.child_by_field_name("body")
        for item in body.named_children if body is not None else []:
            method = _text(item.child_by_field_name("name"))
            if item.type == "method_definition" and (
                method == "constructor" or (method in members and not method.startswith("#"))
            ):
                lines.append(f"  {method}{_params(item)}")
        return lines
    value = node.child_by_field_name("value") or node.child_by_field_name("right")
    if value is not None and value.type in _VALUES:
        prefix = "const" if node.type == "variable_declarator" else "exports."
        spelled = f"const {name} = " if prefix == "const" else f"exports.{name} = "
        arrow = " =>" if value.type == "arrow_function" else ""
        keyword = "" if arrow else "function "
        return [f"{spelled}{keyword}{_params(value)}{arrow}"]
    return [name]


def js_modules(hidden: dict[str, str], read: Reader, paths: frozenset[str]) -> list[Module]:
    """The oracle modules the JS/TS hidden tests use, with the declarations they use."""
    names: dict[str, set[str]] = {}
    labels: dict[str, str] = {}
    members: set[str] = set()
    for test_path, source in sorted(hidden.items()):
        grammar = treesitter.grammar_for(test_path)
        if grammar is None:
            continue
        scan = _Scan(test_path, paths)
        stack = [treesitter.parse(grammar, source.encode("utf-8")).root_node]
        while stack:
            node = stack.pop()
            scan.visit(node)
            stack.extend(node.named_children)
        for path, used in scan.finish().items():
            names.setdefault(path, set()).update(used)
            labels.setdefault(path, scan.labels[path])
        members |= scan.props
    return [m for m in (_module(p, names[p], labels[p], members, read) for p in sorted(names)) if m]


def _module(
    path: str, used: set[str], label: str, members: set[str], read: Reader
) -> Module | None:
    grammar, text = treesitter.grammar_for(path), read(path)
    if grammar is None or text is None:
        return None
    declared, default = _declarations(treesitter.parse(grammar, text.encode("utf-8")).root_node)
    if DEFAULT in used and default is not None:
        used = used | {default}
    module = Module(path, label)
    for name, node in declared.items():
        if name in used:
            module.lines += _describe(name, node, members)
    return module if module.lines else None
