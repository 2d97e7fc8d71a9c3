"""``trajforge train``: GRPO + LoRA with the real harness in the loop and the verifier as reward.

1. Open the dataset revision and rebuild the split's accepted tasks as task folders.
2. Load the base model and tokenizer; LoRA (rank ``lora.r``) on the architecture's projections.
3. TRL ``GRPOTrainer`` with ``rollout_func`` (:mod:`trajforge.train.grpo_rollouts`) and the
   verifier reward. On CPU the policy is served in-process by :mod:`~trajforge.train.policy_server`
   from the trainer's live model; with ``trainer.vllm_url`` an external server (vLLM on GPUs of
   its own, or ``trajforge serve --enable-lora``) serves it, its adapter pushed every step.
   ``backend = "async_grpo"``: TRL's AsyncGRPOTrainer, rollouts produced alongside training
   (:mod:`~trajforge.train.async_backend`).
   Under ``accelerate launch`` / ``torchrun`` every process runs its own rollouts and the main
   process writes the outputs (:mod:`~trajforge.train.ranks`).
4. Save ``OUT/adapters/<harness>/<base-slug>-r<r>/``: adapter, tokenizer + chat template,
   checkpoints (resume: run again with the same output dir), ``deployment_unit.json``,
   ``metrics.json`` and ``rollouts.jsonl``.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trajforge.errors import UsageError
from trajforge.records import Budget, DeploymentUnit, Provenance, Status, dump_record
from trajforge.registry import SANDBOXES, create
from trajforge.taskdir import load_task
from trajforge.train import ranks
from trajforge.train.config import TrainConfig, targets_for
from trajforge.train.quiet import quiet_libraries
from trajforge.train.rollout_spec import RolloutSetup, setup_for
from trajforge.train.trainer_args import drop_log_printer, shared_args

log = logging.getLogger(__name__)
NON_ATTENTION_OK = {"full_attention", "sliding_attention"}


def slug(base: str) -> str:
    """A folder-safe name for a base model id."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", base.replace("/", "--")).strip("-")


def adapter_dir(config: TrainConfig) -> Path:
    """``OUT/adapters/<harness>/<base-slug>-r<r>`` (a local folder's slug: its name)."""
    base = config.model.base
    named = Path(base).name if Path(base).is_dir() else base  # a local folder: its own name
    name = f"{slug(named)}-r{config.lora.r}"
    return config.output_dir / "adapters" / config.harness / name


def resolve_model(config: TrainConfig) -> tuple[str, str]:
    """(loadable path or hub id, revision) of the base model."""
    from trajforge.train.tiny import is_tiny, resolve, weights_revision

    base = config.model.base
    if is_tiny(base):
        folder = resolve(base)
        return str(folder), weights_revision(folder)
    if Path(base).is_dir():
        return base, config.model.revision or weights_revision(Path(base))
    if not config.model.revision:
        raise UsageError(f"model.revision: required for hub model {base!r} (a commit or tag)")
    return base, config.model.revision


def check_backend(config: TrainConfig, model_config: Any) -> None:
    """Refuse a backend the model cannot run, saying why and what to use."""
    if config.trainer.backend != "async_grpo":
        return
    text = (
        model_config.get_text_config() if hasattr(model_config, "get_text_config") else model_config
    )
    layers = set(getattr(text, "layer_types", None) or []) - NON_ATTENTION_OK
    if layers:
        raise UsageError(
            f"trainer.backend = 'async_grpo': TRL 1.16's AsyncGRPOTrainer refuses hybrid models "
            f"({model_config.model_type} has {sorted(layers)} layers; its tree packing only routes "
            "attention layers); use backend = 'grpo'"
        )


def load_tasks(config: TrainConfig, workdir: Path) -> dict[str, Path]:
    """Accepted tasks of the configured split, as folders under ``workdir``."""
    from trajforge.splits.materialise import materialise, open_revision

    revision = open_revision(config.dataset.path, config.dataset.revision, workdir)
    folders = materialise(revision, config.dataset.split, workdir / "tasks",
                          list(config.dataset.configs) or None)  # fmt: skip
    tasks: dict[str, Path] = {}
    for folder in folders:
        task = load_task(folder)
        if task.validation.status != Status.ACCEPTED:
            continue
        if config.dataset.families and task.family not in config.dataset.families:
            continue
        tasks[task.id] = folder
    if config.dataset.limit:
        tasks = dict(sorted(tasks.items())[: config.dataset.limit])
    if not tasks:
        raise UsageError(
            f"dataset {config.dataset.path}@{revision.name} split {config.dataset.split!r}: "
            "no accepted tasks match dataset.configs / dataset.families"
        )
    return tasks


