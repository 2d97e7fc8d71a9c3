"""A local OpenAI-compatible endpoint serving recorded chat completions (cassettes) in order."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

CASSETTES = Path(__file__).parent / "cassettes"


@dataclass
class Cassettes:
    """Responses to serve (a dict each, or an int HTTP status for an error) and requests seen."""

    answers: list[dict[str, Any] | int]
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)


def load(*names: str) -> list[dict[str, Any] | int]:
    return [json.loads((CASSETTES / f"{n}.json").read_text()) for n in names]


def send_json(handler: BaseHTTPRequestHandler, status: int, data: bytes) -> None:
    """Answer ``handler``'s request with JSON ``data`` and ``status``."""
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


def _handler(state: Cassettes) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            state.requests.append(body)
            state.headers.append(dict(self.headers))
            if self.path != "/v1/chat/completions" or not state.answers:
                self._send(404, {"error": {"message": f"no cassette for {self.path}"}})
                return
            answer = state.answers[0] if isinstance(state.answers[0], int) else state.answers.pop(0)
            if isinstance(answer, int):
                self._send(
                    answer, {"error": {"message": "upstream failure", "type": "server_error"}}
                )
            else:
                self._send(200, answer)

        def _send(self, status: int, doc: dict[str, Any]) -> None:
            send_json(self, status, json.dumps(doc).encode())

        def log_message(self, format: str, *args: Any) -> None:
            return

    return Handler


@contextmanager
def serve(state: Cassettes) -> Iterator[str]:
    """Serve ``state`` on 127.0.0.1:<free port>; yields the base URL (``.../v1``)."""
    with serve_handler(_handler(state)) as url:
        yield url


@contextmanager
def serve_handler(handler: type[BaseHTTPRequestHandler], port: int = 0) -> Iterator[str]:
    """Serve ``handler`` on 127.0.0.1:``port`` (0: a free one); yields the base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", port), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
