"""TypeScript and JavaScript: tree-sitter contracts and stubs; the project's own test runner
(vitest, jest, mocha, ``bun test``) for the hidden tests, else ``node --test`` (TypeScript
through the ``tsx`` loader)."""

from __future__ import annotations

import posixpath
import re
import shlex
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import PurePosixPath

import tree_sitter

from trajforge.oracles import treesitter
from trajforge.oracles.stub import stub_source
from trajforge.reconstruct.changed_files import is_test_file
from trajforge.reconstruct.node_project import package_root, runner_of
from trajforge.verifiers.languages.fakes import TYPESCRIPT, found
from trajforge.verifiers.validate.interface_js import module_files

SOURCE = (".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs")
_DECLARATIONS = frozenset(
    {
        "function_declaration",
        "generator_function_declaration",
        "class_declaration",
        "abstract_class_declaration",
        "lexical_declaration",
        "variable_declaration",
        "interface_declaration",
        "type_alias_declaration",
        "enum_declaration",
    }
)


def _text(node: tree_sitter.Node | None) -> str:
    return node.text.decode("utf-8", "replace") if node is not None and node.text else ""


def _head(node: tree_sitter.Node) -> str:
    """A declaration without its body: its first line up to ``{`` or ``=`` of a value."""
    body = node.child_by_field_name("body")
    end = body.start_byte if body is not None else node.end_byte
    # tree-sitter offsets count bytes: cut the bytes, then decode (a "…" is three of them)
    text = (node.text or b"")[: end - node.start_byte].decode("utf-8", "replace").strip()
    return " ".join(text.split())[:240]


def _members(node: tree_sitter.Node) -> list[str]:
    body = node.child_by_field_name("body")
    lines = []
    for item in body.named_children if body is not None else []:
        name = _text(item.child_by_field_name("name"))
        hidden = any(
            c.type == "accessibility_modifier" and _text(c) != "public" for c in item.children
        )
        if item.type == "method_definition" and not name.startswith(("#", "_")) and not hidden:
            lines.append("  " + _head(item))
    return lines


def contract(path: str, source: str) -> list[str]:
    """Exported declarations of one module, without their bodies (empty: none / unparsable)."""
    grammar = treesitter.grammar_for(path)
    if grammar is None:
        return []
    root = treesitter.parse(grammar, source.encode("utf-8")).root_node
    found: list[str] = []
    for top in root.named_children:
        node = top.child_by_field_name("declaration") if top.type == "export_statement" else None
        if node is None or node.type not in _DECLARATIONS:
            continue
        whole = node.type in ("interface_declaration", "type_alias_declaration", "enum_declaration")
        found.append("export " + (_text(node)[:600] if whole else _head(node)))
        if "class" in node.type:
            found += _members(node)
    return [f"// module {path}", *found] if found else []


def _bindings(clause: tree_sitter.Node) -> list[str]:
    """The local names an import clause binds to values (``type`` specifiers left out)."""
    names: list[str] = []
    for child in clause.named_children:
        if child.type == "identifier":
            names.append(_text(child))  # import D from
        elif child.type == "namespace_import":
            names += [_text(c) for c in child.named_children if c.type == "identifier"]
        elif child.type == "named_imports":
            for spec in child.named_children:
                if spec.type != "import_specifier" or any(c.type == "type" for c in spec.children):
                    continue
                bound = spec.child_by_field_name("alias") or spec.child_by_field_name("name")
                names.append(_text(bound))
    return [n for n in names if n]


def _runtime_imports(root: tree_sitter.Node, source: str) -> list[str]:
    """The relative specifiers of the static imports and re-exports a module needs when it
    loads: not ``import type`` / ``export type``, nor an import whose names are used only as
    types (TypeScript and esbuild drop it), which is judged by a use as a value: a call, a
    member read, ``new`` or ``extends``."""
    needed: list[str] = []
    for top in root.named_children:
        spec = _text(top.child_by_field_name("source")).strip("'\"`")
        if not spec.startswith(".") or any(c.type == "type" for c in top.children):
            continue
        clause = next((c for c in top.named_children if c.type == "import_clause"), None)
        if top.type == "export_statement" or clause is None:
            needed.append(spec)  # a re-export, or an import for its side effects
        elif any(_value_use(name).search(source) for name in _bindings(clause)):
            needed.append(spec)
    return needed


def _value_use(name: str) -> re.Pattern[str]:
    """``name`` used as a value: ``new name``, ``extends name``, ``name(``, ``name.``."""
    n = re.escape(name)
    return re.compile(rf"(?:\bnew\s+{n}\b|\bextends\s+{n}\b|(?<![\w$.]){n}\s*(?:\?\.|[.(]))")


