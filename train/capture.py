"""The capture proxy: between the guard proxy and the policy server, it records every turn.

For each chat request (keyed by rollout id = the bearer token the harness sends), the proxy

- strips sampling parameters other than temperature and forces the run's temperature and
  per-turn token limit (the harness must not change how the policy samples);
- asks the policy server for the engine's own ``prompt_token_ids``, ``token_ids`` and logprobs
  (vLLM's ``return_token_ids`` / ``logprobs``) and records them — text is never re-tokenised;
- answers the harness with a plain OpenAI message (streamed when asked), without those extras;
- ends the run after ``max_turns`` model turns with a final text answer.

:func:`stitch` turns a rollout's turns into one training row: the first prompt, then each
turn's sampled tokens (trained on) with the tokens the harness added between turns (tool
results, re-rendered messages; masked out of the loss). A turn whose prompt does not extend the
row so far (the harness rewrote history) ends the row there, counted in ``broken``.
"""

from __future__ import annotations

import http.client
import json
import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from trajforge.wire import JsonHandler

log = logging.getLogger(__name__)
KEPT = ("model", "messages", "tools", "tool_choice", "parallel_tool_calls")
"""Request fields forwarded to the policy (everything else is dropped)."""
BUDGET_ANSWER = "Turn budget exhausted; stopping."
UPSTREAM_TIMEOUT_S = 600.0


@dataclass(frozen=True)
class Turn:
    """One model turn as the engine saw it."""

    prompt_ids: list[int]
    """Engine token ids of the whole prompt of this turn."""
    completion_ids: list[int]
    """Sampled token ids."""
    logprobs: list[float]
    """Sampling logprob of each completion token."""
    finish_reason: str
    """stop, tool_calls or length."""


@dataclass
class Row:
    """One training row (one rollout) in TRL's rollout_func shape."""

    prompt_ids: list[int]
    completion_ids: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    env_mask: list[int] = field(default_factory=list)
    """1 = sampled by the policy (trained on), 0 = added by the harness / tools (masked)."""
    turns: int = 0
    """Turns stitched into the row."""
    broken: bool = False
    """A later turn did not extend the row (history rewritten) and was left out."""
    truncated: bool = False
    """The row was cut at the completion-length limit (it then ends without EOS)."""


def stitch(turns: list[Turn], limit: int | None = None) -> Row | None:
    """The rollout's row: first prompt + sampled tokens, tool-result tokens masked out; cut at
    ``limit`` completion tokens (a long tool output must not blow up the training batch)."""
    if not turns:
        return None
    row = Row(prompt_ids=list(turns[0].prompt_ids))
    for turn in turns:
        so_far = row.prompt_ids + row.completion_ids
        if turn.prompt_ids[: len(so_far)] != so_far:
            row.broken = True
            break
        added = turn.prompt_ids[len(so_far) :]
        row.completion_ids += added + turn.completion_ids
        row.logprobs += [0.0] * len(added) + turn.logprobs
        row.env_mask += [0] * len(added) + [1] * len(turn.completion_ids)
        row.turns += 1
    if limit is not None and len(row.completion_ids) > limit:
        row.completion_ids = row.completion_ids[:limit]
        row.logprobs = row.logprobs[:limit]
        row.env_mask = row.env_mask[:limit]
        row.truncated = True
    return row


