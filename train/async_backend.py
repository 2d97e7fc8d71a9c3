"""``trainer.backend = "async_grpo"``: TRL's AsyncGRPOTrainer with the harness in the loop.

Generation and training overlap. On the main process a rollout worker thread
(:class:`HarnessRolloutWorker`) runs one group of ``grpo.num_generations`` rollouts per task
after another, through the same :class:`~trajforge.train.grpo_rollouts.RolloutRunner` as the
``grpo`` backend (real harness → guard proxy → capture proxy → policy server; the hidden
verifier scores the workspace), and queues one scored sample per rollout: the stitched token
row with tool-result tokens masked, the engine's logprobs and the group-normalised advantage.
TRL trains on the samples as they come, drops those more than ``grpo.max_staleness`` policy
versions old, and after every optimizer step publishes the adapter to the server itself
(``/pause``, save, ``/v1/load_lora_adapter`` as ``<harness>-policy-vN``, ``/resume``); the
worker's next group asks for that name. The server is vLLM with ``--enable-lora`` or, on a CPU,
``trajforge serve --enable-lora`` (then :mod:`~trajforge.train.tree_attention` stands in for
TRL's GPU-only attention kernel).
"""

from __future__ import annotations

import itertools
import logging
import math
import queue
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from multiprocessing.queues import Queue as MPQueue
from pathlib import Path
from typing import Any

from trajforge.errors import TrajforgeError, UsageError
from trajforge.train import ranks
from trajforge.train.capture import Row
from trajforge.train.config import TrainConfig
from trajforge.train.grpo_rollouts import RolloutRunner
from trajforge.train.rollout import Rollout
from trajforge.train.trainer_args import drop_log_printer, shared_args

log = logging.getLogger(__name__)
UNSCORED_GROUPS = 3
"""Groups in a row without one scored rollout after which the worker gives up (the trainer
would otherwise wait for samples that never come)."""


class RolloutWorkerError(TrajforgeError):
    """The rollout worker thread died or stopped producing samples."""


def group_advantages(rewards: list[float | None]) -> list[float]:
    """TRL's group advantage: (reward − mean) / (std + 1e-8) over the scored rollouts; 0 for
    an unscored one (None)."""
    scored = [r for r in rewards if r is not None]
    if not scored:
        return [0.0] * len(rewards)
    mean = sum(scored) / len(scored)
    std = math.sqrt(sum((r - mean) ** 2 for r in scored) / len(scored))
    return [0.0 if r is None else (r - mean) / (std + 1e-8) for r in rewards]


