"""GPU: keep a vLLM server's LoRA adapter in step with training (runtime LoRA loading).

The vLLM server runs on its own GPUs with ``--enable-lora --max-lora-rank 32`` and
``VLLM_ALLOW_RUNTIME_LORA_UPDATING=True``. Before training and after every optimizer step the
adapter is saved to ``OUT/live/step-N`` and loaded into vLLM as ``policy-step-N``
(``POST /v1/load_lora_adapter``); the capture proxy then asks for that model name, and the
previous adapter is unloaded. Rollouts of step N are therefore sampled by the step-N policy.
"""

from __future__ import annotations

import json
import logging
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from transformers import TrainerCallback

from trajforge.errors import TrajforgeError
from trajforge.train.capture import CaptureProxy

log = logging.getLogger(__name__)


class VllmSyncError(TrajforgeError):
    """The vLLM server refused or could not be reached for an adapter update."""


def _post(url: str, payload: dict[str, Any]) -> None:
    request = urllib.request.Request(
        url, data=json.dumps(payload).encode(), headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=300) as resp:
            resp.read()
    except (urllib.error.URLError, OSError) as exc:
        raise VllmSyncError(
            f"{url}: {exc}; start vLLM with --enable-lora and VLLM_ALLOW_RUNTIME_LORA_UPDATING=True"
        ) from exc


class VllmLoraSync(TrainerCallback):
    """Push the live adapter to vLLM before training and after each step."""

    def __init__(self, vllm_url: str, live_dir: Path, capture: CaptureProxy) -> None:
        self.base = vllm_url.rstrip("/")
        self.live_dir = live_dir
        self.capture = capture
        self.loaded: str | None = None

    def push(self, model: Any, step: int) -> None:
        """Save the adapter of ``step`` and make it the model the capture proxy asks for."""
        name = f"policy-step-{step}"
        path = self.live_dir / f"step-{step}"
        model.save_pretrained(str(path))
        _post(f"{self.base}/load_lora_adapter", {"lora_name": name, "lora_path": str(path)})
        self.capture.model = name
        if self.loaded:
            _post(f"{self.base}/unload_lora_adapter", {"lora_name": self.loaded})
        self.loaded = name
        log.info("vLLM now serves %s", name)

    def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self.push(kwargs["model"], state.global_step)

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self.push(kwargs["model"], state.global_step)
