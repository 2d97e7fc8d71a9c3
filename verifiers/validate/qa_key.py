"""Controls of a keyed qa task: the checker must accept paraphrases and reject wrong values.

A reconstructed qa task's :class:`~trajforge.records.AnswerKey` names the grounded facts its
answer must state. Validation proves the checker on answers it builds from the key — the
recorded answer, the facts alone, the facts in other words (numbers spelled out) — which
must pass, and on wrong ones — nothing, each number off by one or doubled, each name swapped
for another of the workspace's or misspelt, the opposite yes/no, the question echoed back, the
facts hedged among alternatives — which must fail. A guess must fail too: yes or no with
as many of the workspace's most frequent names as the checker lets an answer list. A key
such a skim of the workspace states (``Yes. `vLLM`, ...`` for a yes/no whose evidence is the
project's most mentioned name) cannot tell an answer from a guess: the task is rejected.
Facts grounded in a command's output are re-derived by re-running that command on the
starting workspace in the sandbox.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from trajforge.protocols import Limits, Sandbox
from trajforge.reconstruct.facts import NAME_KINDS, Grounds, answer_key, frequent_names
from trajforge.records import (
    AnswerKey,
    Control,
    ControlCell,
    ControlId,
    Expect,
    Fact,
    FactKind,
    Outcome,
    QaEvidence,
    Reason,
    Reproduction,
    Status,
    Task,
    Validation,
    control_map,
    finding,
)
from trajforge.verifiers.answer_facts import MAX_NAMES, UNITS, check_key
from trajforge.verifiers.validate.config import ValidateConfig
from trajforge.verifiers.validate.qa import PREVIEW, answer_cell, misjudged

SKIM_FILE = 512 * 1024
SKIM_TOTAL = 8 * 1024 * 1024
"""Bytes of one file, and of the workspace, the guess is drawn from (larger files skipped)."""
GUESSABLE = "answer key is guessable"
WORDS = {v: k for k, v in UNITS.items() if " " not in k and k not in ("once", "twice")}


def _say(fact: Fact, value: str | None = None) -> str:
    text = value if value is not None else fact.value
    if fact.kind == "polarity":
        return "Yes" if text == "yes" else "No"
    return f"`{text}`" if fact.kind in ("identifier", "path") else text


def _render(key: AnswerKey, swap: dict[int, str] | None = None) -> str:
    """The required facts as one short answer, with some replaced."""
    swap = swap or {}
    return "; ".join(_say(f, swap.get(n)) for n, f in enumerate(key.required))


def _in_words(key: AnswerKey) -> str | None:
    """The facts with every small whole number spelled out (None when there is none)."""
    parts, changed = [], False
    for fact in key.required:
        number = fact.value.replace(",", "")
        if fact.kind == "number" and number.isdigit() and int(number) in WORDS:
            parts.append(WORDS[int(number)])
            changed = True
        else:
            parts.append(_say(fact))
    return " — ".join(parts) if changed else None


def _wrong_numbers(value: str) -> list[str]:
    number = value.replace(",", "").rstrip("%").strip()
    try:
        x = float(number)
    except ValueError:
        return []
    step = 1.0 if "." not in number else 10 ** -len(number.split(".")[1])
    options = [x + step, x - step if x - step >= 0 else x + 2 * step, x * 2 if x else 2.0]
    digits = len(number.split(".")[1]) if "." in number else 0
    return list(dict.fromkeys(f"{o:.{digits}f}" for o in options if o != x))


def _other_name(fact: Fact, key: AnswerKey) -> str:
    """Another name of the same kind from the answer's facts, else a misspelling of its last
    letter or digit (trailing ``()`` or quotes kept, so the checker cannot read it as the name)."""
    for other in key.others:
        if other.kind == fact.kind and other.value.lower() != fact.value.lower():
            return other.value
    value = fact.value
    last = max((i for i, c in enumerate(value) if c.isalnum()), default=len(value) - 1)
    swapped = "X" if value[last : last + 1] != "X" else "Y"
    return value[:last] + swapped + value[last + 1 :]  # getRandomValues() → getRandomValueX()


def wrong_answers(key: AnswerKey, question: str) -> dict[ControlId, str]:
    """Wrong answers that must fail, by control."""
    wrong = {ControlId(Control.EMPTY): "", ControlId(Control.QUESTION): question}
    for n, fact in enumerate(key.required):
        if fact.kind == "number":
            for m, bad in enumerate(_wrong_numbers(fact.value)):
                wrong[ControlId(Control.NUMBER, f"{n}:{m}")] = _render(key, {n: bad})
            alternatives = " or ".join([fact.value, *_wrong_numbers(fact.value)[:1]])
            wrong[ControlId(Control.HEDGED, str(n))] = _render(key, {n: alternatives})
        elif fact.kind == "polarity":
            flipped = "no" if fact.value == "yes" else "yes"
            wrong[ControlId(Control.POLARITY, str(n))] = _render(key, {n: flipped})
        else:
            wrong[ControlId(Control.NAME, str(n))] = _render(key, {n: _other_name(fact, key)})
    return wrong


def _skim(workspace: Path) -> Iterator[str]:
    """The text of the workspace's files, up to :data:`SKIM_TOTAL` bytes in path order."""
    left = SKIM_TOTAL
    for path in sorted(workspace.rglob("*")):
        if ".git" in path.relative_to(workspace).parts or not path.is_file():
            continue
        size = path.stat().st_size
        if size > SKIM_FILE or size > left or path.is_symlink():
            continue
        left -= size
        data = path.read_bytes()
        if b"\0" not in data[:4096]:
            yield data.decode("utf-8", errors="replace")


