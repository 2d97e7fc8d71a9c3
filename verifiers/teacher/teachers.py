"""The teachers: who writes a code task's hidden tests (and may write its instruction).

``mined`` (offline, the default) takes the tests the agent wrote and ran green from the oracle
(:mod:`~trajforge.verifiers.teacher.mined`) and proves them once; ``openai:MODEL``
(:class:`~trajforge.verifiers.teacher.loop.OpenAITeacher`) asks a model for tests, proves them
and feeds what survived back for up to ``teacher_rounds`` rounds. Both satisfy
:class:`~trajforge.protocols.Teacher`; :func:`make_teacher` makes one from its name.
"""

from __future__ import annotations

from pathlib import Path

from trajforge.errors import UsageError
from trajforge.protocols import Teacher
from trajforge.registry import TEACHERS, resolve
from trajforge.verifiers.teacher.mined import MINED, MinedTeacher
from trajforge.verifiers.validate.config import ValidateConfig

OPENAI = "openai:"
__all__ = ["MINED", "OPENAI", "MinedTeacher", "check_name", "make_teacher"]


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
