"""Stubs: every function raises, everything around the bodies stays."""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tests.fixtures.scenarios import INVENTORY, REMOVE_ITEM, STATS
from trajforge.oracles import treesitter
from trajforge.oracles.stub import STUBBABLE, _stub_python_unparse, stub_files, stub_source

DATA = Path(__file__).parent / "data"
STDLIB = Path(sysconfig.get_paths()["stdlib"])
REAL_PYTHON = ["colorsys.py", "fractions.py", "textwrap.py", "shlex.py", "dataclasses.py"]

TRICKY = '''"""Module doc."""
import functools

LIMIT = 10  # a comment that stays
NAMES: list[str] = ["a"]


@functools.lru_cache(maxsize=None)
def cached(x: int, *, y: int = LIMIT) -> int: return x + y


class Box:
    """A box."""

    size: int = 3

    def only_doc(self):
        """Nothing else."""

    @staticmethod
    def inline(): """doc"""

    @property
    def area(self) -> int:
        @functools.wraps(print)
        def inner():
            return 1
        return self.size * inner()

    async def fetch(self):
        return 1

    def gen(self):
        yield 1
'''


COMPOUND = (ast.ClassDef, ast.If, ast.Try, ast.With, ast.For, ast.While, ast.Match)


def _outside_functions(node: ast.AST) -> list[ast.AST]:
    """Every node not inside a function body (functions themselves included)."""
    found: list[ast.AST] = []
    for child in ast.iter_child_nodes(node):
        found.append(child)
        if not isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
            found += _outside_functions(child)
    return found