class HarnessRolloutWorker:
    """AsyncGRPOTrainer's rollout worker (TRL's ``RolloutWorkerProtocol``) running harness
    rollouts in a thread of the main process."""

    def __init__(
        self, runner: RolloutRunner, task_ids: list[str], generations: int, drop_truncated: bool
    ) -> None:
        self.runner = runner
        self.task_ids = task_ids
        self.generations = generations
        self.drop_truncated = drop_truncated
        """Leave rows cut at the token limit out of training (``mask_truncated_completions``)."""
        self.lora_name = "trl-policy"
        """Adapter name prefix the trainer publishes under (``<name>-v<version>``; TRL's
        default here, ``<harness>-policy`` in a run)."""
        self.rollout_buffer: queue.Queue[Any] | MPQueue[Any] = queue.Queue(maxsize=4 * generations)
        """Scored samples for the trainer (TRL drains it)."""
        self.metrics_queue: queue.Queue[Any] | MPQueue[Any] = queue.Queue()
        """Metrics the worker measured (none: the rollout records carry them)."""
        self.model_version = 0
        """Policy version now served (set by the trainer after each sync)."""
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None
        self._beat = time.monotonic()
        self._unscored = 0

    def start(self) -> None:
        """Begin producing rollouts (TRL calls it once, after the first adapter sync)."""
        self._beat = time.monotonic()
        self._thread = threading.Thread(target=self._loop, name="rollout-worker", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop after the rollouts in flight (bounded by the rollout budget)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=self.runner.setup.budget.timeout_s + 60)

    def update_model_version(self, model_version: int) -> None:
        """The trainer published policy ``model_version``: later groups sample from it."""
        self.model_version = model_version

    def check_health(self, stale_after_s: float) -> None:
        """Raise when the worker died or produced nothing for ``stale_after_s`` seconds."""
        if self._error is not None:
            raise RolloutWorkerError(f"the rollout worker died: {self._error}") from self._error
        if time.monotonic() - self._beat > stale_after_s:
            raise RolloutWorkerError(
                f"no rollout group finished in {stale_after_s:.0f} s; raise rollout.timeout_s "
                "or check the policy server"
            )

    def _loop(self) -> None:
        try:
            for group_id, task_id in enumerate(itertools.cycle(self.task_ids)):
                if self._stop.is_set():
                    return
                for sample in self.group(task_id, group_id):
                    self._put(sample)
        except BaseException as exc:  # reported to the trainer by check_health
            log.exception("rollout worker failed")
            self._error = exc

    def group(self, task_id: str, group_id: int) -> list[Any]:
        """Run one group of rollouts of ``task_id`` and return its scored samples."""
        version = self.model_version
        self.runner.capture.model = f"{self.lora_name}-v{version}"
        with ThreadPoolExecutor(max_workers=self.runner.concurrency) as pool:
            results = list(pool.map(self.runner.one, [task_id] * self.generations))
        rewards = [rollout.reward if rollout else None for rollout, _ in results]
        self._unscored = 0 if any(r is not None for r in rewards) else self._unscored + 1
        samples = []
        for (rollout, row), advantage in zip(results, group_advantages(rewards), strict=True):
            self.runner.record(max(version - 1, 0), task_id, rollout, row)
            if rollout is None or rollout.reward is None or row is None:
                continue  # unscored: nothing to learn from
            if row.truncated and self.drop_truncated:
                continue  # its advantage counted in the group, its tokens not trained
            samples.append(to_sample(task_id, rollout, row, advantage, version, group_id))
        self._beat = time.monotonic()
        if self._unscored >= UNSCORED_GROUPS:
            reasons = "; ".join(self.runner.records[-1].get("reasons") or ["no reason recorded"])
            raise RolloutWorkerError(
                f"{UNSCORED_GROUPS} rollout groups in a row had no scored rollout (the last: "
                f"{reasons}); every rollout was an infrastructure error"
            )
        return samples

    def _put(self, sample: Any) -> None:
        while not self._stop.is_set():
            try:
                self.rollout_buffer.put(sample, timeout=1.0)
                return
            except queue.Full:
                self._beat = time.monotonic()  # waiting on the trainer is not a hang


def to_sample(
    task_id: str, rollout: Rollout, row: Row, advantage: float, version: int, group_id: int
) -> Any:
    """One TRL ``RolloutSample``: the whole row, loss only on the sampled tokens."""
    import numpy as np
    from trl.experimental.async_grpo.async_rollout_worker import RolloutSample

    prompt = [0] * len(row.prompt_ids)
    return RolloutSample(
        prompt=[{"role": "user", "content": task_id}],
        completion=[{"role": "assistant", "content": rollout.answer or ""}],
        input_ids=np.asarray(row.prompt_ids + row.completion_ids, dtype=np.int64),
        completion_mask=np.asarray(prompt + row.env_mask, dtype=np.int64),
        old_log_probs=np.asarray([0.0] * len(prompt) + row.logprobs, dtype=np.float32),
        advantage=float(advantage),
        model_version=version,
        group_id=group_id,
        metrics={"reward": float(rollout.reward or 0.0)},
    )


def async_args(config: TrainConfig, out: Path) -> Any:
    """TRL AsyncGRPOConfig from the run's settings."""
    from trl.experimental.async_grpo import AsyncGRPOConfig

    g, url = config.grpo, str(config.trainer.vllm_url)
    return AsyncGRPOConfig(
        **shared_args(config, out),
        max_completion_length=g.max_completion_length,
        vllm_server_base_url=url.rstrip("/").removesuffix("/v1"),
        token_budget=0,  # a fixed per_device_batch rows per micro-batch, as the grpo backend
        max_staleness=g.max_staleness,
        heartbeat_stale_after_s=max(300.0, 3 * config.rollout.timeout_s),
        dtype="bfloat16" if config.trainer.bf16 else "float32",
    )


