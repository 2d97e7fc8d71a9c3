"""Runtime LoRA adapters over one served base model, loaded and unloaded like vLLM's.

A served policy with an :class:`AdapterSet` (``Policy.enable_lora``) answers for its base model
and for each loaded adapter by name. The first adapter wraps the base in a PEFT ``PeftModel``;
more are added with ``load_adapter``; a request selects one with ``set_adapter`` or runs the base
under ``disable_adapter()``; unloading the last adapter unwraps the model (``unload()``), so it is
the plain base again. Every change to the model and every selection happens under the policy's
generation lock, so concurrent requests never see a half-switched model.

Errors mirror vLLM's OpenAI server (``vllm/entrypoints/openai/serving_models.py``): a name
loaded twice or a bad adapter is 400, an unknown name is 404, and the body is
``{"error": {"message", "type", "param", "code"}}``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trajforge.errors import TrajforgeError

if TYPE_CHECKING:
    from trajforge.train.policy_server import Policy

log = logging.getLogger(__name__)
DEFAULT_MAX_LORA_RANK = 32
LOAD_ERRORS = (ValueError, KeyError, RuntimeError, OSError, TypeError)
"""What PEFT raises for an adapter that does not fit the base (missing modules, shapes)."""


class AdapterError(TrajforgeError):
    """A load, unload or model selection the server refuses (an HTTP status and error type)."""

    def __init__(
        self,
        message: str,
        status: int = 400,
        kind: str = "BadRequestError",
        param: str | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        """The HTTP status to answer with (400 or 404)."""
        self.kind = kind
        """vLLM's error type: BadRequestError, InvalidUserInput or NotFoundError."""
        self.param = param
        """The request field at fault, when one is."""

    def body(self) -> dict[str, Any]:
        """The JSON error body vLLM answers with."""
        error = {"message": str(self), "type": self.kind, "param": self.param, "code": self.status}
        return {"error": error}


def model_not_found(name: object) -> AdapterError:
    """vLLM's 404 for a chat request naming a model it does not serve."""
    return AdapterError(f"The model `{name}` does not exist.", 404, "NotFoundError", "model")


@dataclass(frozen=True)
class ServedAdapter:
    """One loaded LoRA adapter."""

    name: str
    """The model name requests use to select it."""
    path: str
    """Absolute folder it was loaded from."""
    rank: int
    """Its largest LoRA rank."""


def adapter_rank(path: Path, max_rank: int, name: str = "") -> int:
    """The LoRA rank of the PEFT adapter in ``path``; AdapterError when there is none or it is
    larger than ``max_rank``."""
    label = f"lora {name} " if name else "lora "
    config_file = path / "adapter_config.json"
    if not config_file.is_file():
        raise AdapterError(
            f"Loading {label}failed: No adapter found for {path} (no adapter_config.json)"
        )
    try:
        config = json.loads(config_file.read_text())
    except (OSError, ValueError) as exc:
        raise AdapterError(f"Loading {label}failed: {config_file}: {exc}") from exc
    if not isinstance(config, dict) or config.get("peft_type") != "LORA":
        kind = config.get("peft_type") if isinstance(config, dict) else None
        raise AdapterError(f"Loading {label}failed: {path} is not a LoRA adapter ({kind})")
    ranks = [config.get("r"), *(config.get("rank_pattern") or {}).values()]
    rank = max(int(r) for r in ranks if isinstance(r, int | float))
    if rank > max_rank:
        raise AdapterError(f"LoRA rank {rank} is greater than max_lora_rank {max_rank} ({path}).")
    return rank


