"""Push a dataset folder to a target: ``hf://datasets/ORG/NAME`` or a local directory.

:func:`push` is the one entry point. ``hf://`` targets go to
:func:`trajforge.splits.hub.push_hub` (imported lazily, so the Hub client is only needed when
it is used); anything else is a directory holding a local git repository in Hub layout
(:func:`trajforge.splits.localgit.push_local`).
"""

from __future__ import annotations

from pathlib import Path

from trajforge.errors import UsageError
from trajforge.splits.push_result import PushResult

__all__ = ["HF_DATASETS_PREFIX", "HF_PREFIX", "PushResult", "hub_repo_id", "push"]

HF_PREFIX = "hf://"
HF_DATASETS_PREFIX = "hf://datasets/"


def hub_repo_id(to: str) -> str:
    """``ORG/NAME`` from ``hf://datasets/ORG/NAME``; UsageError for anything else."""
    if not to.startswith(HF_DATASETS_PREFIX):
        raise UsageError(f"--to {to!r}: Hub targets look like hf://datasets/ORG/NAME")
    repo_id = to[len(HF_DATASETS_PREFIX) :].strip("/")
    parts = repo_id.split("/")
    if len(parts) != 2 or not all(parts):
        raise UsageError(f"--to {to!r}: Hub targets look like hf://datasets/ORG/NAME")
    return repo_id


def push(dataset: Path, to: str, revision: str) -> PushResult:
    """Publish the dataset folder ``dataset`` as ``revision`` of ``to``."""
    dataset = dataset.resolve()
    if to.startswith(HF_PREFIX):
        from trajforge.splits.hub import push_hub

        result: PushResult = push_hub(dataset, hub_repo_id(to), revision)
        return result
    from trajforge.splits.localgit import push_local

    return push_local(dataset, Path(to).resolve(), revision)
