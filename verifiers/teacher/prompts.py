"""The teacher's prompts (jinja2 templates per family) and the parsing of its answers."""

from __future__ import annotations

import ast
import re
from pathlib import PurePosixPath

import jinja2

from trajforge import pyast
from trajforge.reconstruct.families import is_test_file
from trajforge.records import InstructionBrief, Task

_ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("trajforge.verifiers.teacher", "prompts"),
    undefined=jinja2.StrictUndefined,
    keep_trailing_newline=True,
    autoescape=False,
)
_BLOCK = re.compile(r"```[a-zA-Z0-9_+-]*[ \t]+file=(\S+)[^\n]*\n(.*?)```", re.DOTALL)
_WHOLE_FENCE = re.compile(r"```[a-zA-Z]*\n(.*)\n```", re.DOTALL)
INSTRUCTION_SYSTEM = (
    "You write task instructions for coding agents. You state the interface the agent's "
    "work must provide and never reveal anything about the hidden tests."
)
SYSTEM = (
    "You write hidden pytest tests that decide whether a solution to a coding task is "
    "correct. Answer only with test files in fenced blocks, each opened with "
    "```python file=PATH (PATH relative to the repository root)."
)


def _signature(node: ast.FunctionDef | ast.AsyncFunctionDef, owner: str = "") -> str:
    prefix = "async def" if isinstance(node, ast.AsyncFunctionDef) else "def"
    returns = f" -> {ast.unparse(node.returns)}" if node.returns else ""
    doc = ast.get_docstring(node)
    line = f"{prefix} {owner}{node.name}({ast.unparse(node.args)}){returns}"
    return f"{line}  # {doc.splitlines()[0]}" if doc else line


def _public(name: str) -> bool:
    return not name.startswith("_") or (name.startswith("__") and name.endswith("__"))


def contract(path: str, source: str) -> list[str]:
    """Public function and class signatures of one Python module (empty when unparsable)."""
    try:
        tree = pyast.parse(source)
    except (SyntaxError, ValueError):
        return []
    found = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and _public(node.name):
            found.append(_signature(node))
        elif isinstance(node, ast.ClassDef) and _public(node.name):
            bases = ", ".join(ast.unparse(b) for b in node.bases)
            found.append(f"class {node.name}({bases})" if bases else f"class {node.name}")
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and _public(item.name):
                    found.append("    " + _signature(item, f"{node.name}."))
    module = PurePosixPath(path).with_suffix("").as_posix().replace("/", ".")
    return [f"# module {module} ({path})", *found] if found else []


def changed_sources(
    task: Task, workspace: dict[str, str], oracle: dict[str, str]
) -> dict[str, str]:
    """Oracle Python source files (not tests) the episode created or changed."""
    return {
        p: text
        for p, text in sorted(oracle.items())
        if p.endswith(".py") and not is_test_file(p) and workspace.get(p) != text
    }


def first_prompt(
    task: Task, workspace: dict[str, str], oracle: dict[str, str], hidden_name: str
) -> str:
    """The opening request for one task, from its family's template."""
    changed = changed_sources(task, workspace, oracle)
    lines = [line for p, text in changed.items() for line in contract(p, text)]
    examples = {p: t for p, t in sorted(oracle.items()) if is_test_file(p)}
    template = _ENV.get_template(f"{task.family}.j2")
    return template.render(
        instruction=task.request if task.request is not None else task.instruction,
        contract="\n".join(lines),
        changed=changed,
        examples=examples,
        hidden_name=hidden_name,
    )


def instruction_prompt(brief: InstructionBrief) -> str:
    """The request for an agent-facing instruction (``instruction.j2``)."""
    return _ENV.get_template("instruction.j2").render(
        family=brief.family,
        request=brief.request,
        interface=brief.interface,
        required=brief.required,
        forbidden=brief.forbidden.listing(),
    )


def parse_instruction(text: str) -> str:
    """The instruction of an answer: its text, unwrapped when fenced as a whole."""
    body = text.strip()
    fenced = _WHOLE_FENCE.fullmatch(body)
    return (fenced.group(1) if fenced else body).strip()


def parse_answer(text: str) -> tuple[dict[str, str], list[str]]:
    """(test files by path, problems) of one answer; a problem for every unusable block."""
    files: dict[str, str] = {}
    problems: list[str] = []
    for path, body in _BLOCK.findall(text):
        clean = PurePosixPath(path.strip("`'\""))
        name = clean.as_posix()
        if clean.is_absolute() or ".." in clean.parts:
            problems.append(f"file={name}: the path must stay inside the repository")
        elif not (clean.suffix == ".py" and is_test_file(name)):
            problems.append(f"file={name}: only pytest files named test_*.py are accepted")
        else:
            files[name] = body
    if not files and not problems:
        problems.append("no ```python file=PATH block found in the answer")
    return files, problems
