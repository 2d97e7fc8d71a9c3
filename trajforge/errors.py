"""Errors, named after the boundary they crossed."""

from __future__ import annotations


class TrajforgeError(Exception):
    """Base of all trajforge errors; the CLI prints its message without a traceback."""


class UsageError(TrajforgeError):
    """Bad command-line usage or configuration (exit 2)."""


class RecordError(TrajforgeError):
    """A record file is missing, not JSON, or fails validation."""


class FormatError(TrajforgeError):
    """An input could not be read as any (or the requested) trajectory format."""


class SandboxError(TrajforgeError):
    """The sandbox could not be set up or torn down (not: the command failed)."""


class SandboxTimeout(SandboxError):
    """A sandbox phase (start, copy-in, copy-out) ran past its timeout."""


class UnknownName(UsageError):
    """A registry lookup for a name that is not registered."""


class HubError(TrajforgeError):
    """A call to the Hugging Face Hub (or a Hub-compatible server) failed; never holds the token."""


class TaskEnvironmentError(TrajforgeError):
    """The sandbox cannot run what task verifiers need (pytest, polars, a toolchain)."""
