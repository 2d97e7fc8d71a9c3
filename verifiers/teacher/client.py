"""The teacher's model client: the ``openai`` SDK against any OpenAI-compatible endpoint.

One call per prompt, with a timeout, a process-wide concurrency limit and an on-disk cache
keyed by the hash of (model, messages): asking the same thing twice makes no request. Token
counts come from the response's ``usage``; cost from the configured per-million-token prices.
Every failure is a :class:`TeacherError` whose text never holds the API key.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import openai

from trajforge.errors import TrajforgeError, UsageError
from trajforge.scrub import scrub_text

log = logging.getLogger(__name__)
CACHE_DIR = ".teacher-cache"


class TeacherError(TrajforgeError):
    """The teacher's API call failed (network, HTTP status, malformed response)."""


@dataclass(frozen=True)
class Answer:
    """One model answer."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    cached: bool


@dataclass(frozen=True)
class Prices:
    """USD per million prompt / completion tokens (0: cost not tracked)."""

    prompt: float = 0.0
    completion: float = 0.0

    def cost(self, answer: Answer) -> float:
        """Cost of one answer; a cached answer costs nothing."""
        if answer.cached:
            return 0.0
        return (
            answer.prompt_tokens * self.prompt + answer.completion_tokens * self.completion
        ) / 1e6


def parse_spec(spec: str) -> str:
    """The model name of ``openai:MODEL``; a UsageError for anything malformed."""
    prefix, _, model = spec.partition(":")
    if prefix != "openai" or not model.strip():
        raise UsageError(f"--teacher {spec!r}: expected mined or openai:MODEL, e.g. openai:gpt-4.1")
    return model.strip()


class TeacherClient:
    """Chat completions for one model, cached under ``cache_root/.teacher-cache``."""

    def __init__(
        self,
        model: str,
        env: dict[str, str],
        cache_root: Path,
        timeout_s: float,
        concurrency: int,
    ) -> None:
        base_url, api_key = env.get("OPENAI_BASE_URL", ""), env.get("OPENAI_API_KEY", "")
        missing = [
            n for n, v in (("OPENAI_BASE_URL", base_url), ("OPENAI_API_KEY", api_key)) if not v
        ]
        if missing:
            raise UsageError(
                f"--teacher openai:{model} needs {' and '.join(missing)} in the environment "
                "(the endpoint and key of an OpenAI-compatible API)"
            )
        self.model = model
        self._key = api_key
        self._client = openai.OpenAI(
            base_url=base_url, api_key=api_key, timeout=timeout_s, max_retries=1
        )
        self._gate = threading.Semaphore(concurrency)
        self.cache_dir = cache_root / CACHE_DIR

    def _cache_path(self, messages: list[dict[str, str]]) -> Path:
        blob = json.dumps({"model": self.model, "messages": messages}, sort_keys=True)
        return self.cache_dir / f"{hashlib.sha256(blob.encode()).hexdigest()}.json"

    def _clean(self, text: str) -> str:
        return scrub_text(text.replace(self._key, "[REDACTED]"))

    def ask(self, messages: list[dict[str, str]]) -> Answer:
        """The model's answer to ``messages`` (from the cache when asked before)."""
        path = self._cache_path(messages)
        if path.is_file():
            stored = json.loads(path.read_text())
            return Answer(
                stored["text"], stored["prompt_tokens"], stored["completion_tokens"], True
            )
        with self._gate:
            answer = self._call(messages)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{threading.get_ident()}.tmp")
        tmp.write_text(json.dumps({**answer.__dict__, "model": self.model}))
        tmp.replace(path)
        return answer

    def _call(self, messages: list[dict[str, str]]) -> Answer:
        try:
            response = self._client.chat.completions.create(
                model=self.model,
                messages=messages,  # type: ignore[arg-type]
                temperature=0,
            )
        except openai.APIStatusError as exc:
            raise TeacherError(self._clean(f"HTTP {exc.status_code}: {exc.message}")) from None
        except openai.APIError as exc:
            raise TeacherError(self._clean(f"{type(exc).__name__}: {exc.message}")) from None
        return self._answer(response)

    def _answer(self, response: Any) -> Answer:
        choices = getattr(response, "choices", None) or []
        text = choices[0].message.content if choices else None
        if not isinstance(text, str) or not text.strip():
            raise TeacherError("malformed response: no message content in choices[0]")
        usage = getattr(response, "usage", None)
        prompt = int(getattr(usage, "prompt_tokens", 0) or 0)
        completion = int(getattr(usage, "completion_tokens", 0) or 0)
        return Answer(text, prompt, completion, False)
