"""The CPU policy server: a transformers model (+ LoRA adapter) behind an OpenAI-compatible API.

``POST /v1/chat/completions`` renders the messages and tools with the model's chat template,
samples a reply and answers like vLLM with ``return_token_ids``: the message (tool calls parsed
from ``<tool_call>`` blocks), plus the engine's own ``prompt_token_ids``, the choice's
``token_ids`` and per-token ``logprobs`` (under the sampling temperature, as the GRPO loss
computes them). Streaming requests get the same message as SSE chunks. Generation is serialised
by a lock; during training the server serves the trainer's live model (switched to eval mode
for the call) as it is, whatever ``model`` a request names. On GPU the same API is served by
vLLM (``--enable-lora``).

With runtime LoRA (``Policy.enable_lora``, ``trajforge serve --enable-lora``) the server is
vLLM's multi-adapter server on CPU: ``POST /v1/load_lora_adapter`` and
``/v1/unload_lora_adapter``, ``/v1/models`` lists the base and each adapter, and a chat request's
``model`` selects the base or an adapter (an unknown name is 404). The control endpoints an RL
trainer uses with vLLM are there too: ``GET /health``, ``GET /server_info`` (the LoRA and
parallel settings TRL's AsyncGRPOTrainer checks), ``POST /pause`` (new generations wait) and
``POST /resume``.
"""

from __future__ import annotations

import itertools
import logging
import threading
from contextlib import nullcontext
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import TYPE_CHECKING, Any

from trajforge.train.chat import for_template, parse_reply
from trajforge.train.served_adapters import DEFAULT_MAX_LORA_RANK
from trajforge.wire import BackgroundServer, JsonHandler, chunks, completion

if TYPE_CHECKING:
    from trajforge.train.served_adapters import AdapterSet

log = logging.getLogger(__name__)


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
        self.lock = threading.Lock()
        """Held while the model samples or its adapters change."""
        self.adapters: AdapterSet | None = None
        """Runtime LoRA adapters (``enable_lora``); None: serve ``model`` as it is."""

    def enable_lora(self, max_rank: int = DEFAULT_MAX_LORA_RANK, max_loras: int = 8) -> AdapterSet:
        """Serve runtime-loaded LoRA adapters beside the base model (which must not be a PEFT
        model already); returns the (empty) adapter set."""
        from trajforge.errors import UsageError
        from trajforge.train.served_adapters import AdapterSet

        if hasattr(self.model, "peft_config"):
            raise UsageError("runtime LoRA needs a plain base model, not a PEFT model")
        if self.adapters is None:
            self.adapters = AdapterSet(self, max_rank, max_loras)
        return self.adapters

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
        adapter: str | None = None,
    ) -> Generated:
        """Sample one assistant turn (``top_p`` < 1 narrows sampling; logprobs follow it).

        With runtime LoRA, ``adapter`` names the adapter to sample with (None: the base model,
        adapters off); without it the model samples as it is and ``adapter`` is ignored.
        """
        import torch

        ids = self.tokenizer(self.render(messages, tools), add_special_tokens=False)["input_ids"]
        limit = min(max_tokens or self.max_tokens, self.max_tokens)
        adapters = self.adapters
        with self.lock, adapters.selected(adapter) if adapters is not None else nullcontext():
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


