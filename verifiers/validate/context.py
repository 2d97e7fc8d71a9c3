"""What every task's validation shares, and the one place it is built.

The CLI (``validate``, ``demo``, ``dataenv validate``), an executor's workers and the
benchmarks all go through :func:`build_context` from a :class:`ContextSpec` — names and
settings only, so a worker on another node rebuilds the same context from what it is shipped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from trajforge.errors import SandboxError
from trajforge.protocols import Sandbox, Teacher
from trajforge.registry import SANDBOXES, create
from trajforge.verifiers.teacher.teachers import MINED, MinedTeacher, make_teacher
from trajforge.verifiers.validate.config import ValidateConfig


@dataclass(frozen=True)
class ContextSpec:
    """Names and settings a validation context is built from."""

    backend: str
    """Sandbox backend (``local``, ``docker``)."""
    config: ValidateConfig
    """Acceptance rules and budgets."""
    teacher: str = MINED
    """``mined`` or ``openai:MODEL``."""
    base_dirs: tuple[str, ...] = ()
    """Folders relative session paths are looked up in (history checks)."""
    out_dir: str = "."
    """The task output folder (the teacher's answer cache lives there)."""
    probe: bool = True
    """Check the sandbox is usable here (False on an executor's driver: workers check)."""


@dataclass(frozen=True)
class Context:
    """What every task's validation shares."""

    sandbox: Sandbox
    backend: str
    image: str
    config: ValidateConfig
    base_dirs: tuple[Path, ...] = ()
    teacher: Teacher = field(default_factory=MinedTeacher)
    """Writes the hidden tests of code tasks (and may write instructions)."""

    def spec(self, out_dir: Path, extra_dirs: tuple[str, ...] = ()) -> ContextSpec:
        """The spec this context rebuilds from elsewhere (``extra_dirs`` join the search)."""
        dirs = (*extra_dirs, *(str(d) for d in self.base_dirs))
        return ContextSpec(self.backend, self.config, self.teacher.name, dirs, str(out_dir))


def build_context(spec: ContextSpec) -> Context:
    """The sandbox (probed unless ``spec.probe`` is False), its image, and the teacher."""
    sandbox: Sandbox = create(SANDBOXES, spec.backend, "sandbox")
    if spec.probe:
        problem = sandbox.available()
        if problem:
            raise SandboxError(f"sandbox {spec.backend} is not usable here: {problem}")
    teacher = make_teacher(spec.teacher, spec.config, Path(spec.out_dir))
    base_dirs = tuple(Path(d) for d in spec.base_dirs)
    return Context(sandbox, spec.backend, sandbox.image, spec.config, base_dirs, teacher)
