"""What both GRPO backends (TRL's ``GRPOTrainer`` and ``AsyncGRPOTrainer``) take the same way."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from trajforge.train.config import TrainConfig


def shared_args(config: TrainConfig, out: Path) -> dict[str, Any]:
    """The TRL arguments both backends take the same way."""
    import torch

    g = config.grpo
    return {
        "output_dir": str(out),
        "max_steps": config.trainer.max_steps,
        "per_device_train_batch_size": g.per_device_batch,
        "num_generations": g.num_generations,
        "gradient_accumulation_steps": g.gradient_accumulation,
        "learning_rate": g.learning_rate,
        "epsilon": g.epsilon,
        "epsilon_high": g.epsilon_high,
        "temperature": g.temperature,
        "logging_steps": 1,
        "save_steps": config.trainer.save_steps,
        "seed": config.trainer.seed,
        "report_to": "none",
        "use_cpu": not torch.cuda.is_available(),
        "bf16": config.trainer.bf16,
        "disable_tqdm": not config.trainer.progress,
    }


def drop_log_printer(trainer: Any, config: TrainConfig) -> None:
    """``trainer.progress = false``: no per-step log dicts printed either (with the bar off,
    transformers prints each one); they stay in the trainer's log history."""
    from transformers.trainer_callback import PrinterCallback

    if not config.trainer.progress:
        trainer.remove_callback(PrinterCallback)
