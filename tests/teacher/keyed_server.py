"""A local OpenAI-compatible endpoint that answers each request by the hash of its messages.

Used to record a teacher's answers for a whole corpus (``python -m tests.teacher.keyed_server
ROOT PORT``): a request whose key (:func:`key_of`) has ``ROOT/answers/KEY.json`` gets that
chat completion; any other is saved as ``ROOT/prompts/KEY.json`` and answered 404, so
``trajforge validate OUT --teacher openai:MODEL`` ends that task ``teacher_failed`` naming the
key. Answer the saved prompt, put it under ``answers/``, run validate again: rounds already
answered replay, the next round's prompt is saved. Unlike :mod:`.server` (answers in order),
tasks may run in any order and runs may repeat.
"""

from __future__ import annotations

import hashlib
import json
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

from tests.teacher.server import send_json, serve_handler


def key_of(body: dict[str, Any]) -> str:
    """The request's key: sha256 of its messages (role and content, in order), 16 hex digits."""
    text = json.dumps(body.get("messages"), sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _handler(root: Path) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            key = key_of(body)
            answer = root / "answers" / f"{key}.json"
            if answer.is_file():
                data, code = answer.read_bytes(), 200
                with (root / "served.txt").open("a") as served:  # which answers a run used
                    served.write(key + "\n")
            else:
                (root / "prompts").mkdir(parents=True, exist_ok=True)
                (root / "prompts" / f"{key}.json").write_text(json.dumps(body, indent=1))
                missing = {"error": {"message": f"no answer for {key}"}}
                data, code = json.dumps(missing).encode(), 404
            send_json(self, code, data)

        def log_message(self, format: str, *args: Any) -> None:
            return

    return Handler


@contextmanager
def serve_keyed(root: Path, port: int = 0) -> Iterator[str]:
    """Serve ``root`` on localhost; yields the base URL (``http://127.0.0.1:PORT/v1``)."""
    with serve_handler(_handler(root), port) as url:
        yield url


if __name__ == "__main__":
    with serve_keyed(Path(sys.argv[1]), int(sys.argv[2])) as url:
        print(url, flush=True)
        threading.Event().wait()
