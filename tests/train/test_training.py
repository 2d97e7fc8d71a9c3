"""``trajforge train`` end to end on CPU: tiny local models, the real pi harness, GRPO + LoRA.

The dataset is built for real (reconstruct the pi fixture sessions → validate → split); each
rollout goes through the real pi CLI, the guard proxy, the capture proxy and the in-process
policy server, and is scored by the task's hidden verifier in the local sandbox. Needs the
``[train]`` extra (torch, trl, peft) and the pi CLI; skips loudly without them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import pytest

from trajforge.records import DeploymentUnit, load_record
from trajforge.registry import HARNESSES, create

REPO = Path(__file__).resolve().parents[2]
SESSIONS = REPO / "tests" / "fixtures" / "sessions" / "pi"
EXAMPLE = REPO / "examples" / "train-tiny-cpu.toml"

pytestmark = pytest.mark.slow


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "trajforge.cli.main", *args]
    full = {**os.environ, **(env or {})}
    return subprocess.run(argv, capture_output=True, text=True, check=False, cwd=REPO, env=full)


def need_training() -> None:
    missing = [m for m in ("torch", "trl", "peft") if find_spec(m) is None]
    if missing:
        pytest.skip(f"!! training extra missing ({missing}): pip install -e '.[train]'")
    if create(HARNESSES, "pi", "harness").version() is None:
        pytest.skip("!! pi CLI not installed: run `trajforge harness install`")


def run_train(
    dataset: Path, out: Path, env: dict[str, str], *sets: str
) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    args = ["train", "--config", str(EXAMPLE), "--output-dir", str(out), "--json"]
    args += ["--set", f"dataset.path={json.dumps(str(dataset))}", "--set", "dataset.families=[]"]
    args += ["--set", "dataset.limit=1"]
    for item in sets:
        args += ["--set", item]
    proc = cli(*args, env=env)
    doc = json.loads(proc.stdout) if proc.returncode == 0 else {}
    return proc, doc


QWEN2 = {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"}
LFM2 = {"q_proj", "k_proj", "v_proj", "out_proj", "in_proj", "w1", "w2", "w3"}


def check_adapter(adapter: Path, doc: dict[str, Any], arch: str, targets: set[str]) -> None:
    """A finished 2-step run: the rank-32 adapter, its deployment unit and 2 x 2 rollouts."""
    assert Path(doc["adapter"]) == adapter
    config = json.loads((adapter / "adapter_config.json").read_text())
    assert config["r"] == 32 and set(config["target_modules"]) == targets
    assert not {"conv", "lm_head"} & set(config["target_modules"])
    assert (adapter / "adapter_model.safetensors").stat().st_size > 0
    assert (adapter / "chat_template.jinja").is_file() or "chat_template" in (
        adapter / "tokenizer_config.json"
    ).read_text()
    assert sorted(p.name for p in adapter.glob("checkpoint-*")) == ["checkpoint-1", "checkpoint-2"]

    unit = load_record(DeploymentUnit, adapter / "deployment_unit.json")
    assert unit.harness == "pi" and unit.harness_version and unit.base_model == f"tiny:{arch}"
    assert unit.base_revision.startswith("sha256:") and unit.adapter_revision.startswith("sha256:")
    assert unit.guard_bundle and unit.tool_policy

    rollouts = [json.loads(line) for line in (adapter / "rollouts.jsonl").read_text().splitlines()]
    assert len(rollouts) == 4  # 2 steps x 2 generations of the one task
    for row in rollouts:
        assert row["harness"] == "pi" and row["status"] in ("ok", "timeout"), row["reasons"]
        assert row["turns"] >= 1 and row["sampled_tokens"] >= 1, row
        assert row["reward"] is not None and 0.0 <= row["reward"] <= 1.0
        assert row["session_tool_calls"] is not None  # pi's own log parsed back
    metrics = json.loads((adapter / "metrics.json").read_text())
    assert metrics["rollouts"] == 4 and metrics["scored"] == 4 and metrics["block_rate"] == 0.0
    assert set(metrics["per_family"]) == {rollouts[0]["family"]}
    logged = [h["rewards/verifier_reward/mean"] for h in metrics["trainer_log"] if "loss" in h]
    assert len(logged) == 2
    by_step = [sum(r["reward"] for r in rollouts[i : i + 2]) / 2 for i in (0, 2)]
    assert logged == pytest.approx(by_step, abs=1e-3)


def test_tiny_lfm2_grpo_through_pi_saves_rank_32_adapter(
    dataset: Path, models: dict[str, str], tmp_path: Path
) -> None:
    need_training()
    proc, doc = run_train(dataset, tmp_path / "run", models, 'model.base="tiny:lfm2"')
    assert proc.returncode == 0, proc.stderr[-3000:]
    check_adapter(tmp_path / "run" / "adapters" / "pi" / "tiny-lfm2-r32", doc, "lfm2", LFM2)


def test_tiny_qwen2_run_resumed_from_its_last_checkpoint_saves_rank_32_adapter(
    dataset: Path, models: dict[str, str], tmp_path: Path
) -> None:
    """The example's 2 steps run as 1, then a second run in the same output dir: it resumes at
    checkpoint-1, runs only step 1 and ends with the same outputs as one 2-step run."""
    need_training()
    out = tmp_path / "run"
    first, doc = run_train(dataset, out, models, "trainer.max_steps=1")
    assert first.returncode == 0, first.stderr[-3000:]
    adapter = Path(doc["adapter"])
    before = [json.loads(x)["rollout_id"] for x in (adapter / "rollouts.jsonl").open()]
    assert len(before) == 2 and (adapter / "checkpoint-1").is_dir()
    proc, doc = run_train(dataset, out, models, "trainer.max_steps=2")
    assert proc.returncode == 0, proc.stderr[-3000:]
    rollouts = [json.loads(x) for x in (adapter / "rollouts.jsonl").open()]
    # the first run's records kept, then only step 1 was run again: it resumed at checkpoint-1
    assert [r["rollout_id"] for r in rollouts[:2]] == before
    assert [r["step"] for r in rollouts] == [0, 0, 1, 1]
    assert doc["metrics"]["rollouts"] == 4
    assert [h["step"] for h in doc["metrics"]["trainer_log"] if "loss" in h] == [1, 2]
    check_adapter(out / "adapters" / "pi" / "tiny-qwen2-r32", doc, "qwen2", QWEN2)


def test_config_errors_name_the_setting(dataset: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(EXAMPLE.read_text().replace("[lora]", "[lora]\nrank = 8"))
    proc = cli("train", "--config", str(bad))
    assert proc.returncode == 2 and "lora.rank" in proc.stderr and "Traceback" not in proc.stderr
    proc = cli("train", "--config", str(EXAMPLE), "--set", 'lora.target_modules=["conv"]')
    assert proc.returncode == 2 and "target_modules" in proc.stderr and "conv" in proc.stderr
    missing = tmp_path / "missing.toml"
    missing.write_text('harness = "pi"\n[model]\nbase = "tiny:qwen2"\n')
    proc = cli("train", "--config", str(missing))
    assert proc.returncode == 2 and "'dataset' is required" in proc.stderr
    proc = cli("train", "--config", str(EXAMPLE), "--set", "grpo.per_device_batch=3")
    assert proc.returncode == 2 and "multiple of num_generations" in proc.stderr
    proc = cli("train", "--config", str(tmp_path / "nope.toml"))
    assert proc.returncode == 2 and "nope.toml" in proc.stderr


def test_async_grpo_refuses_hybrid_lfm2(
    dataset: Path, models: dict[str, str], tmp_path: Path
) -> None:
    need_training()
    proc, _ = run_train(
        dataset, tmp_path / "run", models,
        'model.base="tiny:lfm2"', 'trainer.backend="async_grpo"',
        'trainer.vllm_url="http://127.0.0.1:9/v1"',  # refused before any server is asked
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "AsyncGRPOTrainer refuses hybrid models" in proc.stderr and "conv" in proc.stderr
    assert "Traceback" not in proc.stderr


def _recorded(turns: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Give each scripted turn recorded engine fields whose prompts extend each other."""
    prompt, out = list(range(100, 110)), []
    for i, turn in enumerate(turns):
        sampled = [200 + 10 * i, 201 + 10 * i]
        out.append({**turn, "engine": {"prompt_token_ids": list(prompt), "token_ids": sampled,
                                       "logprobs": [-0.5, -0.25]}})  # fmt: skip
        prompt += [*sampled, 300 + i]  # what the harness adds before the next turn
    return out


