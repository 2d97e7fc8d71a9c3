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


def _post(url: str, payload: dict[str, Any]) -> None:
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

    def __init__(self, vllm_url: str, live_dir: Path, capture: CaptureProxy) -> None:
        self.base = vllm_url.rstrip("/")
        self.live_dir = live_dir.resolve()
        self.capture = capture
        self.loaded: str | None = None
        self.trainer: Any = None
        """The trainer (set after it is built): its ``save_model`` gathers a sharded adapter."""
        self.pushed: list[str] = []
        """Adapter names loaded so far, in order (main process)."""

    def push(self, model: Any, step: int) -> None:
        """Save the adapter of ``step`` and make it the model every capture proxy asks for."""
        name = f"policy-step-{step}"
        path = self.live_dir / f"step-{step}"
        if self.trainer is not None:
            self.trainer.save_model(str(path))  # collective: every process calls it
        elif ranks.is_main():
            model.save_pretrained(str(path))
        if ranks.is_main():
            self._swap(name, path)
        ranks.wait_for_everyone()
        self.capture.model = name
        self.loaded = name
        log.info("the policy server now serves %s", name)

    def _swap(self, name: str, path: Path) -> None:
        load = {"lora_name": name, "lora_path": str(path)}
        try:
            _post(f"{self.base}/load_lora_adapter", load)
        except VllmSyncError as exc:
            if exc.status != 400 or "already" not in str(exc):
                raise
            # a resumed run meets the name it loaded before: replace that adapter
            _post(f"{self.base}/unload_lora_adapter", {"lora_name": name})
            _post(f"{self.base}/load_lora_adapter", load)
        self.pushed.append(name)
        if self.loaded and self.loaded != name:
            _post(f"{self.base}/unload_lora_adapter", {"lora_name": self.loaded})
            shutil.rmtree(self.live_dir / self.loaded.replace("policy-", ""), ignore_errors=True)

    def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self.push(kwargs["model"], state.global_step)

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self.push(kwargs["model"], state.global_step)
