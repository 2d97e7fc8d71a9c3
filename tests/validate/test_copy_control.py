"""A reference that moves files must not pass with the files copied instead: the ``copy``
control (the oracle with every moved file also left at its old path) must fail.

Found by scoring pi-mono's file-move task (``tools -> core/tools``, …): the teacher's tests only
imported the new paths, so a solution that copied every file and left the originals scored 1.
Here on the pi repair fixture, with a helper module the reference moves into ``lib/``.
"""

from __future__ import annotations

from pathlib import Path

from trajforge.reconstruct import pipeline
from trajforge.records import Control, Outcome, Reason
from trajforge.verifiers.teacher.feedback import feedback
from trajforge.verifiers.validate import run

from .conftest import FIXTURES, local_context, tasks_of

HELPERS = "def double(x):\n    return 2 * x\n\n\ndef halve(x):\n    return x / 2\n"
LAYOUT_TEST = (
    "from pathlib import Path\n\nfrom lib.helpers import double\n\n\n"
    "def test_the_helpers_live_in_lib_only():\n"
    '    assert double(2) == 4 and not Path("helpers.py").exists()\n'
)


def _moving_repair(tmp_path: Path, layout_test: bool) -> tuple[Path, str]:
    """The pi repair fixture whose reference also moves ``helpers.py`` to ``lib/helpers.py``
    (with ``layout_test``: and adds a test that the old path is gone)."""
    out = tmp_path / "out"
    pipeline.run([FIXTURES / "pi" / "repair.jsonl"], out)
    repair = next(t for t in tasks_of(out).values() if t.family == "repair")
    task_dir = out / "tasks" / repair.id
    (task_dir / "workspace" / "helpers.py").write_text(HELPERS)
    (task_dir / "oracle" / "lib").mkdir()
    (task_dir / "oracle" / "lib" / "__init__.py").write_text("")
    (task_dir / "oracle" / "lib" / "helpers.py").write_text(HELPERS)
    if layout_test:
        (task_dir / "oracle" / "test_layout.py").write_text(LAYOUT_TEST)
    return out, repair.id


def test_tests_that_cannot_tell_a_move_from_a_copy_are_rejected(tmp_path: Path) -> None:
    out, task_id = _moving_repair(tmp_path, layout_test=False)
    run.run(out, local_context())
    validation = tasks_of(out)[task_id].validation
    assert validation.status == "rejected"
    copy = validation.controls[Control.COPY.key()]
    assert copy.result == Outcome.PASS and copy.expect == "fail"
    (found,) = [f for f in validation.findings if f.reason == Reason.CONTROL_PASSES]
    assert "the files it moves also left at their old paths passes" in found.detail
    assert "copied, not moved: test that the old paths are gone" in feedback(validation)


def test_a_check_that_the_old_paths_are_gone_fails_the_copy(tmp_path: Path) -> None:
    out, task_id = _moving_repair(tmp_path, layout_test=True)
    run.run(out, local_context())
    validation = tasks_of(out)[task_id].validation
    assert validation.status == "accepted", validation.reasons
    assert validation.controls[Control.COPY.key()].result == Outcome.FAIL
