"""``trajforge train`` settings: defaults → TOML file → ``--set key.sub=value``, checked when built.

Every table is a frozen pydantic model with ``extra="forbid"``: a typo is an error naming the
setting, never silently ignored. See ``examples/train-*.toml``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from trajforge.config import load_layered

TARGETS: dict[str, tuple[str, ...]] = {
    "lfm2": ("q_proj", "k_proj", "v_proj", "out_proj", "in_proj", "w1", "w2", "w3"),
    "lfm2_moe": ("q_proj", "k_proj", "v_proj", "out_proj", "in_proj", "w1", "w2", "w3"),
    "lfm3": ("q_proj", "k_proj", "v_proj", "o_proj", "out_proj", "in_proj", "w1", "w2", "w3"),
    "qwen2": ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"),
    "qwen3": ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"),
    "llama": ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"),
}
"""LoRA target modules per architecture (``model_type``); never ``conv`` or ``lm_head``."""
FORBIDDEN_TARGETS = ("conv", "lm_head")


class _Table(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ModelConfig(_Table):
    """The base model."""

    base: str
    """Hub id, local folder, or ``tiny:qwen2`` / ``tiny:lfm2`` (built locally, no download)."""
    revision: str | None = None
    """Hub revision (commit or tag); required for hub ids, computed for local models."""


class DatasetConfig(_Table):
    """The dataset revision to train on."""

    path: str
    """Dataset folder, local git hub folder, or ``hf://datasets/ORG/NAME``."""
    revision: str | None = None
    """Revision (tag / branch) — required for a git hub or the Hub."""
    split: str = "train"
    """Split to train on."""
    configs: tuple[str, ...] = ()
    """Dataset configs to use (empty = all, e.g. ``coding``, ``data_analysis``)."""
    families: tuple[str, ...] = ()
    """Task families to keep (empty = all)."""
    limit: int = Field(default=0, ge=0)
    """Use at most this many tasks (0 = all), in task-id order."""


class TrainerConfig(_Table):
    """Which trainer runs and where the policy is served."""

    backend: Literal["grpo", "async_grpo"] = "grpo"
    """grpo: TRL GRPOTrainer + rollout_func (CPU or GPU); async_grpo: TRL AsyncGRPOTrainer,
    generation overlapping training (needs ``vllm_url``; attention-only models)."""
    vllm_url: str | None = None
    """Base URL (``http://HOST:PORT/v1``) of an external policy server with runtime LoRA loading
    — vLLM ``--enable-lora`` on GPUs of its own, or ``trajforge serve --enable-lora`` — that
    gets the adapter after every step; None = the in-process policy server."""
    max_steps: int = Field(default=2, ge=1)
    """Optimizer steps."""
    save_steps: int = Field(default=50, ge=1)
    """Checkpoint every N steps (for resume)."""
    seed: int = 0
    """Trainer and sampling seed."""
    bf16: bool = False
    """Train in bfloat16 (GPU)."""
    progress: bool = True
    """TRL's progress bar and per-step log lines on the terminal (``trajforge demo`` turns them
    off; the per-step log is in ``metrics.json`` either way)."""


class LoraSettings(_Table):
    """The LoRA adapter."""

    r: int = Field(default=32, ge=1)
    """Rank."""
    alpha: int = Field(default=64, ge=1)
    """Scaling numerator (lora_alpha)."""
    dropout: float = Field(default=0.05, ge=0, lt=1)
    """Dropout on the adapter input."""
    target_modules: tuple[str, ...] = ()
    """Modules to adapt (empty = the architecture's default from TARGETS)."""

    @model_validator(mode="after")
    def _no_conv_or_head(self) -> LoraSettings:
        bad = [m for m in self.target_modules if m in FORBIDDEN_TARGETS]
        if bad:
            raise ValueError(f"target_modules must not include {bad}: adapt projections only")
        return self


