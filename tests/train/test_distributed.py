"""``trajforge train`` in several processes (torchrun, gloo on CPU) and against an external server.

The same launch as ``accelerate launch`` with ``examples/accelerate/ddp.yaml`` on GPUs: one
training process per rank, each running its own rollouts through the real pi harness; the main
process merges the rollout records, writes the outputs and prints the one result. With
``trainer.vllm_url`` the policy is served by ``trajforge serve --enable-lora`` (the CPU
stand-in for ``vllm serve --enable-lora``, same runtime-LoRA API): the adapter is pushed after
every optimizer step and each step's rollouts are sampled by that step's adapter.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import urllib.request
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.serve import serving
from tests.train.test_training import EXAMPLE, REPO, need_training

pytestmark = pytest.mark.slow


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def torchrun_train(
    dataset: Path, out: Path, env: dict[str, str], *sets: str
) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2",
            "--master_port", str(free_port()), "-m", "trajforge.cli.main",
            "train", "--config", str(EXAMPLE), "--output-dir", str(out), "--json",
            "--set", f"dataset.path={json.dumps(str(dataset))}", "--set", "dataset.families=[]",
            "--set", "dataset.limit=2"]  # fmt: skip
    for item in sets:
        argv += ["--set", item]
    full = {**os.environ, **env, "OMP_NUM_THREADS": "1"}
    return subprocess.run(argv, capture_output=True, text=True, cwd=REPO, env=full, timeout=900)


def read_rollouts(adapter: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (adapter / "rollouts.jsonl").read_text().splitlines()]


def check_two_rank_run(proc: subprocess.CompletedProcess[str], out: Path) -> list[dict[str, Any]]:
    """One result on stdout, every rank's rollouts merged, outputs written once."""
    assert proc.returncode == 0, proc.stderr[-4000:]
    doc = json.loads(proc.stdout)  # exactly one JSON document: only the main process prints
    adapter = out / "adapters" / "pi" / "tiny-qwen2-r32"
    assert Path(doc["adapter"]) == adapter
    rollouts = read_rollouts(adapter)
    # 2 steps x (2 processes x 2 rollouts): each rank ran its own share through pi
    assert len(rollouts) == 8 and Counter(r["rank"] for r in rollouts) == {0: 4, 1: 4}
    assert not list(adapter.glob("rollouts.rank*.jsonl"))
    assert all(r["status"] in ("ok", "timeout") and r["reward"] is not None for r in rollouts)
    assert doc["metrics"]["rollouts"] == 8 and doc["metrics"]["scored"] == 8
    assert json.loads((adapter / "metrics.json").read_text())["rollouts"] == 8
    steps = [h for h in doc["metrics"]["trainer_log"] if "loss" in h]
    assert len(steps) == 2
    # TRL gathers every rank's rewards: each step's logged mean covers all 4 rollouts
    for step, logged in enumerate(steps):
        rewards = [r["reward"] for r in rollouts if r["step"] == step]
        assert len(rewards) == 4
        assert logged["rewards/verifier_reward/mean"] == pytest.approx(sum(rewards) / 4, abs=1e-3)
    assert (adapter / "adapter_model.safetensors").is_file()
    assert sorted(p.name for p in adapter.glob("checkpoint-*")) == ["checkpoint-1", "checkpoint-2"]
    return rollouts


def test_two_processes_in_process_policy(
    dataset: Path, models: dict[str, str], tmp_path: Path
) -> None:
    need_training()
    proc = torchrun_train(dataset, tmp_path / "run", models)
    rollouts = check_two_rank_run(proc, tmp_path / "run")
    assert all(r["served_model"] is None for r in rollouts)
    assert "2 processes" in proc.stderr


@pytest.fixture
def lora_server(models: dict[str, str], tmp_path: Path) -> Iterator[str]:
    """``trajforge serve --enable-lora`` on a free port; yields its base URL."""
    env = {**os.environ, **models}
    args = ("--model", "tiny:qwen2", "--enable-lora", "--port", "0")
    with serving(env, tmp_path / "serve.log", *args) as ready:
        yield str(ready["url"])


def served(url: str) -> set[str]:
    with urllib.request.urlopen(f"{url}/models", timeout=30) as resp:
        return {m["id"] for m in json.loads(resp.read())["data"]}


def test_two_processes_push_adapters_to_an_external_server(
    dataset: Path, models: dict[str, str], tmp_path: Path, lora_server: str
) -> None:
    need_training()
    out = tmp_path / "run"
    proc = torchrun_train(dataset, out, models, f"trainer.vllm_url={json.dumps(lora_server)}")
    rollouts = check_two_rank_run(proc, out)
    # step N's rollouts (on both ranks) were sampled by the adapter pushed after step N
    assert {(r["step"], r["served_model"]) for r in rollouts} == {
        (0, "policy-step-0"),
        (1, "policy-step-1"),
    }
    # the final adapter is loaded, earlier ones unloaded and their folders removed
    assert {"policy-step-2"} <= served(lora_server)
    assert not {"policy-step-0", "policy-step-1"} & served(lora_server)
    live = out / "adapters" / "pi" / "tiny-qwen2-r32" / "live"
    assert sorted(p.name for p in live.iterdir()) == ["step-2"]


def test_two_processes_async_grpo_rolls_out_on_the_main_process(
    dataset: Path, models: dict[str, str], tmp_path: Path, lora_server: str
) -> None:
    """AsyncGRPOTrainer in two processes: the main process's rollout worker feeds both ranks
    (TRL dispatches each micro-batch across them), TRL publishes the adapter after each step."""
    need_training()
    out = tmp_path / "run"
    proc = torchrun_train(
        dataset, out, models, 'trainer.backend="async_grpo"',
        f"trainer.vllm_url={json.dumps(lora_server)}",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-4000:]
    doc = json.loads(proc.stdout)  # one result: only the main process prints
    rollouts = read_rollouts(Path(doc["adapter"]))
    assert rollouts and {r["rank"] for r in rollouts} == {0}
    assert {r["served_model"] for r in rollouts} <= {"pi-policy-v1", "pi-policy-v2"}
    steps = [h for h in doc["metrics"]["trainer_log"] if "loss" in h]
    # 2 rows per rank per micro-batch: each step trained 4 samples, across both processes
    assert len(steps) == 2 and all(h["batch/samples_per_step"] == 4 for h in steps), steps
    assert "pi-policy-v3" in served(lora_server)
