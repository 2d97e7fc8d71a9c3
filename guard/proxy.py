"""``trajforge guard serve``: an OpenAI-compatible proxy that blocks tool calls before the harness.

Chat completions (streaming too) are forwarded to the upstream; every tool call in a response
is judged by the rollout's detector, blocked calls are replaced by a notice (see
:mod:`trajforge.guard.rewrite`) and recorded against the rollout id, taken from the
``X-Rollout-Id`` header or the API key. Tool outputs sent back by the harness are checked for
literal secrets, which are redacted before they reach the model. ``GET /guard/rollouts/ID``
reports a rollout (``reward_zero`` is true once anything was blocked); every decision is
appended to a JSONL log.
"""

from __future__ import annotations

import http.client
import json
import logging
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from trajforge.guard.engine import RuleDetector
from trajforge.guard.profile import Profile
from trajforge.guard.rewrite import StreamRewriter, rewrite_completion
from trajforge.guard.rules import Bundle
from trajforge.protocols import Detector, GuardDecision
from trajforge.scrub import Scrubber
from trajforge.wire import JsonHandler

log = logging.getLogger(__name__)
UPSTREAM_TIMEOUT_S = 600.0


class Rollout:
    """One rollout's detector and its record."""

    def __init__(self, rollout_id: str, detector: Detector) -> None:
        self.id = rollout_id
        self.detector = detector
        self.calls = 0
        self.events: list[dict[str, Any]] = []
        self.seen_outputs: set[str] = set()
        self.lock = threading.Lock()

    def status(self) -> dict[str, Any]:
        blocks = [e for e in self.events if e["decision"] == "block"]
        return {
            "rollout": self.id,
            "bundle": self.detector.bundle_version,
            "calls": self.calls,
            "blocked": bool(blocks),
            "reward_zero": bool(blocks),
            "blocks": blocks,
            "flags": [e for e in self.events if e["decision"] == "flag"],
        }


class GuardProxy:
    """Shared state of the proxy: upstream, bundle, default profile, rollouts, log."""

    def __init__(
        self,
        upstream: str,
        bundle: Bundle,
        profile: Profile | None = None,
        log_path: Path | None = None,
        upstream_key: str | None = None,
    ) -> None:
        parts = urlsplit(upstream.rstrip("/"))
        if parts.scheme not in ("http", "https") or not parts.hostname:
            from trajforge.errors import UsageError

            raise UsageError(
                f"--upstream {upstream!r}: expected an http(s) URL such as http://host:8000/v1"
            )
        self.upstream = parts
        self.bundle = bundle
        self.profile = profile
        self.log_path = log_path
        self.upstream_key = upstream_key
        self.rollouts: dict[str, Rollout] = {}
        self._lock = threading.Lock()
        self._scrub = Scrubber()

    def rollout(self, rollout_id: str, profile: Profile | None = None) -> Rollout:
        """The rollout with this id (created on first use; a new profile starts it afresh)."""
        with self._lock:
            current = self.rollouts.get(rollout_id)
            if current is None or profile is not None:
                detector = RuleDetector(profile or self.profile, self.bundle)
                current = self.rollouts[rollout_id] = Rollout(rollout_id, detector)
            return current

    def record(
        self, rollout: Rollout, kind: str, name: str, call_id: str, d: GuardDecision
    ) -> None:
        entry = {
            "ts": round(time.time(), 3),
            "rollout": rollout.id,
            "bundle": d.bundle,
            "kind": kind,
            "tool": name,
            "call_id": call_id,
            "decision": d.decision,
            "rule": d.rule,
            "reason": d.reason,
        }
        if d.decision != "allow":
            rollout.events.append(entry)
        if self.log_path is not None:
            line = self._scrub.text(json.dumps(entry))
            with self._lock, self.log_path.open("a") as fh:
                fh.write(line + "\n")

    def decide_call(
        self, rollout: Rollout, call_id: str, name: str, raw_args: str
    ) -> GuardDecision:
        try:
            arguments = json.loads(raw_args) if raw_args.strip() else {}
        except json.JSONDecodeError:
            arguments = {"raw": raw_args}
        if not isinstance(arguments, dict):
            arguments = {"value": arguments}
        with rollout.lock:
            rollout.calls += 1
            decision = rollout.detector.check(name, arguments, "")
        self.record(rollout, "call", name, call_id, decision)
        return decision

    def screen_outputs(self, rollout: Rollout, body: dict[str, Any]) -> None:
        """Check tool outputs the harness sends back; redact secrets before the model sees them."""
        for message in body.get("messages") or []:
            if not isinstance(message, dict) or message.get("role") != "tool":
                continue
            content = message.get("content")
            key = str(message.get("tool_call_id", "")) + str(hash(str(content)))
            if key in rollout.seen_outputs or not isinstance(content, str):
                continue
            rollout.seen_outputs.add(key)
            with rollout.lock:
                decision = rollout.detector.check_output(content)
            if decision.decision != "allow":
                self.record(
                    rollout, "output", "tool", str(message.get("tool_call_id", "")), decision
                )
                message["content"] = Scrubber().text(content)

    def serve(self, host: str, port: int) -> ThreadingHTTPServer:
        """A started-on-demand HTTP server (call ``serve_forever``)."""
        server = ThreadingHTTPServer((host, port), _handler(self))
        server.daemon_threads = True
        return server