class GrpoSettings(_Table):
    """GRPO hyper-parameters (TRL GRPOConfig)."""

    num_generations: int = Field(default=2, ge=2)
    """Rollouts per prompt (the group)."""
    per_device_batch: int = Field(default=2, ge=1)
    """Rollouts per device per step (a multiple of num_generations)."""
    gradient_accumulation: int = Field(default=1, ge=1)
    """Gradient accumulation steps."""
    max_completion_length: int = Field(default=64, ge=1)
    """New tokens per model turn."""
    max_turns: int = Field(default=8, ge=1)
    """Model turns per rollout (the capture proxy ends the run after that)."""
    max_row_tokens: int = Field(default=4096, ge=1)
    """Completion tokens per training row, tool results included (TRL's max_completion_length);
    a longer row is cut there and, with mask_truncated_completions, left out of the loss."""
    learning_rate: float = Field(default=1e-5, gt=0)
    """Learning rate."""
    loss_type: Literal["grpo", "dapo", "dr_grpo", "bnpo"] = "dapo"
    """TRL loss type."""
    beta: float = Field(default=0.0, ge=0)
    """KL coefficient (0 = no reference model)."""
    epsilon: float = Field(default=0.2, gt=0)
    """Lower clipping bound."""
    epsilon_high: float | None = 0.28
    """Upper clipping bound (None = epsilon)."""
    mask_truncated_completions: bool = True
    """Exclude completions cut by the length limit from the loss."""
    temperature: float = Field(default=1.0, gt=0)
    """Sampling temperature (forced on every policy request by the capture proxy)."""
    max_staleness: int = Field(default=4, ge=0)
    """async_grpo: drop samples more than this many policy versions behind the trainer."""

    @model_validator(mode="after")
    def _batch_fits_groups(self) -> GrpoSettings:
        if self.per_device_batch % self.num_generations:
            raise ValueError("per_device_batch must be a multiple of num_generations")
        return self


class RolloutSettings(_Table):
    """Budgets of one rollout."""

    max_steps: int = Field(default=20, ge=1)
    """Step budget passed to the runner."""
    timeout_s: float = Field(default=120.0, gt=0)
    """Wall-clock budget of the harness process."""
    concurrency: int = Field(default=2, ge=1)
    """Rollouts run at once."""
    pids: int = Field(default=1024, ge=16)
    """Processes a sandboxed harness may run at once."""
    disk_mb: int = Field(default=2048, ge=64)
    """Writable space of a sandboxed harness (workspace, home, tmp)."""
    sandbox: Literal["local", "docker"] = "local"
    """Sandbox backend of the verifier."""
    harness_sandbox: Literal["auto", "on", "off"] = "auto"
    """Harness process in the local sandbox (model endpoint its only way out): auto = when
    usable (root), else on the host with a warning; on = refuse to run without it; off = host."""


class GuardSettings(_Table):
    """The guard between the model and the tools."""

    bundle: Path | None = None
    """Detector bundle (TOML); None = the shipped bundle."""


class TrainConfig(_Table):
    """A ``trajforge train`` run."""

    harness: Literal["pi", "opencode", "hermes"]
    """Harness in the loop."""
    output_dir: Path = Path("runs/train")
    """Run folder; the adapter goes to ``adapters/<harness>/<base-slug>-r<r>/`` inside."""
    model: ModelConfig
    """Base model."""
    dataset: DatasetConfig
    """Dataset revision and split."""
    trainer: TrainerConfig = Field(default_factory=TrainerConfig)
    """Trainer backend."""
    lora: LoraSettings = Field(default_factory=LoraSettings)
    """LoRA adapter."""
    grpo: GrpoSettings = Field(default_factory=GrpoSettings)
    """GRPO settings."""
    rollout: RolloutSettings = Field(default_factory=RolloutSettings)
    """Rollout budgets."""
    guard: GuardSettings = Field(default_factory=GuardSettings)
    """Guard bundle."""

    @model_validator(mode="after")
    def _async_needs_a_server(self) -> TrainConfig:
        if self.trainer.backend != "async_grpo":
            return self
        if not self.trainer.vllm_url:
            raise ValueError(
                "trainer.backend = 'async_grpo' samples from an external server: set "
                "trainer.vllm_url (vLLM --enable-lora, or trajforge serve --enable-lora on CPU)"
            )
        if self.grpo.beta:
            raise ValueError(
                "grpo.beta: AsyncGRPOTrainer has no reference model (no KL term); set it to 0 "
                "or use backend = 'grpo'"
            )
        return self


def load_train_config(
    path: Path | None, overrides: list[str], output_dir: Path | None = None
) -> TrainConfig:
    """Defaults → ``path`` → overrides (→ ``--output-dir``), validated."""
    config = load_layered(TrainConfig, path, overrides)
    return config.model_copy(update={"output_dir": output_dir}) if output_dir else config


def targets_for(model_type: str, settings: LoraSettings) -> list[str]:
    """LoRA target modules: the configured ones, else the architecture's default."""
    if settings.target_modules:
        return list(settings.target_modules)
    if model_type not in TARGETS:
        from trajforge.errors import UsageError

        raise UsageError(
            f"lora.target_modules: no default for architecture {model_type!r} "
            f"(known: {', '.join(sorted(TARGETS))}); list the projection modules to adapt"
        )
    return list(TARGETS[model_type])
