"""Guard: deterministic tool-call detectors and the blocking proxy."""

from __future__ import annotations


def bundle_version() -> str:
    """Version of the default rule bundle (recorded in manifests and deployment units)."""
    from trajforge.guard.rules import load_bundle

    return load_bundle().version
