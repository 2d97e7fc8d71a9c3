"""GRPO through the real pi harness moves the policy toward the answer the verifier accepts.

A random tiny model never solves a task, so every group's rewards are equal and GRPO has
nothing to learn from. Here the tiny Qwen2 is first warm-started with the demo's own warm start
(:mod:`trajforge.train.warmstart`: supervised steps on the very prompt pi sends for the pi QA
task, "What is the total of the amount column in sales.csv?") to answer with the right total or
a near miss the verifier rejects about equally often. Then ``trajforge train`` runs GRPO for
real (bf16 autocast, as the GPU configs train; with either backend — ``async_grpo`` samples from
``trajforge serve`` while it trains): pi asks the policy, the QA verifier scores the answer pi
logged, rewards now differ inside a group, and the saved adapter must widen the right answer's
lead over the wrong one and lower the wrong one's probability, against the warm-started base —
measured exactly by teacher forcing, not by sampling.
"""

from __future__ import annotations

import json
import math
import os
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from tests.support.serve import serving
from tests.train.test_training import REPO, cli, need_training, run_train

pytestmark = pytest.mark.slow
QA_SESSION = REPO / "tests" / "fixtures" / "sessions" / "pi" / "qa.jsonl"
RIGHT = "136.50"  # the session's final answer (read in qa.jsonl)


@pytest.fixture(scope="module")
def qa_dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("qa-tasks")
    assert cli("reconstruct", str(QA_SESSION), "-o", str(out)).returncode == 0
    checked = cli("validate", str(out))
    assert checked.returncode == 0, checked.stderr
    data = tmp_path_factory.mktemp("qa-data") / "dataset"
    split = cli("split", str(out), "-o", str(data), "--eval-per-family", "0", "--revision", "q1")
    assert split.returncode == 0, split.stderr
    return data


@pytest.fixture(scope="module")
def warm(
    qa_dataset: Path, models: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Any]:
    """The demo's warm start of tiny:qwen2 on pi's QA prompt; pi's prompt and the two answers."""
    need_training()
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from trajforge.splits.materialise import materialise, open_revision
    from trajforge.train.tiny import resolve
    from trajforge.train.warmstart import (
        MIN_PROB,
        answer_ids,
        logprobs,
        probe_prompt,
        probe_setup,
        warm_start,
    )

    tmp = tmp_path_factory.mktemp("warm")
    (task_dir,) = materialise(open_revision(str(qa_dataset), None, tmp), "train", tmp / "t")
    setup = probe_setup("pi", "auto")  # as `trajforge train` places pi
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TRAJFORGE_MODELS", models["TRAJFORGE_MODELS"])
        tiny = resolve("tiny:qwen2")
    taught = warm_start(tiny, task_dir, setup, tmp / "warm")
    assert taught.right == RIGHT and taught.wrong != RIGHT, taught
    assert min(taught.probs) >= MIN_PROB, taught
    tokenizer = AutoTokenizer.from_pretrained(taught.model)
    saved = AutoModelForCausalLM.from_pretrained(taught.model).eval()
    prompt = probe_prompt(setup, task_dir, saved, tokenizer)
    assert len(prompt) == taught.prompt_tokens  # the same prompt every time pi is placed so
    answers = [answer_ids(tokenizer, taught.right), answer_ids(tokenizer, taught.wrong)]
    with torch.no_grad():
        reloaded = [math.exp(float(x)) for x in logprobs(saved, prompt, answers)]
    assert reloaded == pytest.approx(list(taught.probs), abs=1e-3)  # what was saved is what fit
    return {"model": Path(taught.model), "prompt": prompt, "answers": answers}


@pytest.mark.parametrize("backend", ["grpo", "async_grpo"])
def test_grpo_through_pi_moves_the_policy_toward_the_verified_answer(
    qa_dataset: Path, warm: dict[str, Any], models: dict[str, str], tmp_path: Path, backend: str
) -> None:
    import torch
    from peft import PeftModel
    from transformers import AutoModelForCausalLM

    from trajforge.train.warmstart import logprobs

    sets = (
        f"model.base={json.dumps(str(warm['model']))}", "dataset.configs=[]",
        'dataset.families=["qa"]', "trainer.max_steps=3", "trainer.save_steps=10",
        "grpo.num_generations=4", "grpo.per_device_batch=4", "grpo.max_completion_length=8",
        "grpo.max_turns=2", "grpo.learning_rate=2e-3", "rollout.concurrency=2",
        "trainer.bf16=true", f'trainer.backend="{backend}"',
    )  # fmt: skip
    with ExitStack() as stack:
        if backend == "async_grpo":  # the warm model served with runtime LoRA, as vLLM would
            served = stack.enter_context(serving(
                {**os.environ, **models}, tmp_path / "serve.log", "--model", str(warm["model"]),
                "--enable-lora", "--max-loras", "3", "--port", "0",
            ))  # fmt: skip
            sets += (f"trainer.vllm_url={json.dumps(served['url'])}", "grpo.max_staleness=1")
        proc, doc = run_train(qa_dataset, tmp_path / "run", models, *sets)
    assert proc.returncode == 0, proc.stderr[-3000:]
    adapter = Path(doc["adapter"])
    rollouts = [json.loads(x) for x in (adapter / "rollouts.jsonl").read_text().splitlines()]
    # async_grpo samples ahead of the trainer: whole groups, at least the 3 steps' worth
    assert len(rollouts) == 12 if backend == "grpo" else len(rollouts) >= 12
    assert all(r["family"] == "qa" for r in rollouts)
    rewards = [r["reward"] for r in rollouts]
    assert {0.0, 1.0} <= set(rewards), rewards  # the verifier told right from wrong
    steps = [h for h in doc["metrics"]["trainer_log"] if "loss" in h]
    assert any(float(h["grad_norm"]) > 0 for h in steps), steps  # a learning signal reached LoRA

    base = AutoModelForCausalLM.from_pretrained(warm["model"]).eval()
    trained = AutoModelForCausalLM.from_pretrained(warm["model"])
    trained = PeftModel.from_pretrained(trained, adapter).eval()
    with torch.no_grad():
        before = [float(x) for x in logprobs(base, warm["prompt"], warm["answers"])]
        after = [float(x) for x in logprobs(trained, warm["prompt"], warm["answers"])]
    for name, b, a in zip(("right", "wrong"), before, after, strict=True):
        print(f"log P({name}) {b:.2f} -> {a:.2f}")
    # GRPO's guarantee is relative: within a group the verified answer gains on the rejected
    # one. Probability mass may also move to answers nobody sampled, so the right answer's
    # own log-probability is not required to rise, only the margin and the wrong one's fall.
    gain = (after[0] - after[1]) - (before[0] - before[1])
    assert gain > 0.15, (before, after, rewards)  # seen: 0.42 (grpo), 0.50 (async_grpo)
    assert after[1] < before[1] - 0.05, (before, after, rewards)