def _shape(source: str) -> list[str]:
    """Everything a stub must keep: signatures, decorators, docstrings, module statements."""
    tree = ast.parse(source)
    keep: list[str] = []
    for node in _outside_functions(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            decorators = [ast.dump(d) for d in node.decorator_list]
            returns = ast.dump(node.returns) if node.returns else ""
            doc = ast.get_docstring(node)
            keep.append(f"{node.name}{ast.dump(node.args)}{decorators}{returns}{doc!r}")
        elif isinstance(node, ast.stmt) and not isinstance(node, COMPOUND):
            keep.append(ast.dump(node))
        elif isinstance(node, ast.ClassDef):
            keep.append(f"class {node.name}{ast.dump(ast.Tuple(node.bases))}")
    return keep


def _outer_functions(source: str) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    return [
        n
        for n in _outside_functions(ast.parse(source))
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
    ]


@pytest.mark.parametrize("name", REAL_PYTHON)
def test_stdlib_module_keeps_its_shape_and_every_body_raises(name: str) -> None:
    source = (STDLIB / name).read_text(encoding="utf-8")
    stubbed = stub_source(name, source)
    assert stubbed is not None
    assert _shape(stubbed) == _shape(source)
    for fn in _outer_functions(stubbed):
        body = fn.body[1:] if ast.get_docstring(fn) is not None else fn.body
        assert [ast.dump(s) for s in body] == [
            ast.dump(ast.parse("raise NotImplementedError").body[0])
        ], fn.name
    # rewritten in place, not re-printed: comments outside bodies survive
    outside = [ln for ln in source.splitlines() if ln.startswith("#")]
    assert all(line in stubbed.splitlines() for line in outside)


def test_tricky_python_keeps_shape() -> None:
    stubbed = stub_source("box.py", TRICKY)
    assert stubbed is not None
    assert _shape(stubbed) == _shape(TRICKY)
    assert "# a comment that stays" in stubbed
    assert 'def inline(): """doc"""; raise NotImplementedError' in stubbed
    assert "inner" not in stubbed  # nested functions go with the body they lived in


def _call_all(tmp_path: Path, files: dict[str, str], script: str) -> dict[str, str]:
    for path, content in files.items():
        (tmp_path / path).write_text(content, encoding="utf-8")
    run = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert run.returncode == 0, run.stderr
    return dict(json.loads(run.stdout))


CALLS = """
import json
def outcome(fn, *args):
    try:
        fn(*args)
    except NotImplementedError:
        return "NotImplementedError"
    except Exception as err:
        return type(err).__name__
    return "returned"
import colorsys, stats, inventory, box
Inventory = inventory.Inventory
inv = object.__new__(Inventory)
inv.items = {}
print(json.dumps({
    "mean": outcome(stats.mean, [1, 2]), "median": outcome(stats.median, [1, 2, 3]),
    "init": outcome(Inventory), "add": outcome(inv.add_item, "a"),
    "remove": outcome(inv.remove_item, "a"),
    "rgb": outcome(colorsys.rgb_to_hsv, 0.1, 0.2, 0.3),
    "cached": outcome(box.cached, 1), "area": outcome(lambda: box.Box().area),
    "gen": outcome(lambda: next(box.Box.gen(None))),
    "const": str(colorsys.ONE_THIRD) + str(box.LIMIT) + str(box.Box.size),
    "doc": stats.median.__doc__, "rdoc": Inventory.remove_item.__doc__,
}))
"""


def test_stubbed_modules_import_and_every_function_raises(tmp_path: Path) -> None:
    files = {
        "stats.py": STATS,
        "inventory.py": INVENTORY.replace("        return self.items[name]\n", REMOVE_ITEM),
        "colorsys.py": (STDLIB / "colorsys.py").read_text(encoding="utf-8"),
        "box.py": TRICKY,
        "test_stats.py": "def test_x():\n    assert 1\n",
        "notes.md": "def f(): nothing\n",
    }
    stubbed = stub_files(files, skip=lambda p: p.startswith("test_"))
    assert stubbed["test_stats.py"] == files["test_stats.py"]
    assert stubbed["notes.md"] == files["notes.md"]
    results = _call_all(tmp_path, {k: v for k, v in stubbed.items() if k.endswith(".py")}, CALLS)
    raising = {k: v for k, v in results.items() if k not in ("const", "doc", "rdoc")}
    assert set(raising.values()) == {"NotImplementedError"}, raising
    assert results["const"] == f"{1.0 / 3.0}103"
    assert results["doc"] == "Median of a non-empty list."
    assert results["rdoc"] == "Remove qty of name; raise KeyError if there is not enough."


def test_unparse_fallback_keeps_shape() -> None:
    # the path taken when rewriting bodies in place would not compile: re-printed from the ast
    out = _stub_python_unparse(ast.parse(TRICKY))
    assert out is not None
    assert _shape(out) == _shape(TRICKY)
    assert all(
        ast.dump(fn.body[-1]) == ast.dump(ast.parse("raise NotImplementedError").body[0])
        for fn in _outer_functions(out)
    )


def test_unstubbable_or_unparsable_is_none() -> None:
    assert stub_source("README.md", "def f(): pass\n") is None
    assert stub_source("broken.py", "def f(:\n") is None
    assert stub_source("broken.js", "function f( {\n") is None
    assert set(STUBBABLE) == {".py", ".js", ".mjs", ".cjs", ".jsx", ".ts", ".tsx"}
    assert stub_files({"broken.py": "def f(:\n"}) == {"broken.py": "def f(:\n"}


def _function_count(grammar: str, source: str) -> int:
    root = treesitter.parse(grammar, source.encode()).root_node
    kinds = {"function_declaration", "method_definition", "arrow_function", "function_expression"}
    count, stack = 0, [root]
    while stack:
        node = stack.pop()
        count += node.type in kinds
        stack.extend(node.named_children)
    return count


def test_real_typescript_stub_parses_and_keeps_declarations() -> None:
    source = (DATA / "snake.ts").read_text(encoding="utf-8")
    stubbed = stub_source("snake.ts", source)
    assert stubbed is not None
    assert treesitter.parses("typescript", stubbed.encode())
    assert stubbed.count('throw new Error("not implemented")') >= 10
    for kept in ("const GAME_WIDTH = 40;", "interface GameState {", 'type Direction = "up"'):
        assert kept in stubbed
    assert "Math.floor(GAME_WIDTH / 2)" not in stubbed  # a body that went
    assert 0 < _function_count("typescript", stubbed) <= _function_count("typescript", source)


def test_tsx_and_expression_bodied_arrows_become_blocks() -> None:
    source = (
        "export const Badge = ({ n }: { n: number }) => <b>{n + 1}</b>;\n"
        "abstract class A { abstract m(): void; k(): number { return 1; } x = 5; }\n"
        "function over(a: string): string;\nfunction over(a: any) { return a; }\n"
    )
    stubbed = stub_source("badge.tsx", source)
    assert stubbed is not None and treesitter.parses("tsx", stubbed.encode())
    assert stubbed.splitlines() == [
        'export const Badge = ({ n }: { n: number }) => { throw new Error("not implemented"); };',
        "abstract class A { abstract m(): void; "
        'k(): number { throw new Error("not implemented"); } x = 5; }',
        "function over(a: string): string;",
        'function over(a: any) { throw new Error("not implemented"); }',
    ]


NODE = shutil.which("node")


@pytest.mark.skipif(NODE is None, reason="SKIPPED LOUDLY: `node` is not installed here")
def test_real_javascript_stub_runs_and_throws(tmp_path: Path) -> None:
    source = (DATA / "ms.js").read_text(encoding="utf-8")
    stubbed = stub_source("ms.js", source)
    assert stubbed is not None and treesitter.parses("javascript", stubbed.encode())
    (tmp_path / "orig.js").write_text(source, encoding="utf-8")
    (tmp_path / "stub.js").write_text(stubbed, encoding="utf-8")
    script = (
        "const call = (m) => { try { return String(require(m)('2 days')); }"
        " catch (e) { return 'threw: ' + e.message; } };"
        "console.log(JSON.stringify([call('./orig.js'), call('./stub.js')]));"
    )
    run = subprocess.run(
        [str(NODE), "-e", script], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == ["172800000", "threw: not implemented"]
