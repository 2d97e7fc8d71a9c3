"""Keep an external policy server's LoRA adapter in step with training (runtime LoRA loading).

The server is vLLM on GPUs of its own (``--enable-lora --max-lora-rank 32`` and
``VLLM_ALLOW_RUNTIME_LORA_UPDATING=True``) or, on CPU, ``trajforge serve --enable-lora``: both
speak the same API. Before training and after every optimizer step the adapter is saved to
``OUT/live/step-N`` (every process takes part, so a sharded ZeRO-3 adapter is gathered) and the
main process loads it as ``policy-step-N`` (``POST /v1/load_lora_adapter``) and unloads the
previous one; after a barrier every process's capture proxy asks for that model name. Rollouts
of step N are therefore sampled by the step-N policy. The server reads the adapter from the
path it is given: on several machines ``OUT`` must be on a shared file system.
"""

from __future__ import annotations

import json
import logging
import shutil
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from transformers import TrainerCallback

from trajforge.errors import TrajforgeError
from trajforge.train import ranks
from trajforge.train.capture import CaptureProxy

log = logging.getLogger(__name__)


class VllmSyncError(TrajforgeError):
    """The vLLM server refused or could not be reached for an adapter update."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status
        """The HTTP status the server answered (None: not reached)."""


def post(url: str, payload: dict[str, Any]) -> None:
    """POST ``payload`` to ``url`` (VllmSyncError with the status and body when refused)."""
    request = urllib.request.Request(
        url, data=json.dumps(payload).encode(), headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=300) as resp:
            resp.read()
    except urllib.error.HTTPError as exc:
        detail = exc.read().decode(errors="replace")[:300]
        raise VllmSyncError(f"{url}: HTTP {exc.code}: {detail}", exc.code) from exc
    except (urllib.error.URLError, OSError) as exc:
        raise VllmSyncError(
            f"{url}: {exc}; start vLLM with --enable-lora and "
            "VLLM_ALLOW_RUNTIME_LORA_UPDATING=True (or trajforge serve --enable-lora on CPU)"
        ) from exc


class VllmLoraSync(TrainerCallback):
    """Push the live adapter to the policy server before training and after each step."""

    def __init__(self, vllm_url: str, live_dir: Path, capture: CaptureProxy, trainer: Any) -> None:
        self.base = vllm_url.rstrip("/")
        self.live_dir = live_dir.resolve()
        self.capture = capture
        self.trainer = trainer
        """The trainer: its ``save_model`` is collective and gathers a sharded adapter."""
        self.loaded: int | None = None
        """Step of the adapter the server serves now (None: none pushed yet)."""

    def push(self, step: int) -> None:
        """Save the adapter of ``step`` and make it the model every capture proxy asks for."""
        path = self.live_dir / f"step-{step}"
        self.trainer.save_model(str(path))  # every process calls it; the main one writes
        if ranks.is_main():
            self._swap(step, path)
        ranks.wait_for_everyone()
        self.capture.model = adapter_name(step)
        self.loaded = step
        log.info("the policy server now serves %s", adapter_name(step))

    def _swap(self, step: int, path: Path) -> None:
        load = {"lora_name": adapter_name(step), "lora_path": str(path)}
        try:
            post(f"{self.base}/load_lora_adapter", load)
        except VllmSyncError as exc:
            if exc.status != 400 or "already" not in str(exc):
                raise
            # a resumed run meets the name it loaded before: replace that adapter
            post(f"{self.base}/unload_lora_adapter", {"lora_name": load["lora_name"]})
            post(f"{self.base}/load_lora_adapter", load)
        if self.loaded is not None and self.loaded != step:
            post(f"{self.base}/unload_lora_adapter", {"lora_name": adapter_name(self.loaded)})
            shutil.rmtree(self.live_dir / f"step-{self.loaded}", ignore_errors=True)

    def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self.push(state.global_step)

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self.push(state.global_step)


def adapter_name(step: int) -> str:
    """The model name the adapter of ``step`` is served under."""
    return f"policy-step-{step}"
