"""The CPU policy server: a transformers model (+ LoRA adapter) behind an OpenAI-compatible API.

``POST /v1/chat/completions`` renders the messages and tools with the model's chat template,
samples a reply and answers like vLLM with ``return_token_ids``: the message (tool calls parsed
from ``<tool_call>`` blocks), plus the engine's own ``prompt_token_ids``, the choice's
``token_ids`` and per-token ``logprobs`` (under the sampling temperature, as the GRPO loss
computes them). Streaming requests get the same message as SSE chunks. Generation is serialised
by a lock; during training the server serves the trainer's live model (switched to eval mode
for the call). On GPU the same API is served by vLLM (``--enable-lora``).
"""

from __future__ import annotations

import itertools
import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

from trajforge.train.chat import for_template, parse_reply
from trajforge.wire import BackgroundServer, JsonHandler, chunks, completion

log = logging.getLogger(__name__)
DEFAULT_MAX_TOKENS = 256


@dataclass(frozen=True)
class Generated:
    """One sampled turn with the engine's token ids and logprobs."""

    prompt_ids: list[int]
    """Token ids of the rendered prompt."""
    completion_ids: list[int]
    """Sampled token ids (ending with EOS unless the length limit cut it)."""
    logprobs: list[float]
    """Log probability of each sampled token under the sampling temperature."""
    text: str
    """Decoded completion without special tokens."""
    finished: bool
    """Whether the model stopped on its own (EOS) rather than at the length limit."""


class Policy:
    """A causal LM and its tokenizer that sample chat turns, one at a time."""

    def __init__(self, model: Any, tokenizer: Any, seed: int = 0, max_tokens: int = 256) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.max_tokens = max_tokens
        """Upper bound on new tokens per turn (requests may ask for fewer)."""
        self._seeds = itertools.count(seed)
        self._lock = threading.Lock()

    def render(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> str:
        """The prompt text the chat template makes of ``messages`` and ``tools``."""
        text: str = self.tokenizer.apply_chat_template(
            for_template(messages), tools=tools or None, add_generation_prompt=True, tokenize=False
        )
        return text

    def generate(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        temperature: float,
        max_tokens: int | None,
        top_p: float | None = None,
    ) -> Generated:
        """Sample one assistant turn (``top_p`` < 1 narrows sampling; logprobs follow it)."""
        import torch

        ids = self.tokenizer(self.render(messages, tools), add_special_tokens=False)["input_ids"]
        limit = min(max_tokens or self.max_tokens, self.max_tokens)
        with self._lock:
            torch.manual_seed(next(self._seeds))
            was_training = self.model.training
            self.model.eval()
            try:
                with torch.no_grad():
                    new, logprobs = self._sample(ids, temperature, limit, top_p)
            finally:
                self.model.train(was_training)
        eos = self.tokenizer.eos_token_id
        return Generated(
            prompt_ids=list(ids),
            completion_ids=new,
            logprobs=logprobs,
            text=self.tokenizer.decode(new, skip_special_tokens=True),
            finished=bool(new) and new[-1] == eos,
        )

    def _sample(
        self, ids: list[int], temperature: float, limit: int, top_p: float | None = None
    ) -> tuple[list[int], list[float]]:
        import torch

        device = next(self.model.parameters()).device
        input_ids = torch.tensor([ids], device=device)
        sample = temperature > 0
        out = self.model.generate(
            input_ids=input_ids,
            attention_mask=torch.ones_like(input_ids),
            max_new_tokens=limit,
            do_sample=sample,
            temperature=temperature if sample else None,
            top_k=None,
            top_p=top_p if sample and top_p is not None and top_p < 1 else None,
            output_scores=True,
            return_dict_in_generate=True,
            pad_token_id=self.tokenizer.pad_token_id,
            eos_token_id=self.tokenizer.eos_token_id,
        )
        new = out.sequences[0, len(ids) :].tolist()
        logprobs = [
            float(torch.log_softmax(score[0].float(), dim=-1)[token])
            for score, token in zip(out.scores, new, strict=False)
        ]
        return new, logprobs


def reply(policy: Policy, body: dict[str, Any], index: int) -> tuple[dict[str, Any], Generated]:
    """(assistant message, generation) for one chat-completions request body."""
    generated = policy.generate(
        body.get("messages", []),
        body.get("tools"),
        float(body.get("temperature", 1.0) if body.get("temperature") is not None else 1.0),
        body.get("max_tokens") or body.get("max_completion_tokens"),
        body.get("top_p"),
    )
    return parse_reply(generated.text, f"call_{index}"), generated


def engine_body(message: dict[str, Any], generated: Generated, model: str) -> dict[str, Any]:
    """A vLLM-style completion body: message + prompt_token_ids + token_ids + logprobs."""
    body = completion(message, model, _usage(generated))
    choice = body["choices"][0]
    if not generated.finished:
        choice["finish_reason"] = "length"
    choice["token_ids"] = generated.completion_ids
    choice["logprobs"] = {
        "content": [
            {"token": str(t), "logprob": lp}
            for t, lp in zip(generated.completion_ids, generated.logprobs, strict=True)
        ]
    }
    body["prompt_token_ids"] = generated.prompt_ids
    return body


def _usage(generated: Generated) -> dict[str, int]:
    prompt, done = len(generated.prompt_ids), len(generated.completion_ids)
    return {"prompt_tokens": prompt, "completion_tokens": done, "total_tokens": prompt + done}


class PolicyServer(BackgroundServer):
    """Serve ``policy`` on 127.0.0.1:``port`` (0 picks a free port) in a background thread."""

    def __init__(self, policy: Policy, model_name: str = "policy", port: int = 0) -> None:
        self.policy = policy
        self.model_name = model_name
        self.requests = 0
        super().__init__(self._handler(), port)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(JsonHandler):
            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    data = [{"id": server.model_name, "object": "model"}]
                    self.send_json({"object": "list", "data": data})
                else:
                    self.send_json({"error": {"message": "not found"}}, 404)

            def do_POST(self) -> None:
                body = self.read_json()
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self.send_json({"error": {"message": f"unsupported {self.path}"}}, 404)
                    return
                server.requests += 1
                message, generated = reply(server.policy, body, server.requests)
                if body.get("stream"):
                    self.send_stream(chunks(message, server.model_name, _usage(generated)))
                else:
                    self.send_json(engine_body(message, generated, server.model_name))

        return Handler


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
    from trajforge.train.capture import CaptureProxy

    policy = load_policy(base_model, revision, adapter, seed)
    with PolicyServer(policy, model_name=Path(base_model).name) as server:
        if sampling is None:
            yield server.base_url
            return
        policy.max_tokens = sampling.max_tokens
        capture = CaptureProxy(
            server.base_url, sampling.temperature, sampling.max_tokens, sampling.max_turns,
            top_p=sampling.top_p, record=False,
        )  # fmt: skip
        try:
            yield capture.serve()
        finally:
            capture.close()


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
