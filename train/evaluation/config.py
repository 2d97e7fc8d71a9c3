"""``trajforge eval`` configuration: defaults → TOML file → ``--set key.sub=value`` overrides.

Every frozen input of the comparison (dataset revision and split, harness, sampling, budget,
both arms) must be given; a missing one refuses the run naming the field. Unknown keys are
refused too, so a typo never silently falls back to a default.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from trajforge.config import coerce, read_toml, set_dotted
from trajforge.errors import UsageError
from trajforge.records import Family


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class DatasetRef(_Strict):
    """Which held-out tasks: a dataset revision folder or a local git hub, and a split."""

    path: str
    """Dataset folder (``manifest.json``), local hub (``push --to DIR``) or ``hf://datasets/..``."""
    revision: str
    """Revision: must equal the folder's manifest revision; the tag to check out of a hub."""
    split: str
    """Split to evaluate on (``test`` is the held-out one)."""
    families: tuple[Family, ...] = ()
    """Only these families (empty: all in the split)."""
    max_tasks_per_family: int | None = Field(default=None, ge=1)
    """First N tasks (by id) of each family; None: all."""


class Sampling(_Strict):
    """Sampling settings of the policy model (recorded for scripted arms too)."""

    temperature: float = Field(ge=0)
    """Sampling temperature."""
    top_p: float = Field(gt=0, le=1)
    """Nucleus sampling mass."""
    max_tokens: int = Field(ge=1)
    """Most tokens per model turn."""
    seed: int
    """Seed of the policy server."""


class BudgetConfig(_Strict):
    """Identical budget for every attempt of both arms."""

    max_steps: int = Field(ge=1)
    """Model turns per attempt."""
    timeout_s: float = Field(gt=0)
    """Wall-clock limit of the harness process per attempt."""


class BootstrapConfig(_Strict):
    """Confidence intervals by resampling tasks."""

    samples: int = Field(default=2000, ge=100, le=1_000_000)
    """Bootstrap resamples."""
    seed: int = 0
    """Seed of the resampling."""
    confidence: float = Field(default=0.95, gt=0.5, lt=1)
    """Two-sided interval coverage."""


class ScriptedArm(_Strict):
    """A scripted policy played by the scripted model server (CPU, no model)."""

    kind: Literal["scripted"]
    """``scripted``."""
    policy: Literal["replay", "give_up", "cheat"]
    """replay: the task's recorded episode; give_up: answer at once; cheat: must be blocked."""


class ModelArm(_Strict):
    """A model (+ optional LoRA adapter): served in-process by ``trajforge.train.policy_server``,
    or already served by a server at ``server_url`` (vLLM, ``trajforge serve``)."""

    kind: Literal["model"]
    """``model``."""
    base_model: str
    """Base model id, local folder or ``tiny:ARCH``."""
    base_revision: str
    """Base model revision (hub commit / tag, or ``sha256:<hex>`` of local weights)."""
    adapter: str | None = None
    """LoRA adapter folder or hub id; None: the base model alone."""
    adapter_revision: str | None = None
    """Adapter revision; required with an adapter."""
    server_url: str | None = None
    """OpenAI base URL of a server already serving this arm (``vllm serve --enable-lora
    --lora-modules NAME=ADAPTER`` or ``trajforge serve``); None: served in-process."""
    served_name: str | None = None
    """The model name that server answers this arm under (the adapter's ``--lora-modules`` name,
    or the base's served name); required with ``server_url``."""


Arm = Annotated[ScriptedArm | ModelArm, Field(discriminator="kind")]


class Arms(_Strict):
    """Exactly two arms that may differ only in the adapter."""

    base: Arm
    """The reference arm."""
    adapter: Arm
    """The arm under test."""


class EvalConfig(_Strict):
    """Everything one ``trajforge eval`` run depends on."""

    dataset: DatasetRef
    """Held-out tasks."""
    harness: str
    """Harness both arms run in (pi, opencode, hermes)."""
    sampling: Sampling
    """Sampling configuration."""
    budget: BudgetConfig
    """Step and time budget per attempt."""
    arms: Arms
    """``[arms.base]`` and ``[arms.adapter]``."""
    k: int = Field(default=1, ge=1, le=100)
    """Attempts per task per arm."""
    sandbox: str = "local"
    """Sandbox backend of the verifier (local, docker)."""
    harness_sandbox: Literal["auto", "on", "off"] = "auto"
    """Harness process in the local sandbox: auto = when usable, on = required, off = host.
    Resolved once per run, the same for both arms."""
    guard_bundle: str | None = None
    """Required guard bundle version (None: the shipped bundle, whatever its version)."""
    output_dir: str = "eval-out"
    """Where results and reports go (``--output-dir`` overrides)."""
    bootstrap: BootstrapConfig = Field(default_factory=BootstrapConfig)
    """Confidence intervals."""


def _field_path(loc: Sequence[int | str]) -> str:
    # discriminated unions add the tag ("scripted" / "model") to the location: drop it
    parts = [str(p) for p in loc if p not in ("scripted", "model")]
    return ".".join(parts) or "(root)"


def explain(exc: ValidationError, origin: str) -> str:
    """One line naming the setting that is wrong and how to fix it."""
    first = exc.errors()[0]
    field = _field_path(first["loc"])
    kind = first["type"]
    if kind == "missing":
        return f"{origin}: missing setting {field!r}: add it (every frozen input must be given)"
    if kind == "extra_forbidden":
        return f"{origin}: unknown setting {field!r}: remove it or fix its spelling"
    if kind in ("union_tag_invalid", "union_tag_not_found"):
        return f'{origin}: setting {field + ".kind"!r}: give kind = "scripted" or "model"'
    return f"{origin}: setting {field!r}: {first['msg']} (got {first.get('input')!r})"


def load_config(path: Path, overrides: Sequence[str] = ()) -> EvalConfig:
    """The run's configuration; UsageError naming the file and the field when unusable."""
    data = read_toml(path, UsageError, "config file")
    origin = str(path)
    for item in overrides:
        key, sep, raw = item.partition("=")
        if not sep or not all(p.strip() for p in key.split(".")):
            raise UsageError(
                f"--set {item!r}: expected KEY=VALUE, e.g. --set k=3 or budget.max_steps=8"
            )
        set_dotted(data, key.strip(), coerce(raw.strip()))
    if overrides:
        origin += " + --set"
    try:
        config = EvalConfig.model_validate(data)
    except ValidationError as exc:
        raise UsageError(explain(exc, origin)) from None
    for name in ("base", "adapter"):
        arm = getattr(config.arms, name)
        if isinstance(arm, ModelArm) and arm.adapter and not arm.adapter_revision:
            raise UsageError(
                f"{origin}: missing setting 'arms.{name}.adapter_revision': an adapter needs its "
                "revision (sha256 of its weights or a hub commit)"
            )
        if isinstance(arm, ModelArm) and bool(arm.server_url) != bool(arm.served_name):
            raise UsageError(
                f"{origin}: arms.{name}: server_url and served_name go together (the server, "
                "and the model name it answers this arm under)"
            )
    return config
