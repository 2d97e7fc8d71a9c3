"""Registries: plain dicts from a short name to a lazily imported ``module:attr`` path."""

from __future__ import annotations

import importlib
from typing import Any

from trajforge.errors import UnknownName

FORMATS: dict[str, str] = {
    # before pi: an STS header is {"type": "session", "harness", "id"} and pi's sniff takes any
    # {"type": "session", "id"} line; sts takes only a header with a harness, which pi never has
    "sts": "trajforge.reconstruct.formats.sts:StsFormat",
    "pi": "trajforge.reconstruct.formats.pi:PiFormat",
    "opencode": "trajforge.reconstruct.formats.opencode:OpencodeFormat",
    "hermes": "trajforge.reconstruct.formats.hermes:HermesFormat",
    "claude-code": "trajforge.reconstruct.formats.claude_code:ClaudeCodeFormat",
    "codex": "trajforge.reconstruct.formats.codex:CodexFormat",
    "atif": "trajforge.reconstruct.formats.atif:AtifFormat",
}

SANDBOXES: dict[str, str] = {
    "local": "trajforge.verifiers.sandbox.local:LocalSandbox",
    "docker": "trajforge.verifiers.sandbox.docker:DockerSandbox",
}

EXECUTORS: dict[str, str] = {
    "local": "trajforge.executors:LocalExecutor",
    "ray": "trajforge.executors_ray:RayExecutor",
}

HARNESSES: dict[str, str] = {
    "pi": "trajforge.train.harnesses.pi:PiHarness",
    "opencode": "trajforge.train.harnesses.opencode:OpencodeHarness",
    "hermes": "trajforge.train.harnesses.hermes:HermesHarness",
}

LANGUAGES: dict[str, str] = {
    "python": "trajforge.verifiers.languages.python:Python",
    "typescript": "trajforge.verifiers.languages.typescript:TypeScript",
}
"""Languages whose changed source the verifiers test (hidden tests, stubs, mutants, runner);
TypeScript covers JavaScript too."""

TEACHERS: dict[str, str] = {
    "mined": "trajforge.verifiers.teacher.mined:MinedTeacher",
    "openai": "trajforge.verifiers.teacher.loop:OpenAITeacher",
}
"""``--teacher`` kinds (``mined``, ``openai:MODEL``); each class has ``from_spec(name, config,
out_dir)``."""

EXTRAS: dict[str, str] = {
    "docker": "trajforge (the docker SDK is a core dependency; a running engine is needed)",
    "ray": "the ray extra: pip install 'trajforge[ray]'",
}


def resolve(registry: dict[str, str], name: str, what: str) -> Any:
    """Import and return the object registered as ``name``; unknown names list the known ones."""
    try:
        target = registry[name]
    except KeyError:
        known = ", ".join(sorted(registry))
        raise UnknownName(f"unknown {what} {name!r}; known: {known}") from None
    module_name, _, attr = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        hint = EXTRAS.get(name, "trajforge")
        raise UnknownName(f"{what} {name!r} needs {hint}: {exc}") from None
    return getattr(module, attr)


def create(registry: dict[str, str], name: str, what: str) -> Any:
    """Instantiate the registered class with no arguments."""
    return resolve(registry, name, what)()
