"""Validation settings: defaults → optional TOML file → ``--set key=value`` overrides."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from trajforge.config import coerce, read_toml
from trajforge.errors import UsageError


class ValidateConfig(BaseModel):
    """Acceptance rules and budgets of ``trajforge validate`` (part of every cache key)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    oracle_runs: int = Field(default=3, ge=1, le=20)
    """Oracle runs that must all pass (pinned seed and TZ in every run)."""
    min_kill_rate: float = Field(default=0.8, ge=0.0, le=1.0)
    """Smallest accepted share of decided mutants that some test kills."""
    max_mutants: int = Field(default=20, ge=0, le=500)
    """Most injected faults run per task (0 turns the fault control off)."""
    seed: int = 0
    """Seed for mutant selection and answer perturbation."""
    timeout_s: float = Field(default=60.0, gt=0, le=3600)
    """Wall-clock limit of one sandboxed run."""
    mutant_timeout_s: float = Field(default=20.0, gt=0, le=3600)
    """Wall-clock limit of one mutant's test run (a timeout is 'unknown', never a kill)."""
    memory_mb: int = Field(default=2048, ge=256, le=1 << 20)
    """Memory of one sandboxed run of a code task's check (the local sandbox's address-space
    limit, docker's memory cap): a CUDA build of torch needs about 4096 to load."""
    require_mutants: bool = False
    """Reject tasks where no mutant could be generated or decided (kill rate not measurable)."""
    wilson_z: float = Field(default=1.96, gt=0, le=5)
    """z of the Wilson interval recorded beside the kill rate (1.96: 95 %)."""
    batch_mutants: bool = True
    """Run pytest mutants in one forking runner inside the sandbox (pytest imported once)."""
    teacher_rounds: int = Field(default=3, ge=1, le=10)
    """Most ask → prove → feedback rounds of the openai teacher per task."""
    teacher_timeout_s: float = Field(default=120.0, gt=0, le=3600)
    """Wall-clock limit of one teacher API call."""
    teacher_concurrency: int = Field(default=4, ge=1, le=64)
    """Teacher API calls in flight at once, over all tasks."""
    teacher_usd_per_mtok_in: float = Field(default=0.0, ge=0)
    """Price of a million prompt tokens (0: cost not tracked)."""
    teacher_usd_per_mtok_out: float = Field(default=0.0, ge=0)
    """Price of a million completion tokens (0: cost not tracked)."""


def _explain(exc: ValidationError, origin: str) -> str:
    first = exc.errors()[0]
    field = ".".join(str(p) for p in first["loc"]) or "(root)"
    if first["type"] == "extra_forbidden":
        known = ", ".join(sorted(ValidateConfig.model_fields))
        return f"{origin}: unknown setting {field!r}; known settings: {known}"
    return (
        f"{origin}: setting {field!r}: {first['msg']} (got {first.get('input')!r}); "
        f"fix the value or drop it to use the default "
        f"{ValidateConfig.model_fields[field].default!r}"
    )


def load_config(path: Path | None = None, overrides: Sequence[str] = ()) -> ValidateConfig:
    """Defaults, then ``path`` (TOML; a ``[validate]`` table or top-level keys), then overrides."""
    data: dict[str, Any] = {}
    origin = "defaults"
    if path is not None:
        origin = str(path)
        parsed = read_toml(path, UsageError, "config file")
        table = parsed.get("validate", parsed)
        if not isinstance(table, dict):
            raise UsageError(f"{path}: [validate] must be a table of settings")
        data.update(table)
    for item in overrides:
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--set {item!r}: expected KEY=VALUE, e.g. --set max_mutants=10")
        data[key.strip()] = coerce(raw.strip())
        origin = f"{origin} + --set" if "--set" not in origin else origin
    try:
        return ValidateConfig.model_validate(data)
    except ValidationError as exc:
        raise UsageError(_explain(exc, origin)) from None