def grpo_args(config: TrainConfig, out: Path) -> Any:
    """TRL GRPOConfig from the run's settings."""
    from trl import GRPOConfig

    g = config.grpo
    return GRPOConfig(
        **shared_args(config, out),
        loss_type=g.loss_type,
        beta=g.beta,
        mask_truncated_completions=g.mask_truncated_completions,
        max_completion_length=g.max_row_tokens,
        use_vllm=False,
    )


@dataclass(frozen=True)
class Loaded:
    """The base model as loaded for training."""

    path: str
    """Loadable path or hub id."""
    model: Any
    """The model (None for async_grpo: its trainer loads the weights)."""
    tokenizer: Any
    """Its tokenizer (pad token set)."""
    lora: Any
    """The LoRA config."""


def build_model(config: TrainConfig, path: str, revision: str) -> Loaded:
    """The model (None for async_grpo), tokenizer and LoRA config of the base at ``path``."""
    from peft import LoraConfig
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    rev = None if Path(path).is_dir() else revision
    tokenizer = AutoTokenizer.from_pretrained(path, revision=rev)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    model_config = AutoConfig.from_pretrained(path, revision=rev)
    check_backend(config, model_config)
    model = None  # async_grpo: AsyncGRPOTrainer loads the weights itself
    if config.trainer.backend == "grpo":
        model = AutoModelForCausalLM.from_pretrained(path, revision=rev)
    lora = LoraConfig(
        r=config.lora.r,
        lora_alpha=config.lora.alpha,
        lora_dropout=config.lora.dropout,
        target_modules=targets_for(model_config.model_type, config.lora),
        task_type="CAUSAL_LM",
    )
    return Loaded(path, model, tokenizer, lora)


def rollout_setup(config: TrainConfig) -> RolloutSetup:
    """The training run's rollout setup: harness (placed, version asked once), the verifier
    sandbox, the per-rollout budget and the guard bundle."""
    r = config.rollout
    budget = Budget(max_steps=r.max_steps, timeout_s=r.timeout_s, pids=r.pids, disk_mb=r.disk_mb)
    sandbox = create(SANDBOXES, r.sandbox, "sandbox")
    return setup_for(config.harness, sandbox, budget, r.harness_sandbox, config.guard.bundle)


def train(config: TrainConfig) -> dict[str, Any] | None:
    """Run training; the summary (paths, metrics, deployment unit), None on non-main processes."""
    from trajforge.train.grpo_rollouts import summarise

    setup = rollout_setup(config)
    path, revision = resolve_model(config)
    out = adapter_dir(config)
    out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="trajforge-train-", dir=config.output_dir))
    try:
        with quiet_libraries(config.trainer.progress):
            tasks = load_tasks(config, work)
            loaded = build_model(config, path, revision)
            history = _run(config, tasks, loaded, out, setup)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if not ranks.is_main():
        return None
    records = ranks.merge_logs(out)
    unit = deployment_unit(config, out, revision, setup.harness_version)
    metrics = {"tasks": len(tasks), **summarise(records), "trainer_log": history}
    return _write_outputs(out, unit, metrics)


