"""The teachers: who writes a code task's hidden tests (and may write its instruction).

``mined`` (offline, the default) takes the tests the agent wrote and ran green from the oracle
(:func:`~trajforge.verifiers.validate.hidden.prepare`) and proves them once; ``openai:MODEL``
(:class:`~trajforge.verifiers.teacher.loop.OpenAITeacher`) asks a model for tests, proves them
and feeds what survived back for up to ``teacher_rounds`` rounds. Both satisfy
:class:`~trajforge.protocols.Teacher`; :func:`make_teacher` makes one from its name.
"""

from __future__ import annotations

from pathlib import Path

from trajforge.errors import UsageError
from trajforge.protocols import Prove, Teacher
from trajforge.records import InstructionBrief, Task, Validation, WrittenInstruction
from trajforge.registry import TEACHERS, resolve
from trajforge.verifiers.validate.config import ValidateConfig
from trajforge.verifiers.validate.hidden import prepare

MINED = "mined"
OPENAI = "openai:"


class MinedTeacher:
    """The offline teacher: the session's own tests, mined from the oracle, proven once."""

    name = MINED
    writes_tests = False

    @classmethod
    def from_spec(cls, name: str, cfg: ValidateConfig, out_dir: Path) -> MinedTeacher:
        """``mined`` takes no settings."""
        return cls()

    def hidden_tests(self, task_dir: Path, task: Task, prove: Prove) -> tuple[Task, Validation]:
        """Mine the oracle's test files into ``tests/`` and prove them."""
        task, hidden = prepare(task_dir, task)
        return task, prove(task, hidden)

    def write_instruction(self, brief: InstructionBrief) -> WrittenInstruction | None:
        """None: the offline instruction (request + interface) is used."""
        return None


def check_name(name: str) -> None:
    """Raise UsageError unless ``name`` is ``mined`` or ``openai:MODEL``."""
    if name != MINED and not (name.startswith(OPENAI) and len(name) > len(OPENAI)):
        raise UsageError(f"--teacher {name!r}: expected mined or openai:MODEL")


def make_teacher(name: str, cfg: ValidateConfig, out_dir: Path) -> Teacher:
    """The teacher ``name`` names, from the registry (``openai:MODEL`` reads this process's
    ``OPENAI_*`` environment)."""
    check_name(name)
    teacher: Teacher = resolve(TEACHERS, name.split(":", 1)[0], "teacher").from_spec(
        name, cfg, out_dir
    )
    return teacher