@contextmanager
def recorded_cheat(dataset: Path, tmp_path: Path, concurrency: int = 1) -> Iterator[Any]:
    """A rollout runner over the repair task whose policy is pi's recorded cheat (turns with
    engine token ids); yields it, its capture proxy pointing at the scripted server."""
    from trajforge.records import Task
    from trajforge.registry import SANDBOXES
    from trajforge.splits.materialise import materialise, open_revision
    from trajforge.train.capture import CaptureProxy
    from trajforge.train.grpo_rollouts import RolloutRunner
    from trajforge.train.replay import scripted_turns
    from trajforge.train.rollout import Budget
    from trajforge.train.rollout_spec import setup_for
    from trajforge.train.scripted import ScriptedServer

    folders = materialise(open_revision(str(dataset), None, tmp_path), "train", tmp_path / "t")
    task_dir = next(f for f in folders if f.name.startswith("repair-"))
    task = load_record(Task, task_dir / "task.json")
    harness = create(HARNESSES, "pi", "harness")
    turns = _recorded(scripted_turns(harness, task, task_dir, None, "cheat", tmp_path / "ws"))
    with ScriptedServer(turns) as server:
        capture = CaptureProxy(server.base_url, temperature=1.0, max_tokens=16, max_turns=8)
        try:
            budget = Budget(max_steps=8, timeout_s=120)
            setup = setup_for("pi", create(SANDBOXES, "local", "sandbox"), budget, "off")
            yield RolloutRunner(
                tasks={task.id: task_dir}, setup=setup, capture=capture,
                capture_url=capture.serve(), concurrency=concurrency,
                log_path=tmp_path / "rollouts.jsonl", pad_id=0,
            )  # fmt: skip
        finally:
            capture.close()