def _rollout_id(headers: Any) -> str:
    explicit = headers.get("X-Rollout-Id")
    if explicit:
        return str(explicit)
    auth = str(headers.get("Authorization") or "")
    return auth.removeprefix("Bearer ").strip() or "default"


class _Handler(JsonHandler):
    """One request to the proxy; ``proxy`` is set on a per-server subclass."""

    proxy: GuardProxy

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s " + format, self.address_string(), *args)

    def do_GET(self) -> None:
        if self.path.startswith("/guard/rollouts/"):
            rid = self.path.removeprefix("/guard/rollouts/").strip("/")
            if rid in self.proxy.rollouts:
                self.send_json(self.proxy.rollouts[rid].status())
            else:
                self.send_json({"error": {"message": f"unknown rollout {rid!r}"}}, 404)
            return
        self._forward("GET", None)

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError as exc:
            self.send_json({"error": {"message": f"request body is not JSON: {exc}"}}, 400)
            return
        if self.path.startswith("/guard/rollouts/") and self.path.endswith("/profile"):
            self._set_profile(body)
        elif self.path.rstrip("/").endswith("/chat/completions") and isinstance(body, dict):
            self._chat(body)
        else:
            self._forward("POST", raw)

    def _set_profile(self, body: Any) -> None:
        from pydantic import ValidationError

        rid = self.path.removeprefix("/guard/rollouts/").removesuffix("/profile").strip("/")
        try:
            profile = Profile.model_validate(body)
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(map(str, first["loc"]))
            self.send_json({"error": {"message": f"profile field {field!r}: {first['msg']}"}}, 400)
            return
        self.send_json(self.proxy.rollout(rid, profile).status())

    def _chat(self, body: dict[str, Any]) -> None:
        rollout = self.proxy.rollout(_rollout_id(self.headers))
        self.proxy.screen_outputs(rollout, body)

        def decide(call_id: str, name: str, args: str) -> GuardDecision:
            return self.proxy.decide_call(rollout, call_id, name, args)

        try:
            resp, conn = self._upstream("POST", json.dumps(body).encode())
        except OSError as exc:
            self.send_json({"error": {"message": f"upstream unreachable: {exc}"}}, 502)
            return
        try:
            if resp.status != 200:
                self._relay(resp)
            elif body.get("stream"):
                self._stream(resp, StreamRewriter(decide))
            else:
                data = json.loads(resp.read() or b"{}")
                self.send_json(rewrite_completion(data, decide))
        finally:
            conn.close()

    def _stream(self, resp: http.client.HTTPResponse, rewriter: StreamRewriter) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        while True:
            line = resp.readline()
            if not line:
                break
            text = line.decode("utf-8", "replace").strip()
            if not text.startswith("data:"):
                continue
            payload = text[5:].strip()
            if payload == "[DONE]":
                self._send_chunks(rewriter.finish())
                self.wfile.write(b"data: [DONE]\n\n")
                break
            self._send_chunks(rewriter.feed(json.loads(payload)))
        self.wfile.flush()

    def _send_chunks(self, chunks: list[dict[str, Any]]) -> None:
        for chunk in chunks:
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
        self.wfile.flush()

    def _upstream(
        self, method: str, body: bytes | None
    ) -> tuple[http.client.HTTPResponse, http.client.HTTPConnection]:
        up = self.proxy.upstream
        cls = http.client.HTTPSConnection if up.scheme == "https" else http.client.HTTPConnection
        conn = cls(up.hostname or "", up.port, timeout=UPSTREAM_TIMEOUT_S)
        path = up.path + (self.path.removeprefix("/v1") if up.path.endswith("/v1") else self.path)
        headers = {
            "Content-Type": "application/json",
            "Accept": self.headers.get("Accept", "*/*"),
        }
        auth = (
            f"Bearer {self.proxy.upstream_key}"
            if self.proxy.upstream_key
            else self.headers.get("Authorization")
        )
        if auth:
            headers["Authorization"] = auth
        conn.request(method, path, body=body, headers=headers)
        return conn.getresponse(), conn

    def _forward(self, method: str, body: bytes | None) -> None:
        try:
            resp, conn = self._upstream(method, body)
        except OSError as exc:
            self.send_json({"error": {"message": f"upstream unreachable: {exc}"}}, 502)
            return
        try:
            self._relay(resp)
        finally:
            conn.close()

    def _relay(self, resp: http.client.HTTPResponse) -> None:
        data = resp.read()
        self.send_response(resp.status)
        self.send_header("Content-Type", resp.getheader("Content-Type") or "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def _handler(proxy: GuardProxy) -> type[BaseHTTPRequestHandler]:
    return type("GuardHandler", (_Handler,), {"proxy": proxy})