def reply(
    policy: Policy, body: dict[str, Any], index: int, adapter: str | None = None
) -> tuple[dict[str, Any], Generated]:
    """(assistant message, generation) for one chat-completions request body."""
    generated = policy.generate(
        body.get("messages", []),
        body.get("tools"),
        float(body.get("temperature", 1.0) if body.get("temperature") is not None else 1.0),
        body.get("max_tokens") or body.get("max_completion_tokens"),
        body.get("top_p"),
        adapter,
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
    """Serve ``policy`` on ``host``:``port`` (0 picks a free port) in a background thread.

    With runtime LoRA on the policy (``policy.adapters``) it also loads and unloads adapters and
    a request's ``model`` must name the base (``model_name``) or a loaded adapter; without it
    any name is answered by the one model, as it is.
    """

    def __init__(
        self, policy: Policy, model_name: str = "policy", port: int = 0, host: str = "127.0.0.1"
    ) -> None:
        self.policy = policy
        self.model_name = model_name
        self.requests = 0
        self.running = threading.Event()
        """Clear while paused (``POST /pause``): new generations wait for ``/resume``."""
        self.running.set()
        super().__init__(self._handler(), port, host)

    def models(self) -> list[dict[str, Any]]:
        """``/v1/models`` entries: the base model, then each loaded adapter."""
        base = {"id": self.model_name, "object": "model", "owned_by": "trajforge",
                "max_model_len": self.max_model_len()}  # fmt: skip
        adapters = self.policy.adapters
        return [base, *(adapters.cards(self.model_name) if adapters is not None else [])]

    def max_model_len(self) -> int | None:
        """Prompt + completion tokens the model takes (its position limit)."""
        config = getattr(self.policy.model, "config", None)
        return getattr(config, "max_position_embeddings", None)

    def server_info(self) -> dict[str, Any]:
        """``GET /server_info``: the parts of vLLM's resolved config RL trainers read."""
        adapters = self.policy.adapters
        lora = None if adapters is None else {
            "max_lora_rank": adapters.max_rank, "max_loras": adapters.max_loras,
        }  # fmt: skip
        config = {
            "lora_config": lora,
            "parallel_config": {"data_parallel_size": 1},
            "model_config": {"model": self.model_name, "max_model_len": self.max_model_len(),
                             "dtype": str(getattr(self.policy.model, "dtype", ""))},
        }  # fmt: skip
        return {"vllm_config": config}

    def chat(self, body: dict[str, Any]) -> tuple[dict[str, Any], Generated, str]:
        """(message, generation, answering model name) for a chat request; AdapterError when
        runtime LoRA is on and ``model`` names neither the base nor a loaded adapter."""
        from trajforge.train.served_adapters import model_not_found

        self.running.wait()  # paused: wait for /resume
        self.requests += 1
        adapters, name = self.policy.adapters, body.get("model")
        log.debug("chat request %d for model %s", self.requests, name)
        if adapters is None:
            return (*reply(self.policy, body, self.requests), self.model_name)
        if name in (None, self.model_name):
            return (*reply(self.policy, body, self.requests), self.model_name)
        if not isinstance(name, str) or name not in adapters:
            raise model_not_found(name)
        return (*reply(self.policy, body, self.requests, name), name)

    def lora(self, action: str, body: dict[str, Any]) -> str:
        """Load or unload an adapter (``action``: load / unload); vLLM's success text."""
        adapters = self.policy.adapters
        assert adapters is not None
        if action == "load":
            adapters.load(body.get("lora_name"), body.get("lora_path"), self.model_name)
            return f"Success: LoRA adapter '{body['lora_name']}' added successfully."
        adapters.unload(body.get("lora_name"))
        return f"Success: LoRA adapter '{body['lora_name']}' removed successfully."

    def route(self, path: str) -> str | None:
        """What a POST to ``path`` does: chat, load, unload, or None (404)."""
        path = path.split("?", 1)[0].rstrip("/")
        if path.endswith("/chat/completions"):
            return "chat"
        if path in ("/pause", "/resume"):
            return path[1:]
        if self.policy.adapters is None:
            return None
        return LORA_ROUTES.get(path.rsplit("/", 1)[-1])

    def answer(self, handler: Any, action: str, body: dict[str, Any]) -> None:
        """Answer a POST ``action`` through ``handler``: vLLM's error JSON when refused."""
        from trajforge.train.served_adapters import AdapterError

        if action in ("pause", "resume"):
            (self.running.clear if action == "pause" else self.running.set)()
            log.info("generation %sd", action)
            handler.send_json({})
            return
        try:
            if action != "chat":
                handler.send_text(self.lora(action, body))
                return
            message, generated, name = self.chat(body)
        except AdapterError as exc:
            handler.send_json(exc.body(), exc.status)
            return
        if body.get("stream"):
            handler.send_stream(chunks(message, name, _usage(generated)))
        else:
            handler.send_json(engine_body(message, generated, name))

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(JsonHandler):
            def do_GET(self) -> None:
                path = self.path.split("?", 1)[0].rstrip("/")
                if path.endswith("/models"):
                    self.send_json({"object": "list", "data": server.models()})
                elif path == "/health":
                    self.send_text("")
                elif path == "/server_info":
                    self.send_json(server.server_info())
                else:
                    self.send_json(_error(f"Not Found: {self.path}", 404), 404)

            def do_POST(self) -> None:
                body = self.read_body()  # always: an unread body would poison the connection
                action = server.route(self.path)
                if action is None:
                    self.send_json(_error(f"Not Found: {self.path}", 404), 404)
                elif isinstance(body, str):
                    self.send_json(_error(body, 400), 400)
                else:
                    server.answer(self, action, body)

            def read_body(self) -> dict[str, Any] | str:
                """The request's JSON object, or what is wrong with it."""
                try:
                    body = self.read_json()
                except ValueError as exc:
                    return f"invalid JSON body: {exc}"
                return body if isinstance(body, dict) else "the body is not a JSON object"

            def send_text(self, text: str) -> None:
                raw = text.encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; charset=utf-8")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

        return Handler


LORA_ROUTES = {"load_lora_adapter": "load", "unload_lora_adapter": "unload"}
"""Runtime LoRA endpoints (last path segment → action); served only with runtime LoRA on."""


def _error(message: str, status: int) -> dict[str, Any]:
    kind = "NotFoundError" if status == 404 else "BadRequestError"
    return {"error": {"message": message, "type": kind, "param": None, "code": status}}