def missing_import(path: str, source: str, paths: frozenset[str]) -> str | None:
    """The first relative module ``path`` imports at load time that no file of ``paths``
    provides (``./shell.js`` when neither ``shell.ts`` nor ``shell/index.ts`` is there), or
    None: the module could load."""
    grammar = treesitter.grammar_for(path)
    if grammar is None:
        return None
    root = treesitter.parse(grammar, source.encode("utf-8")).root_node
    for spec in _runtime_imports(root, source):
        stem = posixpath.normpath(posixpath.join(posixpath.dirname(path), spec))
        if stem.startswith(".."):
            continue  # outside the workspace: not ours to judge
        if not any(c in paths for c in module_files(stem)):
            return spec
    return None


_TS_BODY = """
describe("thing", () => {{
  it("does what the task asks", () => {{
    {check};
  }});
}});"""
_TS_EXAMPLE = {
    "vitest": 'import {{ describe, expect, it }} from "vitest";\n'
    'import {{ thing }} from "{spec}";\n'
    + _TS_BODY.replace("{check}", "expect(thing(...)).toBe(...)"),
    "jest": 'import {{ thing }} from "{spec}";\n'
    + _TS_BODY.replace("{check}", "expect(thing(...)).toBe(...)"),
    "bun": 'import {{ describe, expect, it }} from "bun:test";\n'
    'import {{ thing }} from "{spec}";\n'
    + _TS_BODY.replace("{check}", "expect(thing(...)).toBe(...)"),
    "node": 'import {{ describe, it }} from "node:test";\n'
    'import assert from "node:assert/strict";\nimport {{ thing }} from "{spec}";\n'
    + _TS_BODY.replace("{check}", "assert.equal(thing(...), ...)"),
}
"""An example test per runner family (``thing`` stands for the contract's names)."""


class TypeScript:
    """TypeScript and JavaScript: the hidden tests run with the package's own runner."""

    name = "typescript"
    fence = "ts"
    extensions = SOURCE
    tests_by = "TypeScript / JavaScript"
    stub_words = 'every function body replaced by `throw new Error("not implemented")`'
    test_names = "only test files named *.test.ts / *.spec.ts (or .js, .tsx, .mjs) are accepted"

    def is_source(self, path: str) -> bool:
        return path.endswith(SOURCE) and not path.endswith(".d.ts") and not is_test_file(path)

    def contract(self, path: str, text: str) -> list[str]:
        return contract(path, text)

    def stub(self, path: str, text: str) -> str | None:
        return stub_source(path, text)

    def hidden_test_path(self, changed: Sequence[str], files: Mapping[str, str]) -> str:
        """``<stem>.hidden.test.<ext>`` in the folder the package keeps its tests in (beside
        the first changed source when it keeps none)."""
        first = changed[0]
        root = package_root(first, files)
        tests = [p for p in files if is_test_file(p) and package_root(p, files) == root]
        tests = [p for p in tests if p.endswith(SOURCE) and "node_modules/" not in p]
        folder = Counter(map(posixpath.dirname, tests)).most_common(1)[0][0] if tests else None
        stem = posixpath.basename(first).split(".")[0]
        ext = "ts" if first.endswith((".ts", ".tsx", ".mts", ".cts")) else "js"
        return posixpath.join(folder or posixpath.dirname(first), f"{stem}.hidden.test.{ext}")

    def accepts_test_path(self, path: str) -> bool:
        return path.endswith(SOURCE) and is_test_file(path) and "node_modules/" not in path

    def test_command(self, tests: Sequence[str], files: Mapping[str, str]) -> str:
        root = package_root(tests[0], files) if tests else ""
        rel = [posixpath.relpath(t, root) if root else t for t in tests]
        runner = runner_of(files, root)
        quoted = " ".join(map(shlex.quote, rel))
        if runner == "vitest":
            command = f"npx --no-install vitest run {quoted}"
        elif runner in ("jest", "mocha"):
            command = f"npx --no-install {runner} {quoted}"
        elif runner == "bun":
            command = f"bun test {quoted}"
        elif any(t.endswith((".ts", ".tsx", ".mts", ".cts")) for t in tests):
            command = f"node --import tsx --test {quoted}"
        else:
            command = f"node --test {quoted}"
        return f"cd {shlex.quote(root)} && {command}" if root else command

    def example_test(self, hidden: str, changed: Sequence[str], files: Mapping[str, str]) -> str:
        """A test in the package runner's style that imports ``changed[0]`` relative to it."""
        target = PurePosixPath(changed[0]).with_suffix("").as_posix()
        rel = posixpath.relpath(target, posixpath.dirname(hidden) or ".")
        spec = rel if rel.startswith(".") else f"./{rel}"
        runner = runner_of(files, package_root(hidden, files))
        return _TS_EXAMPLE.get(runner, _TS_EXAMPLE["node"]).format(spec=spec)

    def fakes(self, test: str) -> tuple[str, ...]:
        return found(TYPESCRIPT, test)

    def unloadable(self, path: str, files: Mapping[str, str]) -> str | None:
        spec = missing_import(path, files[path], frozenset(files))
        return f"it imports {spec}, which the workspace lacks" if spec else None