class AdapterSet:
    """The adapters a policy serves beside its base model (load, unload, select)."""

    def __init__(
        self, policy: Policy, max_rank: int = DEFAULT_MAX_LORA_RANK, max_loras: int = 8
    ) -> None:
        self.policy = policy
        self.max_rank = max_rank
        """Largest LoRA rank accepted (vLLM's ``--max-lora-rank``)."""
        self.max_loras = max_loras
        """Adapters loaded at once at most (vLLM's ``--max-loras``; a load past it is 400)."""
        self._loaded: dict[str, ServedAdapter] = {}

    def __contains__(self, name: object) -> bool:
        return name in self._loaded

    def cards(self, parent: str) -> list[dict[str, Any]]:
        """``/v1/models`` entries of the loaded adapters (vLLM: ``root`` path, ``parent`` base)."""
        return [
            {"id": a.name, "object": "model", "owned_by": "trajforge", "root": a.path,
             "parent": parent}
            for a in list(self._loaded.copy().values())
        ]  # fmt: skip

    def load(self, name: object, path: object, base_name: str = "") -> ServedAdapter:
        """Load the PEFT adapter at ``path`` as ``name`` (AdapterError: 400 when refused)."""
        if not isinstance(name, str) or not name or not isinstance(path, str) or not path:
            raise AdapterError(
                "Both 'lora_name' and 'lora_path' must be provided.", kind="InvalidUserInput"
            )
        folder = Path(path).expanduser().resolve()
        with self.policy.lock:
            if name in self._loaded:
                raise AdapterError(
                    f"The lora adapter '{name}' has already been loaded.", kind="InvalidUserInput"
                )
            if len(self._loaded) >= self.max_loras:
                raise AdapterError(
                    f"max_loras {self.max_loras} adapters are loaded already; unload one first.",
                    kind="InvalidUserInput",
                )
            if name == base_name:
                raise AdapterError(
                    f"The lora adapter name '{name}' is the base model's name.",
                    kind="InvalidUserInput",
                )
            rank = adapter_rank(folder, self.max_rank, name)
            try:
                self._attach(name, folder)
            except LOAD_ERRORS as exc:
                raise AdapterError(f"Loading lora {name} failed: {folder}: {exc}") from exc
            adapter = ServedAdapter(name=name, path=str(folder), rank=rank)
            self._loaded[name] = adapter
        log.info("loaded LoRA adapter %s (rank %d) from %s", name, rank, folder)
        return adapter

    def unload(self, name: object) -> None:
        """Unload adapter ``name`` (AdapterError: 404 when it is not loaded)."""
        if not isinstance(name, str) or not name:
            raise AdapterError(
                "'lora_name' needs to be provided to unload a LoRA adapter.",
                kind="InvalidUserInput",
            )
        with self.policy.lock:
            if name not in self._loaded:
                raise AdapterError(
                    f"The lora adapter '{name}' cannot be found.", 404, "NotFoundError"
                )
            del self._loaded[name]
            model = self.policy.model
            if self._loaded:
                model.delete_adapter(name)
            else:  # PEFT cannot run with no adapter left: back to the plain base model
                self.policy.model = model.unload()
        log.info("unloaded LoRA adapter %s", name)

    @contextmanager
    def selected(self, name: str | None) -> Iterator[None]:
        """Run the model as adapter ``name`` (None: the base, adapters off); hold the lock."""
        if name is not None and name not in self._loaded:
            raise model_not_found(name)  # unloaded while the request waited for the lock
        model = self.policy.model
        if name is not None:
            model.set_adapter(name)
            yield
        elif self._loaded:
            with model.disable_adapter():
                yield
        else:
            yield

    def _attach(self, name: str, folder: Path) -> None:
        from peft import PeftConfig, PeftModel

        model = self.policy.model
        if isinstance(model, PeftModel):
            try:
                model.load_adapter(str(folder), adapter_name=name)
            except LOAD_ERRORS:
                if name in model.peft_config:
                    model.delete_adapter(name)
                raise
            return
        config = PeftConfig.from_pretrained(str(folder))
        config.inference_mode = True
        wrapped = PeftModel(model, config, adapter_name=name)
        try:
            wrapped.load_adapter(str(folder), adapter_name=name)
        except LOAD_ERRORS:
            wrapped.unload()  # take the half-loaded layers out of the base again
            raise
        wrapped.eval()
        self.policy.model = wrapped