def _run(
    config: TrainConfig, tasks: dict[str, Path], loaded: Loaded, out: Path, setup: RolloutSetup
) -> list[dict[str, Any]]:
    """Train on ``tasks`` with the loaded model, its rollouts run with ``setup``; TRL's log."""
    from trajforge.train.capture import CaptureProxy
    from trajforge.train.grpo_rollouts import RolloutRunner

    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    resume = True if any(out.glob("checkpoint-*")) else None
    if not resume:  # a resumed run appends to the rollout records of the run it continues
        ranks.log_path(out).unlink(missing_ok=True)
        if ranks.is_main():
            (out / "rollouts.jsonl").unlink(missing_ok=True)
    g = config.grpo
    capture = CaptureProxy(
        "http://127.0.0.1:1/v1", g.temperature, g.max_completion_length, g.max_turns
    )
    runner = RolloutRunner(
        tasks=tasks, setup=setup, capture=capture, capture_url=capture.serve(),
        concurrency=config.rollout.concurrency, log_path=ranks.log_path(out),
        pad_id=int(loaded.tokenizer.eos_token_id), max_completion=g.max_row_tokens,
    )  # fmt: skip
    try:
        if config.trainer.backend == "async_grpo":
            from trajforge.train.async_backend import run_async

            capture.point_to(str(config.trainer.vllm_url))
            pair = (loaded.tokenizer, loaded.lora)
            trainer = run_async(config, runner, loaded.path, pair, out, resume)
        else:
            trainer = _run_grpo(config, runner, loaded, out, resume)
    finally:
        capture.close()
    trainer.save_model(str(out))  # every process (a sharded adapter is gathered); main writes
    if ranks.is_main():
        loaded.tokenizer.save_pretrained(str(out))
    ranks.wait_for_everyone()
    return list(trainer.state.log_history)


def _run_grpo(
    config: TrainConfig, runner: Any, loaded: Loaded, out: Path, resume: bool | None
) -> Any:
    """GRPOTrainer with ``rollout_func``; the policy served in-process or by ``vllm_url``."""
    from datasets import Dataset
    from trl import GRPOTrainer

    from trajforge.train.grpo_rollouts import verifier_reward
    from trajforge.train.policy_server import Policy, PolicyServer

    model, tokenizer, lora = loaded.model, loaded.tokenizer, loaded.lora
    dataset = Dataset.from_dict({"prompt": sorted(runner.tasks)})
    trainer = GRPOTrainer(
        model=model, reward_funcs=[verifier_reward], args=grpo_args(config, out),
        train_dataset=dataset, processing_class=tokenizer, peft_config=lora, rollout_func=runner,
    )  # fmt: skip
    drop_log_printer(trainer, config)
    if config.trainer.vllm_url:
        _push_to_server(trainer, config.trainer.vllm_url, out, runner.capture)
        trainer.train(resume_from_checkpoint=resume)
        return trainer
    policy = Policy(trainer.model, tokenizer, seed=ranks.sampling_seed(config.trainer.seed),
                    max_tokens=config.grpo.max_completion_length)  # fmt: skip
    with PolicyServer(policy, model_name=config.model.base) as server:
        runner.capture.point_to(server.base_url)
        trainer.train(resume_from_checkpoint=resume)
    return trainer


def _push_to_server(trainer: Any, url: str, out: Path, capture: Any) -> None:
    """Rollouts go to the external policy server at ``url``, its adapter pushed every step."""
    from trajforge.train.vllm_sync import VllmLoraSync

    trainer.add_callback(VllmLoraSync(url, out / "live", capture, trainer))
    capture.point_to(url)


def deployment_unit(
    config: TrainConfig, out: Path, revision: str, harness_version: str
) -> DeploymentUnit:
    """The trained adapter's deployment unit (base, adapter, harness, tools, guard)."""
    from trajforge.guard.engine import bundle_at
    from trajforge.train.tiny import weights_revision

    return DeploymentUnit(
        base_model=config.model.base,
        base_revision=revision,
        adapter=str(out),
        adapter_revision=weights_revision(out),
        harness=config.harness,
        harness_version=harness_version,
        tool_policy=f"{config.harness}-default-tools+guard",
        guard_bundle=bundle_at(config.guard.bundle).version,
        provenance=Provenance(config=config.model_dump(mode="json")),
    )


def _write_outputs(out: Path, unit: DeploymentUnit, metrics: dict[str, Any]) -> dict[str, Any]:
    (out / "deployment_unit.json").write_text(dump_record(unit))
    (out / "metrics.json").write_text(json.dumps(metrics, indent=2, sort_keys=True))
    return {
        "adapter": str(out),
        "deployment_unit": unit.model_dump(mode="json"),
        "metrics": metrics,
    }
