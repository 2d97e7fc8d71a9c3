"""A scripted OpenAI-compatible chat-completions server for driving real harness CLIs.

The script is a list of turns (a turn may carry recorded ``engine`` fields — prompt_token_ids,
token_ids, logprobs — returned like vLLM's ``return_token_ids`` for non-streaming requests).
The n-th turn answers the request whose ``messages`` already hold
n assistant messages, so the server is stateless and tolerates harness retries. A turn is
``{"tool_calls": [{"name": ..., "arguments": {...}}, ...]}`` or ``{"content": "..."}``.
Requests without ``tools`` (title generation, summaries) get a short fixed text answer.
Streaming (SSE) and non-streaming responses are both served. Every request is logged in
``requests`` for assertions.

Used by ``trajforge replay`` (the scripted replay policy) and by the fixture generators.
Run standalone: ``python -m trajforge.train.scripted SCRIPT.json --port 8000``.
"""

from __future__ import annotations

import argparse
import json
import threading
from http.server import BaseHTTPRequestHandler
from typing import Any

from trajforge.wire import BackgroundServer, JsonHandler, completion

Turn = dict[str, Any]


def _count_assistant(messages: list[dict[str, Any]]) -> int:
    return sum(1 for m in messages if m.get("role") == "assistant")


def _message_for(turn: Turn, index: int) -> dict[str, Any]:
    if "tool_calls" in turn:
        calls = [
            {
                "id": f"call_{index}_{i}",
                "type": "function",
                "function": {"name": c["name"], "arguments": json.dumps(c["arguments"])},
            }
            for i, c in enumerate(turn["tool_calls"])
        ]
        return {"role": "assistant", "content": turn.get("content"), "tool_calls": calls}
    return {"role": "assistant", "content": turn.get("content", "")}


class ScriptedServer(BackgroundServer):
    """Serve ``script`` on 127.0.0.1:``port`` (0 picks a free port) in a background thread."""

    def __init__(self, script: list[Turn], port: int = 0, model: str = "scripted") -> None:
        self.script = script
        self.served = 0
        """Scripted turns served (tool-call and answer turns; retries count again)."""
        self.model = model
        self.requests: list[dict[str, Any]] = []
        super().__init__(self._handler(), port)

    def respond(self, body: dict[str, Any]) -> dict[str, Any]:
        self.requests.append(body)
        messages = body.get("messages", [])
        if not body.get("tools"):
            return {"role": "assistant", "content": "Scripted session"}
        index = _count_assistant(messages)
        if index >= len(self.script):
            return {"role": "assistant", "content": "Done."}
        self.served += 1
        return _message_for(self.script[index], index)

    def engine(self, body: dict[str, Any]) -> dict[str, Any] | None:
        """A turn's recorded engine fields (``prompt_token_ids``, ``token_ids``, ``logprobs``)."""
        index = _count_assistant(body.get("messages", []))
        if not body.get("tools") or index >= len(self.script):
            return None
        recorded: dict[str, Any] | None = self.script[index].get("engine")
        return recorded

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(JsonHandler):
            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    models = [{"id": server.model, "object": "model"}]
                    self.send_json({"object": "list", "data": models})
                else:
                    self.send_json({"error": "not found"}, 404)

            def do_POST(self) -> None:
                body = self.read_json()
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self.send_json({"error": {"message": f"unsupported {self.path}"}}, 404)
                    return
                message = server.respond(body)
                recorded = server.engine(body)
                if recorded is None or body.get("stream"):
                    self.send_message(message, server.model, bool(body.get("stream")))
                    return
                data = completion(message, server.model)
                data["prompt_token_ids"] = recorded["prompt_token_ids"]
                choice = data["choices"][0]
                choice["token_ids"] = recorded["token_ids"]
                pairs = zip(recorded["token_ids"], recorded["logprobs"], strict=True)
                logprobs = [{"token": str(t), "logprob": lp} for t, lp in pairs]
                choice["logprobs"] = {"content": logprobs}
                self.send_json(data)

        return Handler


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("script")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args()
    with open(args.script) as fh:
        script = json.load(fh)
    with ScriptedServer(script, port=args.port) as srv:
        print(f"serving {len(script)} turns on {srv.base_url}", flush=True)
        threading.Event().wait()


if __name__ == "__main__":
    main()
