"""A scripted OpenAI-compatible chat-completions server for driving real harness CLIs.

The script is a list of turns. The n-th turn answers the request whose ``messages`` already hold
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
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

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


class ScriptedServer:
    """Serve ``script`` on 127.0.0.1:``port`` (0 picks a free port) in a background thread."""

    def __init__(self, script: list[Turn], port: int = 0, model: str = "scripted") -> None:
        self.script = script
        self.served = 0
        """Scripted turns served (tool-call and answer turns; retries count again)."""
        self.model = model
        self.requests: list[dict[str, Any]] = []
        self._httpd = ThreadingHTTPServer(("127.0.0.1", port), self._handler())
        self.port = self._httpd.server_address[1]
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> ScriptedServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

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

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    self._json(
                        {"object": "list", "data": [{"id": server.model, "object": "model"}]}
                    )
                else:
                    self._json({"error": "not found"}, 404)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._json({"error": {"message": f"unsupported {self.path}"}}, 404)
                    return
                message = server.respond(body)
                if body.get("stream"):
                    self._stream(message)
                else:
                    self._json(_completion(message, server.model))

            def _json(self, data: Any, status: int = 200) -> None:
                raw = json.dumps(data).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def _stream(self, message: dict[str, Any]) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()
                for chunk in _chunks(message, server.model):
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
                self.close_connection = True

        return Handler


_USAGE = {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20}


def _completion(message: dict[str, Any], model: str) -> dict[str, Any]:
    finish = "tool_calls" if message.get("tool_calls") else "stop"
    return {
        "id": f"chatcmpl-{time.time_ns()}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": _USAGE,
    }


def _chunks(message: dict[str, Any], model: str) -> list[dict[str, Any]]:
    base = {
        "id": f"chatcmpl-{time.time_ns()}",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
    }
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
    if message.get("content"):
        deltas.append({"content": message["content"]})
    for i, call in enumerate(message.get("tool_calls") or []):
        deltas.append(
            {
                "tool_calls": [
                    {
                        "index": i,
                        "id": call["id"],
                        "type": "function",
                        "function": {
                            "name": call["function"]["name"],
                            "arguments": call["function"]["arguments"],
                        },
                    }
                ]
            }
        )
    finish = "tool_calls" if message.get("tool_calls") else "stop"
    chunks = [
        {**base, "choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas
    ]
    chunks.append(
        {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}], "usage": _USAGE}
    )
    return chunks


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