def run_async(
    config: TrainConfig, runner: RolloutRunner, model_path: str, loaded: tuple[Any, Any],
    out: Path, resume: bool | None,
) -> Any:  # fmt: skip
    """Build AsyncGRPOTrainer over ``runner``'s tasks (``loaded``: tokenizer, LoRA config) and
    train; the trainer."""
    from datasets import Dataset
    from trl.experimental.async_grpo import AsyncGRPOTrainer

    from trajforge.train.tree_attention import use_on_cpu

    if use_on_cpu():
        log.info("no GPU: AsyncGRPOTrainer's tree attention runs in plain torch")
    task_ids = sorted(runner.tasks)
    g = config.grpo
    worker = HarnessRolloutWorker(runner, task_ids, g.num_generations, g.mask_truncated_completions)
    worker.lora_name = f"{config.harness}-policy"  # one name space per harness on a shared server
    url = str(config.trainer.vllm_url)
    if ranks.is_main():
        check_server(url, config)
        unload_stale(url, worker.lora_name)
    args = async_args(config, out)
    local = Path(model_path).is_dir()
    args.model_init_kwargs = {} if local else {"revision": config.model.revision}
    try:
        trainer = AsyncGRPOTrainer(
            model=model_path, args=args, train_dataset=Dataset.from_dict({"prompt": task_ids}),
            processing_class=loaded[0], peft_config=loaded[1], rollout_worker=worker,
        )  # fmt: skip
    except ValueError as exc:  # TRL's checks of the server's LoRA limits and of the model
        raise UsageError(f"trainer.backend = 'async_grpo': {exc}") from exc
    drop_log_printer(trainer, config)
    if not trainer._lora_sync:  # TRL chose merged weights over NCCL (see its warning)
        raise UsageError(f"trainer.vllm_url {url}: {NO_RUNTIME_LORA}; {_launch_hint(config)}")
    trainer._lora_name = worker.lora_name  # TRL publishes <name>-vN; the worker asks for it
    if resume:  # versions keep counting across a resume, as TRL does for its own worker
        trainer.model_version = max(int(p.name.split("-")[-1]) for p in out.glob("checkpoint-*"))
        worker.update_model_version(trainer.model_version)
    trainer.train(resume_from_checkpoint=resume)
    return trainer


NO_RUNTIME_LORA = "async_grpo publishes the adapter by runtime LoRA loading, which it lacks"


def _launch_hint(config: TrainConfig) -> str:
    return (
        f"start it with --enable-lora --max-lora-rank {config.lora.r} --max-loras "
        f"{config.grpo.max_staleness + 2} (vLLM also needs VLLM_SERVER_DEV_MODE=1 and "
        "VLLM_ALLOW_RUNTIME_LORA_UPDATING=True; or trajforge serve --enable-lora on CPU)"
    )


def check_server(url: str, config: TrainConfig) -> None:
    """Refuse a policy server AsyncGRPOTrainer could only reach by NCCL weight transfer: no
    runtime LoRA, or several data-parallel replicas (an adapter load reaches one of them)."""
    from trajforge.wire import get_json

    where = f"{url.rstrip('/').removesuffix('/v1')}/server_info?config_format=json"
    try:
        doc = get_json(where)
    except (OSError, ValueError) as exc:
        raise UsageError(
            f"trainer.vllm_url: GET {where} failed ({exc}); {_launch_hint(config)}"
        ) from exc
    info = (doc.get("vllm_config") if isinstance(doc, dict) else None) or {}
    if not info.get("lora_config"):
        raise UsageError(f"trainer.vllm_url {url}: {NO_RUNTIME_LORA}; {_launch_hint(config)}")
    replicas = (info.get("parallel_config") or {}).get("data_parallel_size", 1)
    if replicas != 1:
        raise UsageError(
            f"trainer.vllm_url {url}: the server runs {replicas} data-parallel replicas and an "
            "adapter load reaches only one; serve with --data-parallel-size 1"
        )


def unload_stale(url: str, prefix: str) -> list[str]:
    """Unload the ``<prefix>-vN`` adapters an earlier run of this harness left on the server
    (a rerun, or a resumed run, publishes those names again); the names unloaded."""
    from trajforge.train.vllm_sync import post
    from trajforge.wire import model_cards

    base = url.rstrip("/")
    try:
        cards = model_cards(base)
    except (OSError, ValueError) as exc:
        raise UsageError(f"trainer.vllm_url: GET {base}/models failed ({exc})") from exc
    stale = [str(c.get("id")) for c in cards if str(c.get("id", "")).startswith(f"{prefix}-v")]
    for name in stale:
        post(f"{base}/unload_lora_adapter", {"lora_name": name})
        log.info("unloaded %s, left on the server by an earlier run", name)
    return stale
