"""The two arms as deployment units, the same-but-the-adapter check, and their endpoints.

A scripted arm is a deployment unit too: ``base_model = "scripted"``, ``base_revision`` the
toolkit version that plays the script, and the policy (``replay`` / ``give_up`` / ``cheat``) as
its adapter. So two scripted arms with different policies differ only in the adapter, like a
base model and its LoRA adapter.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from trajforge import __version__
from trajforge.errors import UsageError
from trajforge.guard import bundle_version
from trajforge.records import DeploymentUnit, Provenance
from trajforge.registry import HARNESSES, create
from trajforge.train.evaluation.config import EvalConfig, ModelArm, ScriptedArm

ARMS = ("base", "adapter")
TOOL_POLICY = "harness-default+guard"
"""The harness's own tools, every call judged by the guard proxy before it runs."""
SCRIPTED_BASE = "scripted"
MAY_DIFFER = frozenset({"adapter", "adapter_revision"})


def harness_version(name: str) -> str:
    """Version the installed harness CLI reports; UsageError when it is not installed."""
    harness = create(HARNESSES, name, "harness")
    version = harness.version()
    if version is None:
        raise UsageError(f"harness {name!r}: CLI not installed: run `trajforge harness install`")
    return str(version)


def guard_version(required: str | None) -> str:
    """The shipped guard bundle's version; refuses a config that asks for another one."""
    shipped = bundle_version()
    if required is not None and required not in ("default", shipped):
        raise UsageError(
            f"guard_bundle {required!r}: the shipped bundle is {shipped!r}; rollouts run through "
            "the shipped bundle only: set guard_bundle to it or drop the setting"
        )
    return shipped


def unit_for(
    arm: ScriptedArm | ModelArm, harness: tuple[str, str], guard: str, config: dict[str, Any]
) -> DeploymentUnit:
    """The deployment unit of one arm."""
    adapter: str | None
    adapter_rev: str | None
    if isinstance(arm, ScriptedArm):
        base, base_rev = SCRIPTED_BASE, f"trajforge-{__version__}"
        adapter, adapter_rev = arm.policy, f"{arm.policy}@trajforge-{__version__}"
    else:
        base, base_rev = arm.base_model, arm.base_revision
        adapter, adapter_rev = arm.adapter, arm.adapter_revision
    return DeploymentUnit(
        base_model=base,
        base_revision=base_rev,
        adapter=adapter,
        adapter_revision=adapter_rev,
        harness=harness[0],
        harness_version=harness[1],
        tool_policy=TOOL_POLICY,
        guard_bundle=guard,
        provenance=Provenance(config=config),
    )


def check_arms(base: DeploymentUnit, adapter: DeploymentUnit) -> None:
    """Refuse arms that differ in anything but the adapter, or not at all."""
    left = base.model_dump(mode="json", exclude={"provenance"})
    right = adapter.model_dump(mode="json", exclude={"provenance"})
    differ = sorted(k for k in left if left[k] != right[k] and k not in MAY_DIFFER)
    if differ:
        detail = ", ".join(f"{k}: {left[k]!r} vs {right[k]!r}" for k in differ)
        raise UsageError(
            f"arms.base and arms.adapter differ in more than the adapter ({detail}); "
            "an eval compares one base with and without an adapter: make these equal"
        )
    if all(left[k] == right[k] for k in MAY_DIFFER):
        raise UsageError("arms.base and arms.adapter are identical: give arms.adapter its adapter")


def deployment_units(config: EvalConfig) -> dict[str, DeploymentUnit]:
    """Both arms' units (arms compatible, harness installed, guard bundle resolved)."""
    frozen = config.model_dump(mode="json", exclude={"output_dir", "bootstrap", "arms"})
    arms = {name: getattr(config.arms, name) for name in ARMS}
    draft = {name: unit_for(arm, (config.harness, "?"), "?", {}) for name, arm in arms.items()}
    check_arms(draft["base"], draft["adapter"])  # config mistakes first, before any probing
    if any(isinstance(arm, ModelArm) and not arm.server_url for arm in arms.values()):
        serving()  # refuse in-process model arms early when the [train] extra is missing
    for name, arm in arms.items():
        if isinstance(arm, ModelArm) and arm.server_url and arm.served_name:
            check_served(name, arm.server_url, arm.served_name, arm.adapter)
    harness = (config.harness, harness_version(config.harness))
    guard = guard_version(config.guard_bundle)
    return {name: unit_for(arm, harness, guard, frozen) for name, arm in arms.items()}


def serving() -> Any:
    """``trajforge.train.serving`` (needs the ``[train]`` extra)."""
    missing = [m for m in ("torch", "transformers", "peft") if find_spec(m) is None]
    if missing:
        raise UsageError(
            f"model arms need {', '.join(missing)}: install torch first, then the training "
            "extra with `pip install -e '.[train]'`"
        )
    from trajforge.train import serving as module

    return module


@contextmanager
def endpoint(arm: ScriptedArm | ModelArm, config: EvalConfig) -> Iterator[str | None]:
    """The model endpoint of an arm: None for scripted arms (each attempt serves its script).

    Model arms are served behind a capture proxy that forces the run's sampling (temperature,
    top_p, tokens per turn) and turn budget on every request, the same for both arms.
    """
    if isinstance(arm, ScriptedArm):
        yield None
        return
    s = config.sampling
    if arm.server_url:
        from trajforge.train.capture import forced

        with forced(arm.server_url, s.temperature, s.top_p, s.max_tokens,
                    config.budget.max_steps, arm.served_name) as url:  # fmt: skip
            yield url
        return
    module = serving()
    sampling = module.Sampling(s.temperature, s.top_p, s.max_tokens, config.budget.max_steps)
    with module.serve_policy(
        arm.base_model, arm.adapter, seed=s.seed, revision=arm.base_revision, sampling=sampling
    ) as url:
        yield str(url)


def check_served(name: str, url: str, served: str, adapter: str | None) -> None:
    """Refuse an arm whose server does not serve ``served`` (or serves another adapter folder)."""
    from trajforge.wire import model_cards

    try:
        models = model_cards(url, timeout=30)
    except (OSError, ValueError) as exc:
        raise UsageError(f"arms.{name}.server_url {url}: cannot list its models: {exc}") from exc
    found = {str(m.get("id")): m for m in models}
    if served not in found:
        raise UsageError(
            f"arms.{name}.served_name {served!r}: {url} does not serve it "
            f"(it serves: {', '.join(sorted(found)) or 'nothing'})"
        )
    root = found[served].get("root")
    if (
        adapter
        and root
        and Path(adapter).is_dir()
        and Path(str(root)).resolve() != Path(adapter).resolve()
    ):
        raise UsageError(
            f"arms.{name}: {url} serves {served!r} from {root}, not from arms.{name}.adapter "
            f"{adapter}: serve the adapter the config names"
        )
