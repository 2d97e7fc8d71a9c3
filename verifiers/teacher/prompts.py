"""The teacher's prompts (jinja2 templates per family) and the parsing of its answers."""

from __future__ import annotations

import posixpath
import re
from pathlib import PurePosixPath

import jinja2

from trajforge.protocols import Language
from trajforge.reconstruct.families import is_test_file
from trajforge.reconstruct.node_project import package_root, runner_of
from trajforge.records import InstructionBrief, Task
from trajforge.verifiers.languages import language_named, language_of

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
STUBS = {
    "python": "every body replaced by `raise NotImplementedError`",
    "typescript": 'every function body replaced by `throw new Error("not implemented")`',
}
"""What the stub control does, in each language's words (the prompt names it)."""


def system(language: Language) -> str:
    """The system message of a code task's conversation, in its language."""
    runner = "pytest" if language.name == "python" else "TypeScript / JavaScript"
    return (
        f"You write hidden {runner} tests that decide whether a solution to a coding task is "
        "correct. Answer only with test files in fenced blocks, each opened with "
        f"```{language.fence} file=PATH (PATH relative to the repository root)."
    )


SYSTEM = system(language_named("python"))


ACCEPTED = {
    "python": "only pytest files named test_*.py are accepted",
    "typescript": "only test files named *.test.ts / *.spec.ts (or .js, .tsx, .mjs) are accepted",
}
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
    "node": 'import {{ describe, it }} from "node:test";\n'
    'import assert from "node:assert/strict";\nimport {{ thing }} from "{spec}";\n'
    + _TS_BODY.replace("{check}", "assert.equal(thing(...), ...)"),
}
"""An example test per TypeScript runner family (``thing`` stands for the contract's names)."""
MAX_EXAMPLES = 2
"""The repository's own test files shown as style examples (the nearest ones first)."""


def changed_code(workspace: dict[str, str], oracle: dict[str, str]) -> dict[str, str]:
    """Oracle files (not tests) the episode created or changed, whatever their language."""
    return {
        p: text
        for p, text in sorted(oracle.items())
        if not is_test_file(p) and workspace.get(p) != text
    }


def changed_sources(
    language: Language, workspace: dict[str, str], oracle: dict[str, str]
) -> dict[str, str]:
    """Oracle source files of ``language`` (not tests) the episode created or changed."""
    return {p: t for p, t in changed_code(workspace, oracle).items() if language.is_source(p)}


def task_language(workspace: dict[str, str], oracle: dict[str, str]) -> Language | None:
    """The language of the source the episode changed (None: none a registered one tests)."""
    return language_of(changed_code(workspace, oracle))


def _examples(language: Language, oracle: dict[str, str], near: str) -> dict[str, str]:
    tests = [p for p in oracle if is_test_file(p) and language.accepts_test_path(p)]
    chosen = sorted(tests, key=lambda p: (-_shared_depth(p, near), p))[:MAX_EXAMPLES]
    return {p: oracle[p] for p in sorted(chosen)}


def _shared_depth(a: str, b: str) -> int:
    """How many leading folders two paths share (the nearest test files come first)."""
    common = posixpath.commonpath([posixpath.dirname(a) or ".", posixpath.dirname(b) or "."])
    return len(PurePosixPath(common).parts) if common not in ("", ".") else 0


def first_prompt(task: Task, workspace: dict[str, str], oracle: dict[str, str]) -> str:
    """The opening request for one task, from its family's template, in its language."""
    language = task_language(workspace, oracle) or language_named("python")
    changed = changed_sources(language, workspace, oracle)
    lines = [line for p, text in changed.items() for line in language.contract(p, text)]
    hidden = language.hidden_test_path(list(changed) or ["x.py"], oracle)
    template = _ENV.get_template(f"{task.family}.j2")
    return template.render(
        instruction=task.request if task.request is not None else task.instruction,
        contract="\n".join(lines),
        changed=changed,
        examples=_examples(language, oracle, hidden),
        hidden_name=hidden,
        lang=_lang(language, hidden, list(changed), oracle),
    )


def _lang(
    language: Language, hidden: str, changed: list[str], files: dict[str, str]
) -> dict[str, str]:
    """What the templates say in the task's language: fence, stub, runner, an example test."""
    command = language.test_command([hidden], files)
    words = {"fence": language.fence, "language": language.name, "runner": command}
    words["stub"] = STUBS.get(language.name, "every body replaced by a throw")
    if language.name == "typescript" and changed:
        target = PurePosixPath(changed[0]).with_suffix("")
        rel = PurePosixPath(*([".."] * (len(PurePosixPath(hidden).parts) - 1)), target)
        spec = rel.as_posix() if rel.as_posix().startswith(".") else f"./{rel.as_posix()}"
        runner = runner_of(files, package_root(hidden, files))
        words["example"] = _TS_EXAMPLE.get(runner, _TS_EXAMPLE["node"]).format(spec=spec)
    return words


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


def parse_answer(text: str, language: Language) -> tuple[dict[str, str], list[str]]:
    """(test files by path, problems) of one answer; a problem for every unusable block."""
    files: dict[str, str] = {}
    problems: list[str] = []
    for path, body in _BLOCK.findall(text):
        clean = PurePosixPath(path.strip("`'\""))
        name = clean.as_posix()
        if clean.is_absolute() or ".." in clean.parts:
            problems.append(f"file={name}: the path must stay inside the repository")
        elif not language.accepts_test_path(name):
            problems.append(f"file={name}: {ACCEPTED[language.name]}")
        else:
            files[name] = body
    if not files and not problems:
        problems.append(f"no ```{language.fence} file=PATH block found in the answer")
    return files, problems