class CaptureProxy:
    """Records turns per rollout; serve with :meth:`serve` in a background thread."""

    def __init__(
        self,
        upstream: str,
        temperature: float,
        max_tokens: int,
        max_turns: int,
        top_p: float | None = None,
        record: bool = True,
    ) -> None:
        self.upstream = urlsplit(upstream.rstrip("/"))
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.max_turns = max_turns
        self.top_p = top_p
        """Nucleus mass forced on every request (eval); None = not sent (training)."""
        self.record = record
        """Keep each turn's token ids (training); False only counts turns (eval)."""
        self.turns: dict[str, list[Turn]] = {}
        self.counts: dict[str, int] = {}
        self.cut: set[str] = set()
        """Rollouts that ran out of turns."""
        self.model: str | None = None
        """Model name asked of the upstream (a vLLM LoRA adapter name); None = the harness's."""
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None

    def point_to(self, upstream: str) -> None:
        """Forward to ``upstream`` (an OpenAI-compatible base URL) from now on."""
        self.upstream = urlsplit(upstream.rstrip("/"))

    def take(self, rollout_id: str) -> tuple[list[Turn], bool]:
        """(turns, cut by the turn budget) of a rollout, forgetting it."""
        with self._lock:
            self.counts.pop(rollout_id, None)
            cut = rollout_id in self.cut
            self.cut.discard(rollout_id)
            return self.turns.pop(rollout_id, []), cut

    def request_body(self, body: dict[str, Any]) -> dict[str, Any]:
        """What the policy server is asked: kept fields + the run's sampling + token capture."""
        out = {k: body[k] for k in KEPT if k in body}
        if self.model:
            out["model"] = self.model
        if self.top_p is not None:
            out["top_p"] = self.top_p
        out.update(
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            stream=False,
            logprobs=True,
            return_token_ids=True,
        )
        return out

    def handle(self, rollout_id: str, body: dict[str, Any]) -> dict[str, Any]:
        """Answer one harness request: a plain assistant message."""
        recorded = bool(body.get("tools"))
        with self._lock:
            if recorded and self.counts.get(rollout_id, 0) >= self.max_turns:
                self.cut.add(rollout_id)
                return {"role": "assistant", "content": BUDGET_ANSWER}
        data = self._post(self.request_body(body))  # a failed turn (retried) does not count
        choice = data["choices"][0]
        if recorded:
            with self._lock:
                self.counts[rollout_id] = self.counts.get(rollout_id, 0) + 1
        if recorded and self.record:
            turn = Turn(
                prompt_ids=list(data.get("prompt_token_ids") or []),
                completion_ids=list(choice.get("token_ids") or []),
                logprobs=[
                    float(c["logprob"]) for c in (choice.get("logprobs") or {}).get("content") or []
                ],
                finish_reason=str(choice.get("finish_reason")),
            )
            if not turn.prompt_ids or len(turn.logprobs) != len(turn.completion_ids):
                raise CaptureError("the policy server returned no token ids / logprobs")
            with self._lock:
                self.turns.setdefault(rollout_id, []).append(turn)
        message = dict(choice["message"])
        return {k: v for k, v in message.items() if k in ("role", "content", "tool_calls")}

    def _post(self, body: dict[str, Any]) -> dict[str, Any]:
        up = self.upstream
        conn = http.client.HTTPConnection(up.hostname or "", up.port, timeout=UPSTREAM_TIMEOUT_S)
        try:
            conn.request(
                "POST",
                up.path + "/chat/completions",
                body=json.dumps(body).encode(),
                headers={"Content-Type": "application/json"},
            )
            resp = conn.getresponse()
            raw = resp.read()
        finally:
            conn.close()
        if resp.status != 200:
            raise CaptureError(f"policy server answered {resp.status}: {raw[:300]!r}")
        result: dict[str, Any] = json.loads(raw)
        return result

    def serve(self) -> str:
        """Start serving on a free loopback port; returns the base URL."""
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def close(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()


@contextmanager
def forced(
    upstream: str,
    temperature: float,
    top_p: float,
    max_tokens: int,
    max_turns: int,
    model: str | None = None,
) -> Iterator[str]:
    """A capture proxy (counting turns, not recording) in front of ``upstream`` that forces this
    sampling and turn budget on every request and asks for ``model``; yields its URL."""
    proxy = CaptureProxy(upstream, temperature, max_tokens, max_turns, top_p=top_p, record=False)
    proxy.model = model
    try:
        yield proxy.serve()
    finally:
        proxy.close()


class CaptureError(RuntimeError):
    """The policy server did not give what a training row needs."""


def _handler(proxy: CaptureProxy) -> type[BaseHTTPRequestHandler]:
    class Handler(JsonHandler):
        def do_GET(self) -> None:
            self.send_json({"object": "list", "data": [{"id": "policy", "object": "model"}]})

        def do_POST(self) -> None:
            body = self.read_json()
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self.send_json({"error": {"message": f"unsupported {self.path}"}}, 404)
                return
            rollout = self.headers.get("Authorization", "").removeprefix("Bearer ").strip()
            try:
                message = proxy.handle(rollout or "anonymous", body)
            except (CaptureError, OSError, KeyError, ValueError) as exc:
                log.warning("capture: %s", exc)
                self.send_json({"error": {"message": f"policy server: {exc}"}}, 502)
                return
            self.send_message(message, str(body.get("model", "policy")), bool(body.get("stream")))

    return Handler
