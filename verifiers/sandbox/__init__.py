"""The sandbox: run untrusted commands on a fresh copy of a workspace.

Backends (see ``trajforge.registry.SANDBOXES``): ``local`` (Linux namespaces, rlimits, no
daemon) and ``docker``. Shared helpers live in :mod:`trajforge.verifiers.sandbox.common`;
``docs/sandbox.md`` says exactly what each backend isolates.
"""

from __future__ import annotations

from trajforge.protocols import Limits, RunResult, Sandbox, SandboxSession
from trajforge.registry import SANDBOXES, create


def get_sandbox(name: str = "local") -> Sandbox:
    """The backend registered as ``name`` (raises UnknownName for unknown names)."""
    backend: Sandbox = create(SANDBOXES, name, "sandbox backend")
    return backend


__all__ = ["Limits", "RunResult", "Sandbox", "SandboxSession", "get_sandbox"]
