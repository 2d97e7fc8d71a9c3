"""The harness revision of a run: its exact system prompt, tool schema and version.

The guard proxy sees every chat-completions request a harness makes.
:class:`RecordingGuardProxy` keeps the first one per rollout that offers tools (harnesses send
tool-less side requests such as opencode's title generation first); :func:`revision_of` takes
its system / developer messages and ``tools``, makes them stable across runs — secrets
scrubbed, the run's workspace and run folder replaced by ``<workspace>`` / ``<run>``, dates by
``<date>`` — and hashes them. ``harness_revision`` = sha256 over harness, version and both
hashes: two runs with the same revision saw the same prompt and tools.

What stays in the texts is what the harness really sent, including facts about the machine
some harnesses put in their prompt (hermes: kernel version, Python version), so a revision is
per harness version *and* machine image.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
import threading
from typing import Any

from pydantic import BaseModel, ConfigDict

from trajforge.guard.profile import Profile
from trajforge.guard.proxy import GuardProxy, Rollout
from trajforge.guard.rules import Bundle
from trajforge.records import SCHEMA_VERSION
from trajforge.scrub import Scrubber

_MONTH = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\.?"
_DAY = r"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*,?"
_TIME = r"(?:[ T]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?: ?[AaPp][Mm])?(?:Z|[+-]\d{2}:?\d{2})?)?"
DATES = (
    re.compile(r"\b\d{4}-\d{2}-\d{2}" + _TIME),
    re.compile(rf"\b(?:{_DAY} )?{_MONTH} \d{{1,2}},? \d{{4}}" + _TIME),
    re.compile(rf"\b(?:{_DAY} )?\d{{1,2}} {_MONTH},? \d{{4}}" + _TIME),
)
"""Dates (and times after them) in prompts: ISO, "Monday, November 30, 2026", "Mon Nov 30
2026", "30 November 2026"."""


class HarnessRevision(BaseModel):
    """The harness revision of a run (``harness_revision.json`` in a kept run folder)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: int = SCHEMA_VERSION
    """Version of the record schema."""
    harness: str
    """Harness registry name."""
    version: str
    """Exact version the installed CLI reported."""
    system_prompt: str
    """System and developer messages of the first tool-offering request, normalised."""
    tools: list[dict[str, Any]]
    """The ``tools`` of that request, normalised."""
    system_prompt_sha256: str
    """sha256 of ``system_prompt`` (UTF-8)."""
    tools_sha256: str
    """sha256 of ``tools`` as canonical JSON (sorted keys, no spaces)."""
    harness_revision: str
    """sha256 over harness, version, ``system_prompt_sha256`` and ``tools_sha256``."""


class RecordingGuardProxy(GuardProxy):
    """The guard proxy, also keeping each rollout's first chat request that offers tools."""

    def __init__(self, upstream: str, bundle: Bundle, profile: Profile | None = None) -> None:
        super().__init__(upstream, bundle, profile)
        self.first_requests: dict[str, dict[str, Any]] = {}
        """Rollout id → messages and tools of its first tool-offering chat request."""
        self._first_lock = threading.Lock()

    def screen_outputs(self, rollout: Rollout, body: dict[str, Any]) -> None:
        # Called for every chat-completions request, before it is forwarded.
        if body.get("tools"):
            with self._first_lock:
                if rollout.id not in self.first_requests:
                    kept = {"messages": body.get("messages") or [], "tools": body["tools"]}
                    self.first_requests[rollout.id] = copy.deepcopy(kept)
        super().screen_outputs(rollout, body)


def _text(content: Any) -> str:
    """A message's content as text (string, or a list of text parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text", "") for p in content if isinstance(p, dict)]
        return "\n".join(str(p) for p in parts)
    return ""


def normalise(text: str, places: dict[str, str]) -> str:
    """``text`` with secrets scrubbed, run paths (``places``: path → placeholder) and dates
    replaced."""
    for path in sorted(places, key=len, reverse=True):
        text = text.replace(path, places[path])
    for pattern in DATES:
        text = pattern.sub("<date>", text)
    return Scrubber().text(text)


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def revision_of(
    harness: str, version: str, request: dict[str, Any], places: dict[str, str]
) -> HarnessRevision:
    """The normalised revision from one captured request (see the module docstring)."""
    system = [
        _text(m.get("content"))
        for m in request.get("messages") or []
        if isinstance(m, dict) and m.get("role") in ("system", "developer")
    ]
    prompt = normalise("\n\n".join(system), places)
    tools = json.loads(normalise(json.dumps(request.get("tools") or []), places))
    prompt_sha = _sha256(prompt)
    tools_sha = _sha256(json.dumps(tools, sort_keys=True, separators=(",", ":")))
    revision = _sha256(json.dumps([harness, version, prompt_sha, tools_sha]))
    return HarnessRevision(
        harness=harness,
        version=version,
        system_prompt=prompt,
        tools=tools,
        system_prompt_sha256=prompt_sha,
        tools_sha256=tools_sha,
        harness_revision=revision,
    )
