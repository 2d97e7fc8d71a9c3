"""The demo's last stages, on the revision it just pushed: scripted eval and a tiny GRPO run.

- **eval**: ``examples/eval-scripted-cpu.toml`` on the pushed revision (the local git hub at
  tag ``demo``, split ``test``): the replay policy against the give-up policy inside pi, k = 1.
- **train**: ``examples/train-tiny-cpu.toml`` on the same revision (split ``train``): two GRPO
  steps of a tiny local Qwen2 through pi, saving a rank-32 adapter. Needs the ``[train]``
  extra; without it the step is skipped with the install line.

Both need the pi CLI (``trajforge harness install``); each says why when it is skipped.
"""

from __future__ import annotations

import contextlib
import logging
import sys
from importlib.util import find_spec
from pathlib import Path

from trajforge.errors import TrajforgeError
from trajforge.registry import HARNESSES, create

log = logging.getLogger(__name__)
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
TRAIN_EXTRA = "pip install torch==2.13.0 && pip install -e '.[train]'"


def _examples() -> Path | None:
    return EXAMPLES if (EXAMPLES / "train-tiny-cpu.toml").is_file() else None


def learn(output: Path, revision: str, quiet: bool) -> dict[str, object]:
    """Eval and train on ``output/hub`` @ ``revision``; each stage reports or says why not."""
    if create(HARNESSES, "pi", "harness").version() is None:
        reason = "pi is not installed: run `trajforge harness install`"
        return {"eval": {"skipped": reason}, "train": {"skipped": reason}}
    examples = _examples()
    if examples is None:
        reason = "examples/ not found (run from a source checkout)"
        return {"eval": {"skipped": reason}, "train": {"skipped": reason}}
    hub = str(output / "hub")
    return {
        "eval": _eval(examples, output, hub, revision, quiet),
        "train": _train(examples, output, hub, revision),
    }


def _eval(examples: Path, output: Path, hub: str, revision: str, quiet: bool) -> dict[str, object]:
    from trajforge.cli.common import progress
    from trajforge.train.evaluation.config import load_config
    from trajforge.train.evaluation.evaluate import execute, prepare

    sets = [f"dataset.path={_q(hub)}", f"dataset.revision={_q(revision)}", "k=1"]
    settings = load_config(examples / "eval-scripted-cpu.toml", sets)
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


def _train(examples: Path, output: Path, hub: str, revision: str) -> dict[str, object]:
    missing = [m for m in ("torch", "trl", "peft") if find_spec(m) is None]
    if missing:
        return {"skipped": f"{', '.join(missing)} not installed: {TRAIN_EXTRA}"}
    from trajforge.train.config import load_train_config
    from trajforge.train.trainer import train

    sets = [f"dataset.path={_q(hub)}", f"dataset.revision={_q(revision)}", "dataset.limit=1"]
    settings = load_train_config(examples / "train-tiny-cpu.toml", sets, output / "train")
    with contextlib.redirect_stdout(sys.stderr):  # the trainer prints its step logs
        summary = train(settings)
    if summary is None:
        return {"skipped": "not the main training process"}
    metrics = summary["metrics"]
    return {
        "adapter": summary["adapter"],
        "rollouts": metrics["rollouts"],
        "mean_reward": metrics["mean_reward"],
        "block_rate": metrics["block_rate"],
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
        out.print(
            f"trained tiny:qwen2 in pi ({tr['rollouts']} rollouts, mean reward "
            f"{tr['mean_reward']}) → {tr['adapter']}"
        )
