"""OpenAI chat-completions wire format and the small HTTP servers that speak it.

Used by the guard proxy, the scripted server, the CPU policy server and the capture proxy: a
completion body from an assistant message, the same message as SSE chunks, a handler base that
reads JSON bodies and writes JSON or an event stream, and a loopback server in a thread; on the
client side, a JSON GET and a server's model list.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

USAGE = {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20}


def completion(
    message: dict[str, Any], model: str, usage: dict[str, int] | None = None
) -> dict[str, Any]:
    """A non-streaming chat.completion body for ``message``."""
    finish = "tool_calls" if message.get("tool_calls") else "stop"
    return {
        "id": f"chatcmpl-{time.time_ns()}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": usage or USAGE,
    }


def get_json(url: str, timeout: float = 60.0) -> Any:
    """GET ``url`` and parse its JSON body (``OSError`` — ``URLError`` included — or
    ``ValueError`` when that fails)."""
    with urllib.request.urlopen(url, timeout=timeout) as resp:
        return json.loads(resp.read())


def model_cards(base_url: str, timeout: float = 60.0) -> list[dict[str, Any]]:
    """``GET BASE/models``: the server's model cards (``ValueError`` when the answer is not an
    OpenAI model list; ``OSError`` when the server cannot be reached)."""
    doc = get_json(f"{base_url.rstrip('/')}/models", timeout)
    data = doc.get("data") if isinstance(doc, dict) else None
    if not isinstance(data, list):
        raise ValueError("the answer is not an OpenAI model list")
    return [card for card in data if isinstance(card, dict)]


def chunks(
    message: dict[str, Any], model: str, usage: dict[str, int] | None = None
) -> list[dict[str, Any]]:
    """``message`` as chat.completion.chunk events (role, content, each tool call, finish)."""
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
    events = [
        {**base, "choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas
    ]
    last = {"index": 0, "delta": {}, "finish_reason": finish}
    events.append({**base, "choices": [last], "usage": usage or USAGE})
    return events


class JsonHandler(BaseHTTPRequestHandler):
    """HTTP/1.1 handler base: quiet, JSON bodies in, JSON or SSE out."""

    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def read_json(self) -> Any:
        length = int(self.headers.get("Content-Length", 0))
        return json.loads(self.rfile.read(length) or b"{}")

    def send_json(self, data: Any, status: int = 200) -> None:
        raw = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def send_stream(self, events: list[dict[str, Any]]) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        for event in events:
            self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
        self.close_connection = True

    def send_message(self, message: dict[str, Any], model: str, stream: bool) -> None:
        """Answer a chat request with ``message``, streamed when the request asked for it."""
        if stream:
            self.send_stream(chunks(message, model))
        else:
            self.send_json(completion(message, model))


class BackgroundServer:
    """An HTTP server on ``host``:``port`` (0 picks a free port) in a daemon thread."""

    def __init__(
        self, handler: type[BaseHTTPRequestHandler], port: int = 0, host: str = "127.0.0.1"
    ) -> None:
        self.host = host
        self._httpd = ThreadingHTTPServer((host, port), handler)
        self.port: int = self._httpd.server_address[1]
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        """The OpenAI base URL (``http://HOST:PORT/v1``; 127.0.0.1 when bound to all addresses)."""
        host = "127.0.0.1" if self.host in ("", "0.0.0.0") else self.host
        return f"http://{host}:{self.port}/v1"

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
