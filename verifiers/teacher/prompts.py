"""The teacher's prompts (jinja2 templates per family) and the parsing of its answers."""

from __future__ import annotations

import posixpath
import re
from pathlib import PurePosixPath

import jinja2

from trajforge.protocols import Language
from trajforge.reconstruct.changed_files import is_test_file
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


def system(language: Language) -> str:
    """The system message of a code task's conversation, in its language."""
    return (
        f"You write hidden {language.tests_by} tests that decide whether a solution to a coding "
        "task is correct. Answer only with test files in fenced blocks, each opened with "
        f"```{language.fence} file=PATH (PATH relative to the repository root)."
    )


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
    return {
        "fence": language.fence,
        "runner": language.test_command([hidden], files),
        "stub": language.stub_words,
        "example": language.example_test(hidden, changed, files) if changed else "",
    }


def instruction_prompt(brief: InstructionBrief) -> str:
    """The request for an agent-facing instruction (``instruction.j2``)."""
    return _ENV.get_template("instruction.j2").render(
        family=brief.family,
        request=brief.request,
        interface=brief.interface,
        required=brief.required,
        forbidden=brief.forbidden.listing(),
        tests=sorted(brief.tests.items()),
    )


def instruction_messages(brief: InstructionBrief) -> list[dict[str, str]]:
    """The conversation asking for an instruction: the request, and when the writer's previous
    answer could not be used, that answer and why (as the test rounds' feedback is given)."""
    messages = [
        {"role": "system", "content": INSTRUCTION_SYSTEM},
        {"role": "user", "content": instruction_prompt(brief)},
    ]
    if brief.retry:
        again = (
            f"Your instruction could not be used. {brief.retry}\n\n"
            "Write the whole instruction again, following every rule above."
        )
        messages += [
            {"role": "assistant", "content": brief.previous},
            {"role": "user", "content": again},
        ]
    return messages


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
            problems.append(f"file={name}: {language.test_names}")
        else:
            files[name] = body
    if not files and not problems:
        problems.append(f"no ```{language.fence} file=PATH block found in the answer")
    return files, problems
