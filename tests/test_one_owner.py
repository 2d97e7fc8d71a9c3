"""One owner of each name in the validate wing (``verifiers/``, ``oracles/``): no public class,
function or constant is defined in two modules, so a reader who meets a name finds one
definition. Per-language modules of one seam (``oracles/mutate_*.py``,
``verifiers/languages/*.py``) define the same names by design — each is one language's side of
the seam — and ``docker_inside.py`` is a script run inside the container, importing nothing."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
WING = ("verifiers", "oracles")
PER_LANGUAGE = (("oracles", "mutate_*.py"), ("verifiers/languages", "*.py"))
SCRIPTS = ("verifiers/sandbox/docker_inside.py",)


def _public(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return {n for n in names if not n.startswith("_") and n != "log"}


def _owners(root: Path, paths: list[Path], exempt: set[Path]) -> dict[str, list[str]]:
    """Each public name defined in more than one of ``paths`` → those modules."""
    owners: dict[str, list[str]] = defaultdict(list)
    for path in paths:
        if path.name.startswith("_") or path in exempt:
            continue
        for name in _public(ast.parse(path.read_text(encoding="utf-8"))):
            owners[name].append(path.relative_to(root).as_posix())
    return {n: m for n, m in owners.items() if len(m) > 1}


def test_no_public_name_is_defined_twice_in_the_wing() -> None:
    paths = sorted(p for folder in WING for p in (REPO / folder).rglob("*.py"))
    assert len(paths) > 60, len(paths)
    exempt = {p for folder, glob in PER_LANGUAGE for p in (REPO / folder).glob(glob)}
    twice = _owners(REPO, paths, exempt | {REPO / s for s in SCRIPTS})
    assert not twice, "defined in more than one module (rename one, or import it):\n" + "\n".join(
        f"{name}: {', '.join(where)}" for name, where in sorted(twice.items())
    )


def test_the_check_sees_a_name_defined_twice(tmp_path: Path) -> None:
    for name in ("a.py", "b.py", "lang.py"):
        (tmp_path / name).write_text("RETRIES = 3\n\n\ndef judge() -> None: ...\n")
    (tmp_path / "c.py").write_text("_private = 1\nlog = None\n")
    paths = sorted(tmp_path.glob("*.py"))
    found = _owners(tmp_path, paths, {tmp_path / "lang.py"})
    assert found == {"RETRIES": ["a.py", "b.py"], "judge": ["a.py", "b.py"]}
