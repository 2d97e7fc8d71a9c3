"""Load a saved policy (base model + optional LoRA adapter) and serve it on a local port."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trajforge.train.policy_server import Policy, PolicyServer


def load_policy(
    base_model: str, revision: str | None = None, adapter: str | None = None, seed: int = 0
) -> Policy:
    """Load a base model (``tiny:ARCH``, a local folder or a hub id) and an optional adapter."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from trajforge.train.tiny import is_tiny, resolve

    path = str(resolve(base_model)) if is_tiny(base_model) else base_model
    rev = None if is_tiny(base_model) or Path(path).exists() else revision
    own = adapter is not None and (Path(adapter) / "tokenizer_config.json").is_file()
    source = adapter if own and adapter else path
    tokenizer = AutoTokenizer.from_pretrained(source, revision=None if own else rev)
    model: Any = AutoModelForCausalLM.from_pretrained(path, revision=rev)
    if adapter:
        from peft import PeftModel

        model = PeftModel.from_pretrained(model, adapter)
    return Policy(model, tokenizer, seed=seed)


@contextmanager
def serve_policy(
    base_model: str,
    adapter: str | None = None,
    seed: int = 0,
    revision: str | None = None,
    sampling: Sampling | None = None,
) -> Iterator[str]:
    """Serve a base model (+ adapter) on a free local port; yields its OpenAI base URL.

    With ``sampling``, a capture proxy in front forces its temperature, top_p and token limit on
    every request and ends a run after ``max_turns`` model turns (the harness cannot change how
    the policy samples).
    """
    from trajforge.train.capture import forced

    policy = load_policy(base_model, revision, adapter, seed)
    with PolicyServer(policy, model_name=Path(base_model).name) as server:
        if sampling is None:
            yield server.base_url
            return
        policy.max_tokens = sampling.max_tokens
        with forced(server.base_url, sampling.temperature, sampling.top_p, sampling.max_tokens,
                    sampling.max_turns) as url:  # fmt: skip
            yield url


@dataclass(frozen=True)
class Sampling:
    """How every request to a served policy samples."""

    temperature: float
    """Sampling temperature."""
    top_p: float
    """Nucleus mass (1 = off)."""
    max_tokens: int
    """New tokens per model turn."""
    max_turns: int
    """Model turns per run."""
