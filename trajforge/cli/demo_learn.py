"""The demo's learning stages, on the revision it just pushed: scripted eval and a tiny GRPO run.

- **eval**: ``examples/eval-scripted-cpu.toml`` on the pushed revision (the local git hub at
  tag ``demo``, split ``test``): the replay policy against the give-up policy inside pi, k = 1.
- **train**: ``examples/train-tiny-cpu.toml`` with ``DEMO_TRAIN`` on top, on the same revision
  (split ``train``): the QA task of the samples; the tiny random Qwen2 warm-started on pi's
  prompt for it to give the right answer or a near miss about equally often
  (:mod:`trajforge.train.warmstart`), then two GRPO steps through pi with groups of 4, so the
  verifier's rewards differ inside a group; saves a rank-32 adapter. Needs the ``[train]``
  extra; without it the step is skipped with the install line.

Both need the pi CLI (``trajforge harness install``); each says why when it is skipped.
"""

from __future__ import annotations

import contextlib
import statistics
import sys
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from trajforge.errors import TrajforgeError
from trajforge.registry import HARNESSES, create

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
TRAIN_EXTRA = "pip install torch==2.13.0 && pip install -e '.[train]'"
DEMO_TRAIN = (
    'dataset.configs=["coding"]', 'dataset.families=["qa"]', "dataset.limit=1",
    "grpo.num_generations=4", "grpo.per_device_batch=4", "grpo.max_completion_length=8",
    "grpo.max_turns=2", "grpo.learning_rate=2e-3", "trainer.progress=false",
)  # fmt: skip
"""The demo's training step on top of examples/train-tiny-cpu.toml: the one QA task; groups of
4 answers (a group of 2 is all-equal half the time at 50/50); 8 tokens and one turn to answer
in ("136.50" is 7 with end-of-turn); a learning rate a 2-layer model moves at in two steps;
TRL's bar and log lines off (the demo prints its own)."""


def skipped() -> str | None:
    """Why the eval and train stages cannot run here, or None."""
    if create(HARNESSES, "pi", "harness").version() is None:
        return "pi is not installed: run `trajforge harness install`"
    if not (EXAMPLES / "train-tiny-cpu.toml").is_file():
        return "examples/ not found (run from a source checkout)"
    return None


def run_eval(output: Path, revision: str, quiet: bool) -> dict[str, object]:
    """The scripted eval on ``output/hub`` @ ``revision``."""
    from trajforge.cli.common import progress
    from trajforge.train.evaluation.config import load_config
    from trajforge.train.evaluation.evaluate import execute, prepare

    sets = [f"dataset.path={_q(str(output / 'hub'))}", f"dataset.revision={_q(revision)}", "k=1"]
    settings = load_config(EXAMPLES / "eval-scripted-cpu.toml", sets)
    settings = settings.model_copy(update={"output_dir": str(output / "eval")})
    try:
        prep = prepare(settings, overwrite=True)
    except TrajforgeError as exc:
        return {"skipped": str(exc)}
    total = len(prep.dataset.tasks) * 2
    bar = progress(iter(range(total)), total, "eval", quiet=quiet)

    def advance(_row: dict[str, object]) -> None:
        next(bar, None)

    doc = execute(prep, advance)
    list(bar)
    overall = doc["metrics"].get("all", {})
    return {
        "output": str(prep.out),
        "tasks": doc["tasks"],
        "errors": doc["errors"],
        "success": {arm: overall.get(arm, {}).get("success_rate") for arm in ("base", "adapter")},
    }


def run_train(output: Path, revision: str) -> dict[str, object]:
    """Warm start, then two GRPO steps of the tiny model on ``output/hub`` @ ``revision``."""
    missing = [m for m in ("torch", "trl", "peft") if find_spec(m) is None]
    if missing:
        return {"skipped": f"{', '.join(missing)} not installed: {TRAIN_EXTRA}"}
    from trajforge.train.config import load_train_config
    from trajforge.train.trainer import train
    from trajforge.train.warmstart import warm_config

    hub = [f"dataset.path={_q(str(output / 'hub'))}", f"dataset.revision={_q(revision)}"]
    sets = [*hub, *DEMO_TRAIN]
    settings = load_train_config(EXAMPLES / "train-tiny-cpu.toml", sets, output / "train")
    with contextlib.redirect_stdout(sys.stderr):  # stdout stays the demo's (pure JSON with --json)
        settings, warm = warm_config(settings, output / "train" / "tiny-qwen2-warm")
        summary = train(settings)
    if summary is None:
        return {"skipped": "not the main training process"}
    metrics = summary["metrics"]
    return {
        "adapter": summary["adapter"],
        "warm_start": warm.model_dump(mode="json"),
        "rollouts": metrics["rollouts"],
        "mean_reward": metrics["mean_reward"],
        "block_rate": metrics["block_rate"],
        **spread(metrics["trainer_log"]),
    }


def spread(history: list[dict[str, Any]]) -> dict[str, object]:
    """The learning signal in TRL's per-step log: per-group reward std, the share of groups
    whose rewards differ (TRL's ``1 - frac_reward_zero_std``), and the gradient norms."""
    steps = [h for h in history if "grad_norm" in h and "reward_std" in h]
    if not steps:
        return {"reward_std": None, "mixed_groups": None, "grad_norm": []}
    return {
        "reward_std": round(statistics.fmean(float(h["reward_std"]) for h in steps), 4),
        "mixed_groups": round(
            statistics.fmean(1 - float(h["frac_reward_zero_std"]) for h in steps), 4
        ),
        "grad_norm": [round(float(h["grad_norm"]), 4) for h in steps],
    }


def _q(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def print_learn(learn_doc: dict[str, object]) -> None:
    """One line per stage."""
    from trajforge.cli.common import out

    ev, tr = learn_doc.get("eval"), learn_doc.get("train")
    if isinstance(ev, dict) and "skipped" in ev:
        out.print(f"eval skipped: {ev['skipped']}")
    elif isinstance(ev, dict):
        out.print(
            f"eval (scripted, pi) on {ev['tasks']} held-out tasks: success {ev['success']} "
            f"→ {ev['output']}/report.html"
        )
    if isinstance(tr, dict) and "skipped" in tr:
        out.print(f"train skipped: {tr['skipped']}")
    elif isinstance(tr, dict):
        _print_train(tr)


def _print_train(tr: dict[str, Any]) -> None:
    from trajforge.cli.common import out

    warm = tr["warm_start"]
    p_right, p_wrong = warm["probs"]
    out.print(
        f"warm start of tiny:qwen2 on pi's prompt for {warm['task']}: P({warm['right']}) "
        f"{p_right:.2f}, P({warm['wrong']}) {p_wrong:.2f} after {warm['steps']} supervised steps"
    )
    grads = ", ".join(f"{g:.3g}" for g in tr["grad_norm"])
    out.print(
        f"trained it in pi with GRPO ({tr['rollouts']} rollouts, mean reward "
        f"{tr['mean_reward']}): reward std per group {tr['reward_std']}, "
        f"groups with mixed rewards {tr['mixed_groups']}, grad norm per step [{grads}] "
        f"→ {tr['adapter']}"
    )
