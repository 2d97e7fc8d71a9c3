"""What a push of a dataset revision did (the record both push targets return)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class PushResult(BaseModel):
    """What a push did."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    target: str
    """Where it went: the local repository path or ``hf://datasets/ORG/NAME``."""
    revision: str
    """Revision name (a tag locally, a branch or tag on the Hub)."""
    commit: str
    """Commit id the revision points at."""
    created: bool
    """False when identical content was already pushed (no new commit was made)."""
