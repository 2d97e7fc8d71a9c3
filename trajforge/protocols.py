"""The seams: small Protocols every registered implementation satisfies.

``tests/test_conformance.py`` walks every registry entry and checks it against these. The
records that cross them live in :mod:`trajforge.seam_types` (re-exported here).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import (
    TYPE_CHECKING,
    Any,
    Protocol,
    TypeAlias,
    TypeVar,
    runtime_checkable,
)

from trajforge.seam_types import (
    EnvironmentFolder,
    FileChanges,
    GuardDecision,
    HarnessRun,
    Limits,
    ProcessResult,
    RunResult,
    WorkOutcome,
)

if TYPE_CHECKING:  # annotations only: importing the seams loads no record module
    from trajforge.records import (
        InstructionBrief,
        ParseWarning,
        Session,
        Task,
        Validation,
        WrittenInstruction,
    )


@runtime_checkable
class Format(Protocol):
    """A trajectory format: recognise an input and parse it into sessions."""

    name: str
    """Registry name (pi, opencode, hermes, claude-code, codex)."""

    def sniff(self, path: Path, head: bytes) -> bool:
        """True when ``path`` (whose first bytes, decompressed, are ``head``) is this format.

        ``head`` is empty for directories; SQLite files start with ``SQLite format 3``.
        """
        ...

    def parse(self, path: Path) -> Iterator[Session | ParseWarning]:
        """Parse ``path`` into sessions; unusable records become warnings, never exceptions.

        Raises :class:`~trajforge.errors.FormatError` only when nothing in ``path`` is this
        format at all.
        """
        ...


class SandboxSession(Protocol):
    """A live sandbox holding one workspace; several commands run in it."""

    def run(
        self,
        command: Sequence[str] | str,
        *,
        timeout: float | None = None,
        env: Mapping[str, str] | None = None,
    ) -> RunResult:
        """Run ``command`` (argv, or a string for ``sh -c``) in the workspace."""
        ...

    def reset(self, workspace: Path | None = None) -> None:
        """Restore a fresh copy of the original (or the given) workspace."""
        ...

    def copy_out(self, dest: Path) -> None:
        """Copy the current workspace files to ``dest`` (created, must not exist)."""
        ...

    def close(self) -> None:
        """Tear down; idempotent. Leaves nothing running."""
        ...

    def __enter__(self) -> SandboxSession: ...

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...


@runtime_checkable
class Sandbox(Protocol):
    """A sandbox backend (local namespaces, docker)."""

    name: str
    """Registry name."""
    image: str
    """What the runs execute in: the image tag (docker), ``host`` (local)."""

    def available(self) -> str | None:
        """None when usable here, else a sentence saying why not and how to fix it."""
        ...

    def session(self, workspace: Path, limits: Limits | None = None) -> SandboxSession:
        """Start a sandbox with a fresh copy of ``workspace`` (never modified itself)."""
        ...

    def with_environment(self, env: EnvironmentFolder) -> Mounted:
        """This backend with the built environment ``env`` visible, read-only, to every run
        (local: the host folder exposed; docker: an image holding it)."""
        ...


@dataclass(frozen=True)
class Mounted:
    """A backend that sees a built environment: what :meth:`Sandbox.with_environment` gives."""

    sandbox: Sandbox
    """The backend to run in."""
    root: str
    """Where the environment folder is inside it."""
    path: tuple[str, ...]
    """Toolchain folders inside it to put on PATH (docker: the node toolchain)."""
    label: str
    """Where the environment lives, for evidence: the folder (local), the image tag (docker)."""


ItemT = TypeVar("ItemT")
ResultT = TypeVar("ResultT")
__all__ = [
    "Detector",
    "EnvironmentFolder",
    "Executor",
    "FileChanges",
    "Format",
    "GuardDecision",
    "Harness",
    "HarnessRun",
    "Language",
    "Limits",
    "Mounted",
    "ProcessResult",
    "Prove",
    "RunResult",
    "Runner",
    "Sandbox",
    "SandboxSession",
    "Teacher",
    "WorkOutcome",
]


@runtime_checkable
class Executor(Protocol):
    """Runs one picklable function over many picklable items (local process pool, Ray)."""

    name: str
    """Registry name (local, ray)."""

    def available(self) -> str | None:
        """None when usable here, else a sentence saying why not and how to fix it."""
        ...

    def map(
        self, fn: Callable[[ItemT], ResultT], items: Sequence[ItemT]
    ) -> Iterator[WorkOutcome[ResultT]]:
        """Run ``fn`` on every item; yield one outcome per item, in completion order.

        Failures are retried a bounded number of times, then yielded with reason "error";
        no item is ever dropped. ``fn`` must be a module-level function.
        """
        ...

    def close(self) -> None:
        """Release workers or cluster connections this executor started; idempotent."""
        ...


@runtime_checkable
class Detector(Protocol):
    """A guard detector for one rollout: judges each proposed tool call, in order, each tool
    output, and the workspace once the harness has stopped (:class:`~trajforge.guard.engine.
    RuleDetector`, driven by the versioned rule bundle, is the one the guard ships)."""

    name: str
    """Short name of the detector."""
    bundle_version: str
    """Version of the rule bundle in use (goes into every log and manifest)."""

    def check(self, tool: str, arguments: Mapping[str, Any], harness: str = "") -> GuardDecision:
        """Decide one proposed call; state (cwd, files created) carries to the next call."""
        ...

    def check_output(self, text: str) -> GuardDecision:
        """Decide one tool output (literal secrets that reached the agent)."""
        ...

    def check_workspace(self, root: Path) -> list[GuardDecision]:
        """After the rollout: a block for each protected file under ``root`` that changed."""
        ...


class Runner(Protocol):
    """Where one harness run happens (the host, or a sandbox): its folders, environment and
    processes. ``root`` / ``workspace`` are what the harness sees, ``host_root`` /
    ``host_workspace`` where the host finds the files after a run."""

    where: str | None
    """None: on the host; else the sandbox backend (``local``)."""
    root: Path
    """Run folder as the harness sees it (``HOME`` is ``root/home``)."""
    workspace: Path
    """Workspace as the harness sees it (the processes' cwd)."""
    host_root: Path
    """Run folder on the host (where :meth:`fetch` puts files)."""
    host_workspace: Path
    """Workspace on the host (in sync with the harness's after every :meth:`run`)."""

    def connect(self, url: str) -> str:
        """The address under which the harness reaches the host endpoint ``url`` (the host:
        ``url`` itself; a sandbox: a bridge into its network namespace)."""
        ...

    def write(self, rel: str, text: str) -> Path:
        """Write ``root/rel`` (parents created); its path as the harness sees it."""
        ...

    def env(self, extra: dict[str, str], inherit: bool = True) -> dict[str, str]:
        """Environment of a harness process: ``HOME=root/home`` plus ``extra``.

        ``inherit``: on the host, start from the current environment (secrets dropped);
        a sandbox never inherits.
        """
        ...

    def run(
        self, argv: list[str], env: dict[str, str], timeout_s: float, stdin: str = ""
    ) -> ProcessResult:
        """Run ``argv`` in the workspace; the whole process tree is killed after ``timeout_s``."""
        ...

    def fetch(self, rel: str) -> Path | None:
        """``root/rel`` (file or folder) on the host, copied out when needed; None if missing."""
        ...


@runtime_checkable
class Harness(Protocol):
    """A coding-agent CLI driven against an OpenAI-compatible endpoint (replay, train, eval).

    The one harness seam: every registered harness (``trajforge.registry.HARNESSES``) runs
    through any :class:`Runner`, on the host or in the local sandbox.
    """

    name: str
    """Registry name; also the name of its reconstruct format."""

    def version(self) -> str | None:
        """Installed version, or None when the CLI is not installed (asked once per process
        and executable: the answer is cached)."""
        ...

    def tool_call(self, action: tuple[str, ...], workspace: Path) -> dict[str, Any]:
        """One abstract action (write / edit / shell / read) as this harness's tool call."""
        ...

    def run(
        self, request: str, runner: Runner, base_url: str, api_key: str, timeout_s: float
    ) -> HarnessRun:
        """Run the harness on ``request`` through ``runner`` against ``base_url`` (OpenAI API);
        ``api_key`` is the rollout id the guard proxy keys its state on."""
        ...

    def sandbox_paths(self) -> tuple[list[Path], str | None]:
        """(host folders the CLI needs inside a sandbox, why it cannot run there or None)."""
        ...


Prove: TypeAlias = "Callable[[Task, Mapping[str, str]], Validation]"
"""Validation's judge of a code task with the given hidden tests (path → text) in ``tests/``."""


@runtime_checkable
class Teacher(Protocol):
    """Writes what a code task's validation needs that its session does not hold.

    ``mined`` (offline) takes the session's own tests from the oracle; ``openai:MODEL`` asks a
    model and retries with what the controls showed. Either way validation's ``prove`` judges.
    """

    name: str
    """``mined`` or ``openai:MODEL``: in the evidence and in every cache key."""
    writes_tests: bool
    """It writes hidden tests (so a task without a recorded check can still get a verifier);
    False: it only takes the session's own."""

    def hidden_tests(self, task_dir: Path, task: Task, prove: Prove) -> tuple[Task, Validation]:
        """The task with its hidden tests written into ``tests/`` (its verifier pointing at
        them) and the validation ``prove`` gave them (a teacher that retries: the last)."""
        ...

    def write_instruction(self, brief: InstructionBrief) -> WrittenInstruction | None:
        """An accepted task's instruction (None: the offline one is used); may raise
        TrajforgeError, which also falls back to the offline one."""
        ...


@runtime_checkable
class Language(Protocol):
    """One programming language's side of every verifier mechanism: which changed files are
    its source and tests, the oracle's interface contract, the stub and the mutants (through
    :mod:`trajforge.oracles`), the command that runs its hidden tests, and what the teacher is
    told and must answer. Adding a language is a new module in ``LANGUAGES``, not a branch."""

    name: str
    """Registry name (``python``, ``typescript``)."""
    fence: str
    """Markdown fence tag of its code in prompts and answers (``python``, ``ts``)."""
    extensions: tuple[str, ...]
    """Source file suffixes it owns."""
    tests_by: str
    """Who runs its hidden tests, as the teacher's system message names it (``pytest``)."""
    stub_words: str
    """What its stub control does, in the teacher prompt's words."""
    test_names: str
    """Which teacher test files it accepts, as a rejected answer is told."""

    def is_source(self, path: str) -> bool:
        """``path`` is source of this language and not a test."""
        ...

    def contract(self, path: str, text: str) -> list[str]:
        """The public interface of one source file, as lines of this language (empty: none)."""
        ...

    def stub(self, path: str, text: str) -> str | None:
        """The file with every body replaced by a throw / raise (None: nothing to stub)."""
        ...

    def hidden_test_path(self, changed: Sequence[str], files: Mapping[str, str]) -> str:
        """Where the teacher's test file goes so that the project's runner finds it."""
        ...

    def accepts_test_path(self, path: str) -> bool:
        """A teacher's answer may write a test file at ``path``."""
        ...

    def test_command(self, tests: Sequence[str], files: Mapping[str, str]) -> str:
        """The command (from the workspace root) that runs ``tests`` with the project's runner
        (``files``: the workspace, path → text, to find its manifest)."""
        ...

    def example_test(self, hidden: str, changed: Sequence[str], files: Mapping[str, str]) -> str:
        """An example test at ``hidden`` in the runner's style, importing the first of
        ``changed`` ('' : the prompt's own example for the language is enough)."""
        ...

    def fakes(self, test: str) -> tuple[str, ...]:
        """What of the outside world the test file fakes (a process runner, the network, a
        program put on PATH), named as it patches them (empty: it fakes none)."""
        ...

    def unloadable(self, path: str, files: Mapping[str, str]) -> str | None:
        """Why the source file ``path`` cannot be loaded from ``files`` — it imports, when it
        loads, a workspace module that is not there — or None. No test that passes on such a
        reference can load it, so mutants there are not made."""
        ...