def guesses(key: AnswerKey, workspace: Path) -> dict[ControlId, str]:
    """Answers a guesser writes without reading the question's subject: yes and no (for a
    yes/no question) with as many of the workspace's most frequent names, of the kinds the key
    names, as the checker lets an answer list."""
    kinds: list[FactKind] = [k for k in NAME_KINDS if any(f.kind == k for f in key.required)]
    names = frequent_names(_skim(workspace), kinds, MAX_NAMES) if kinds else []
    if not names:
        return {}
    listed = ", ".join(f"`{name}`" for name in names)
    if not any(f.kind == "polarity" for f in key.required):
        return {ControlId(Control.GUESS): listed}
    return {
        ControlId(Control.GUESS, "yes"): f"Yes. {listed}",
        ControlId(Control.GUESS, "no"): f"No. {listed}",
    }


def _cell(key: AnswerKey, given: str, expect: Expect, control: ControlId) -> ControlCell:
    return answer_cell(check_key(key, given), expect, control)


def key_controls(
    task: Task, key: AnswerKey, earlier: list[str], workspace: Path
) -> dict[str, ControlCell]:
    """Checker verdicts on valid paraphrases (pass), wrong answers and guesses (fail)."""
    cells = [
        _cell(key, task.answer or "", Outcome.PASS, ControlId(Control.ORACLE)),
        _cell(key, _render(key), Outcome.PASS, ControlId(Control.PARAPHRASE, "facts")),
    ]
    if (words := _in_words(key)) is not None:
        cells.append(_cell(key, words, Outcome.PASS, ControlId(Control.PARAPHRASE, "words")))
    wrong = wrong_answers(key, task.request or task.instruction) | guesses(key, workspace)
    cells += [_cell(key, given, Outcome.FAIL, name) for name, given in wrong.items()]
    for n, answer in enumerate(a for a in dict.fromkeys(earlier) if a != task.answer):
        cell = _cell(key, answer, Outcome.FAIL, ControlId(Control.PROBE, str(n)))
        if cell.result == Outcome.FAIL:  # an earlier answer the checker accepts was right then
            cells.append(cell)
    return control_map(cells)


def reproduce_key(
    sandbox: Sandbox, workspace: Path, task: Task, key: AnswerKey, cfg: ValidateConfig
) -> list[Reproduction]:
    """Re-run each command a required fact was grounded in; the fact must be found again."""
    commands = {
        f.grounded_in.removeprefix("output:")
        for f in key.required
        if f.grounded_in.startswith("output:")
    }
    if not commands:
        return []
    rows = []
    with sandbox.session(workspace, Limits(timeout_s=cfg.timeout_s)) as box:
        for command in sorted(commands):
            box.reset(workspace)
            run = box.run(command, timeout=cfg.timeout_s)
            question = task.request or task.instruction
            again = answer_key(question, task.answer or "", Grounds({}, {command: run.stdout}))
            found = {f.value for f in again.required + again.others} if again else set()
            wanted = {f.value for f in key.required if f.grounded_in == f"output:{command}"}
            rows.append(
                Reproduction(
                    command=command,
                    exit_code=run.exit_code,
                    reproduces=run.exit_code == 0 and wanted <= found,
                    output=run.stdout[-PREVIEW:],
                    wall_s=run.wall_s,
                )
            )
    return rows


def judge_keyed(
    task_dir: Path, task: Task, earlier: list[str], sandbox: Sandbox, cfg: ValidateConfig
) -> Validation:
    """Accepted when every control of the key behaves and output-grounded facts reproduce."""
    assert task.answer_key is not None
    key = task.answer_key
    workspace = task_dir / task.workspace
    controls = key_controls(task, key, earlier, workspace)
    rerun = reproduce_key(sandbox, workspace, task, key, cfg)
    accepted = tuple(
        sorted(
            n
            for n, c in controls.items()
            if c.control == Control.PARAPHRASE and c.result == Outcome.PASS
        )
    )
    evidence = QaEvidence(reproduced=tuple(rerun), paraphrases_accepted=accepted)
    found = [
        finding(
            Reason.KEY_GUESSABLE,
            f"{GUESSABLE}: {cell.given!r} passes, a list of the workspace's most frequent names",
        )
        for cell in controls.values()
        if cell.control == Control.GUESS and not cell.ok
    ][:1]
    found += misjudged({n: c for n, c in controls.items() if c.control != Control.GUESS})
    for row in rerun:
        if not row.reproduces:
            text = f"answer not reproduced: `{row.command}` no longer prints its facts"
            found.append(finding(Reason.ANSWER_NOT_REPRODUCED, text))
    if found:
        return Validation(
            status=Status.REJECTED, findings=tuple(found), controls=controls, evidence=evidence
        )
    wrong = sum(1 for c in controls.values() if c.expect == Outcome.FAIL)
    facts = ", ".join(f"{f.kind} {f.value}" for f in key.required)
    summary = [
        f"answer checker accepts the recorded answer and {len(accepted)}"
        f" paraphrase(s) stating {facts}, and rejects all {wrong} wrong answers"
    ]
    summary += [f"facts reproduced by `{r.command}` in the sandbox" for r in rerun]
    proven = tuple(finding(Reason.PROVEN, t) for t in summary)
    return Validation(status=Status.ACCEPTED, findings=proven, controls=controls, evidence=evidence)