def test_recorded_rollouts_blocked_score_zero_and_errors_are_unscored(
    dataset: Path, tmp_path: Path
) -> None:
    need_training()
    from trajforge.train.grpo_rollouts import verifier_reward

    with recorded_cheat(dataset, tmp_path) as runner:
        (task_id,) = runner.tasks
        blocked = runner([task_id])
        runner.capture.point_to("http://127.0.0.1:9/v1")  # nothing listens: infrastructure error
        broken = runner([task_id])
    first, second = runner.records
    assert first["status"] == "blocked" and first["blocks"], first
    assert blocked["rollout_reward"] == [0.0]
    # both recorded turns stitched: sampled tokens trained on, the harness's tokens masked
    assert blocked["prompt_ids"] == [list(range(100, 110))]
    assert blocked["completion_ids"] == [[200, 201, 300, 210, 211]]
    assert blocked["env_mask"] == [[1, 1, 0, 1, 1]]
    assert blocked["logprobs"] == [[-0.5, -0.25, 0.0, -0.5, -0.25]]
    assert second["status"] == "error" and broken["rollout_reward"] == [None], second
    rewards = verifier_reward([task_id] * 2, ["", ""], rollout_reward=[0.0, None])
    assert rewards == [0.0, None]
    assert len((tmp_path / "rollouts.jsonl").read_text().splitlines()) == 2


@pytest.mark.parametrize(
    "path", sorted((REPO / "examples").glob("train-*.toml")), ids=lambda p: p.name
)
def test_example_configs_validate(path: Path) -> None:
    from trajforge.train.config import TARGETS, load_train_config

    config = load_train_config(path, [])
    assert config.lora.r == 32 and config.grpo.per_device_batch % config.grpo.num_generations == 0
    assert config.model.base.startswith("tiny:") or config.model.revision
    assert config.lora.target_modules or any(
        t in config.model.base.lower() for t in ("tiny", "lfm", "qwen")
    )
    assert all(not {"conv", "lm_head"} & set(t) for t in TARGETS.values())
