"""TRL's contracts for harness-in-the-loop GRPO: ``rollout_func`` and the verifier reward.

Each prompt is a task id. For every prompt TRL hands over (groups already repeated), one
rollout runs through :func:`trajforge.train.rollout.run_rollout` (the run's setup on the task): the
real harness → the guard
proxy → the capture proxy → the policy server. The capture proxy's turns are stitched into one
row (tool-result tokens masked out with ``env_mask``); the rollout's reward travels to the
reward function as an extra field. Reward: None for an infrastructure error (unscored), 0.0
when the guard blocked anything, else the hidden verifier's reward.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trajforge.errors import TrajforgeError
from trajforge.records import RolloutStatus
from trajforge.scrub import Scrubber
from trajforge.train import ranks
from trajforge.train.capture import CaptureProxy, Row, stitch
from trajforge.train.rollout import Rollout, run_rollout
from trajforge.train.rollout_spec import RolloutSetup, RolloutSpec, spec_for

log = logging.getLogger(__name__)


@dataclass
class RolloutRunner:
    """Runs rollouts for TRL and keeps their records (``rollouts.jsonl``) and counters."""

    tasks: dict[str, Path]
    """Task id → task folder."""
    setup: RolloutSetup
    """The harness in the loop (placed), the verifier sandbox, the budget, the guard bundle."""
    capture: CaptureProxy
    """Capture proxy (already serving) in front of the policy."""
    capture_url: str
    """Its base URL."""
    concurrency: int
    """Rollouts at once."""
    log_path: Path
    """Where every rollout record is appended."""
    pad_id: int
    """Token used for an empty completion (a rollout that never reached the model)."""
    max_completion: int | None = None
    """Completion tokens per row at most (longer rows are cut and count as truncated)."""
    records: list[dict[str, Any]] = field(default_factory=list)
    """Every rollout so far (rollout record + row facts)."""
    _specs: dict[str, RolloutSpec] = field(default_factory=dict)
    """Task id → its rollout spec (the task loaded once)."""
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, prompts: list[Any], trainer: Any = None) -> dict[str, list[Any]]:
        """TRL ``rollout_func``: one row per prompt, in order."""
        ids = [_task_id(p) for p in prompts]
        with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
            results = list(pool.map(self.one, ids))
        step = int(getattr(getattr(trainer, "state", None), "global_step", 0))
        out: dict[str, list[Any]] = {
            "prompt_ids": [],
            "completion_ids": [],
            "logprobs": [],
            "env_mask": [],
            "rollout_reward": [],
        }
        for task_id, (rollout, row) in zip(ids, results, strict=True):
            row = row or self._empty_row(task_id)
            out["prompt_ids"].append(row.prompt_ids)
            out["completion_ids"].append(row.completion_ids)
            out["logprobs"].append(row.logprobs)
            out["env_mask"].append(row.env_mask)
            out["rollout_reward"].append(rollout.reward if rollout else None)
            self.record(step, task_id, rollout, row)
        return out

    def one(self, task_id: str) -> tuple[Rollout | None, Row | None]:
        """Run one rollout of ``task_id``; (None, None) when it could not even start."""
        rid = f"rollout-{uuid.uuid4().hex[:12]}"
        try:
            rollout = run_rollout(self.spec(task_id, rid))
        except (TrajforgeError, OSError) as exc:
            log.warning("rollout of %s failed: %s", task_id, exc)
            self.capture.take(rid)
            return None, None
        turns, cut = self.capture.take(rid)
        row = stitch(turns, self.max_completion)
        if cut and row is not None:
            log.info("rollout %s ran out of turns", rid)
        return rollout, row

    def spec(self, task_id: str, rollout_id: str) -> RolloutSpec:
        """The rollout ``rollout_id`` of ``task_id`` against the capture proxy."""
        with self._lock:
            known = self._specs.get(task_id)
        if known is None:
            known = spec_for(self.setup, self.tasks[task_id], self.capture_url, "policy")
            with self._lock:
                self._specs[task_id] = known
        return dataclasses.replace(known, rollout_id=rollout_id)

    def _empty_row(self, task_id: str) -> Row:
        return Row(prompt_ids=[self.pad_id], completion_ids=[self.pad_id], logprobs=[0.0],
                   env_mask=[1])  # fmt: skip

    def record(self, step: int, task_id: str, rollout: Rollout | None, row: Row | None) -> None:
        """Append the rollout record of ``task_id`` sampled at ``step`` (and keep it)."""
        doc: dict[str, Any] = {"step": step, "task": task_id, "rank": ranks.rank()}
        if rollout is None:
            doc.update(
                status=RolloutStatus.ERROR, reward=None, reasons=["the rollout could not start"]
            )
        else:
            doc.update(rollout.model_dump(mode="json", exclude={"tests", "stderr_tail"}))
        doc.update(
            served_model=self.capture.model,  # the external server's adapter (None: in-process)
            turns=row.turns if row else 0,
            sampled_tokens=sum(row.env_mask) if row else 0,
            masked_tokens=(len(row.env_mask) - sum(row.env_mask)) if row else 0,
            broken=bool(row and row.broken),
            truncated=bool(row and row.truncated),
        )
        doc = Scrubber().value(doc)  # the model's answer or a log path could carry a secret
        with self._lock:
            self.records.append(doc)
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            with self.log_path.open("a") as fh:
                fh.write(json.dumps(doc, sort_keys=True) + "\n")


def _task_id(prompt: Any) -> str:
    if isinstance(prompt, str):
        return prompt
    if isinstance(prompt, list) and prompt and isinstance(prompt[-1], dict):
        return str(prompt[-1].get("content", ""))
    raise TypeError(f"unexpected prompt {prompt!r}: expected a task id")


def verifier_reward(
    prompts: list[Any], completions: list[Any], rollout_reward: list[float | None], **_: Any
) -> list[float | None]:
    """TRL reward function: the rollout's reward (None = unscored infrastructure error)."""
    return [None if r is None else float(r) for r in rollout_reward]


def summarise(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Training metrics over rollout records: reward, block rate, per-family success."""
    scored = [r for r in records if r.get("reward") is not None]
    families: dict[str, dict[str, float | None]] = {}
    for family in sorted({str(r.get("family", "unknown")) for r in records}):
        rows = [r for r in scored if r.get("family") == family]
        families[family] = {
            "rollouts": sum(1 for r in records if r.get("family") == family),
            "scored": len(rows),
            "success_rate": _mean([1.0 if r["reward"] >= 1.0 else 0.0 for r in rows]),
            "mean_reward": _mean([float(r["reward"]) for r in rows]),
        }
    return {
        "rollouts": len(records),
        "scored": len(scored),
        "unscored": len(records) - len(scored),
        "mean_reward": _mean([float(r["reward"]) for r in scored]),
        "block_rate": _mean(
            [1.0 if r.get("status") == RolloutStatus.BLOCKED else 0.0 for r in records]
        ),
        "timeouts": sum(1 for r in records if r.get("status") == RolloutStatus.TIMEOUT),
        "broken_rows": sum(1 for r in records if r.get("broken")),
        "mean_turns": _mean([float(r.get("turns", 0)) for r in records]),
        "per_family": families,
    }


def _mean(values: list[float]) -> float | None:
    return round(sum(values) / len(values), 4) if values else None
