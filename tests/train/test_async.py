"""``trainer.backend = "async_grpo"``: TRL's AsyncGRPOTrainer with pi in the loop, on CPU.

The policy server is ``trajforge serve --enable-lora`` (vLLM's API); TRL publishes the adapter
to it after every step itself, and the rollout worker's groups run through the real pi harness,
the guard and capture proxies and the sandboxed verifier.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.serve import serving
from tests.train.test_distributed import served
from tests.train.test_training import need_training, run_train

pytestmark = pytest.mark.slow


@pytest.fixture
def lora_server(models: dict[str, str], tmp_path: Path) -> Iterator[str]:
    env = {**os.environ, **models}
    args = ("--model", "tiny:qwen2", "--enable-lora", "--max-loras", "3", "--port", "0")
    with serving(env, tmp_path / "serve.log", *args, verbose=True) as ready:
        yield str(ready["url"])


def test_async_grpo_trains_through_pi_against_a_served_policy(
    dataset: Path, models: dict[str, str], tmp_path: Path, lora_server: str
) -> None:
    need_training()
    out = tmp_path / "run"
    sets = (
        'trainer.backend="async_grpo"', f"trainer.vllm_url={json.dumps(lora_server)}",
        "grpo.max_staleness=1", "trainer.max_steps=2",
    )  # fmt: skip
    proc, doc = run_train(dataset, out, models, *sets)
    assert proc.returncode == 0, proc.stderr[-3000:]
    adapter = Path(doc["adapter"])
    config = json.loads((adapter / "adapter_config.json").read_text())
    assert config["r"] == 32 and (adapter / "adapter_model.safetensors").stat().st_size > 0
    rollouts = [json.loads(x) for x in (adapter / "rollouts.jsonl").read_text().splitlines()]
    assert len(rollouts) >= 4 and len(rollouts) % 2 == 0  # whole groups of 2
    # every group asked for the adapter TRL had published when it started
    versions = {r["served_model"] for r in rollouts}
    assert versions <= {"pi-policy-v1", "pi-policy-v2", "pi-policy-v3"}, versions
    assert "pi-policy-v1" in versions
    assert all(r["status"] in ("ok", "timeout", "blocked") for r in rollouts), rollouts
    steps = [h for h in doc["metrics"]["trainer_log"] if "loss" in h]
    assert len(steps) == 2 and all("sample/staleness_max" in h for h in steps), steps
    # the last sync's adapter and the one before are loaded (max_staleness 1), older ones not
    names = served(lora_server)
    assert "pi-policy-v3" in names and "pi-policy-v1" not in names, names
    # a second run in the same output dir resumes from checkpoint-2 against the same server:
    # its versions go on from there (step 3's adapter is v3 again, replacing the one left there)
    again, doc = run_train(dataset, out, models, *sets[:-1], "trainer.max_steps=3")
    assert again.returncode == 0, again.stderr[-3000:]
    more = [json.loads(x) for x in (adapter / "rollouts.jsonl").read_text().splitlines()]
    assert more[: len(rollouts)] == rollouts and len(more) > len(rollouts)
    assert {r["served_model"] for r in more[len(rollouts) :]} >= {"pi-policy-v3"}
    assert {r["step"] for r in more[len(rollouts) :]} >= {2}
    assert [h["step"] for h in doc["metrics"]["trainer_log"] if "loss" in h] == [1, 2, 3]
    assert "pi-policy-v4" in served(lora_server) and "pi-policy-v2" not in served(lora_server)


def test_async_grpo_needs_a_runtime_lora_server(
    dataset: Path, models: dict[str, str], tmp_path: Path
) -> None:
    need_training()
    proc, _ = run_train(dataset, tmp_path / "run", models, 'trainer.backend="async_grpo"')
    assert proc.returncode == 2 and "trainer.vllm_url" in proc.stderr, proc.stderr[-2000:]
    env = {**os.environ, **models}
    with serving(env, tmp_path / "plain.log", "--model", "tiny:qwen2", "--port", "0") as ready:
        proc, _ = run_train(
            dataset, tmp_path / "run", models, 'trainer.backend="async_grpo"',
            f"trainer.vllm_url={json.dumps(ready['url'])}",
        )  # fmt: skip
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "--enable-lora" in proc.stderr and "Traceback" not in proc.stderr


def test_rollout_worker_turns_a_group_into_trl_samples(dataset: Path, tmp_path: Path) -> None:
    """Recorded engine turns through the real pi harness: one sample per scored rollout, its
    row and logprobs laid out as TRL's tree packer reads them; unscored and (optionally)
    truncated rows left out; every rollout recorded with the adapter version it asked for."""
    need_training()
    from tests.train.test_training import recorded_cheat
    from trajforge.train.async_backend import (
        HarnessRolloutWorker,
        RolloutWorkerError,
        group_advantages,
    )

    with recorded_cheat(dataset, tmp_path, concurrency=2) as runner:
        (task_id,) = runner.tasks
        worker = HarnessRolloutWorker(runner, [task_id], 2, drop_truncated=True)
        worker.lora_name = "pi-policy"
        worker.update_model_version(2)
        samples = worker.group(task_id, 7)
        runner.max_completion = 3  # rows cut after 3 tokens: truncated, left out
        cut = worker.group(task_id, 8)
        worker.drop_truncated = False
        kept = worker.group(task_id, 9)
        runner.capture.point_to("http://127.0.0.1:9/v1")  # nothing listens: unscored
        broken = worker.group(task_id, 10)
        runner.tasks["gone"] = tmp_path / "no-such-task"  # a rollout that cannot even start
        worker.group("gone", 11)
        with pytest.raises(RolloutWorkerError, match=r"3 rollout groups in a row.*could not start"):
            worker.group("gone", 12)  # the trainer would wait for samples forever: give up
    assert len(samples) == 2 and cut == [] and len(kept) == 2 and broken == []
    first = samples[0]
    assert first.input_ids.tolist() == [*range(100, 110), 200, 201, 300, 210, 211]
    assert first.completion_mask.tolist() == [0] * 10 + [1, 1, 0, 1, 1]
    assert first.old_log_probs.tolist() == [0.0] * 10 + [-0.5, -0.25, 0.0, -0.5, -0.25]
    assert (first.model_version, first.group_id, first.advantage) == (2, 7, 0.0)  # both blocked
    assert first.metrics == {"reward": 0.0}
    assert kept[0].input_ids.tolist() == [*range(100, 110), 200, 201, 300]
    records = [json.loads(x) for x in (tmp_path / "rollouts.jsonl").read_text().splitlines()]
    assert len(records) == 12 and {r["served_model"] for r in records} == {"pi-policy-v2"}
    assert {r["step"] for r in records} == {1}  # version 2 = the policy after step 1
    assert [r["status"] for r in records[:6]] == ["blocked"] * 6
    assert [r["status"] for r in records[6:]] == ["error"] * 6
    assert group_advantages([1.0, 0.0, None, 1.0]) == pytest.approx(
        [0.7071, -1.4142, 0.0, 0.7071], abs=1e-4
    )
