"""Several training processes (``accelerate launch`` / ``torchrun``): who does what.

Every process runs its own rollouts (its own harness processes, capture proxy and, without
``trainer.vllm_url``, its own in-process policy server on its replica of the model) for the
prompts TRL hands it. Rollout records go to ``rollouts.rank<R>.jsonl`` per process and the
main process merges them into ``rollouts.jsonl`` at the end; only the main process writes the
summary files, prints results and talks to the vLLM server's adapter endpoints.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

SEED_STRIDE = 100_003
"""Sampling seeds of process R start at seed + R * SEED_STRIDE (replicas must not sample alike)."""


def rank() -> int:
    """This process's global rank (0 when not launched by torchrun / accelerate)."""
    return int(os.environ.get("RANK", "0"))


def world() -> int:
    """Number of training processes (1 when not launched by torchrun / accelerate)."""
    return int(os.environ.get("WORLD_SIZE", "1"))


def is_main() -> bool:
    """Whether this is the process that writes outputs and prints results."""
    return rank() == 0


def log_path(out: Path) -> Path:
    """Where this process appends its rollout records."""
    return out / ("rollouts.jsonl" if world() == 1 else f"rollouts.rank{rank()}.jsonl")


def sampling_seed(seed: int) -> int:
    """The first sampling seed of this process."""
    return seed + rank() * SEED_STRIDE


def wait_for_everyone() -> None:
    """Barrier across training processes (a no-op in a single process)."""
    if world() > 1:
        from accelerate import PartialState

        PartialState().wait_for_everyone()


def merge_logs(out: Path) -> list[dict[str, Any]]:
    """Main process, after a barrier: every process's records appended to ``rollouts.jsonl``
    (which a resumed run continues); all its records."""
    final = out / "rollouts.jsonl"
    if world() > 1:
        parts = [out / f"rollouts.rank{r}.jsonl" for r in range(world())]
        with final.open("a") as fh:
            for part in parts:
                fh.writelines(json.dumps(r, sort_keys=True) + "\n" for r in _read(part))
        for part in parts:
            part.unlink(missing_ok=True)
    return _read(final)


def _read(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
