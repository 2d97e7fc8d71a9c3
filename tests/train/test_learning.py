"""GRPO through the real pi harness moves the policy toward the answer the verifier accepts.

A random tiny model never solves a task, so every group's rewards are equal and GRPO has
nothing to learn from. Here the tiny Qwen2 is first warm-started (plain supervised steps in
this test) to answer the pi QA task ("What is the total of the amount column in sales.csv?")
with the right total or a wrong one about equally often, on the very prompt pi sends. Then
``trajforge train`` runs GRPO for real (bf16 autocast, as the GPU configs train; with either
backend — ``async_grpo`` samples from ``trajforge serve`` while it trains): pi asks the
policy, the QA verifier scores the answer pi logged, rewards now differ inside a group, and the
saved adapter must widen the right answer's lead over the wrong one and lower the wrong one's
probability, against the warm-started base — measured exactly by teacher forcing, not by sampling.
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
RIGHT, WRONG = "136.50", "135.50"


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


def pi_prompt(dataset: Path, model: Any, tokenizer: Any, tmp_path: Path) -> list[int]:
    """The token ids of pi's first request on the QA task, as the policy server renders it."""
    from trajforge.registry import SANDBOXES, create
    from trajforge.splits.materialise import materialise, open_revision
    from trajforge.train.capture import CaptureProxy
    from trajforge.train.policy_server import Policy, PolicyServer
    from trajforge.train.rollout import Budget, run_rollout

    (task_dir,) = materialise(open_revision(str(dataset), None, tmp_path), "train", tmp_path / "t")
    with PolicyServer(Policy(model, tokenizer, max_tokens=4)) as server:
        capture = CaptureProxy(server.base_url, temperature=1.0, max_tokens=4, max_turns=1)
        try:
            run_rollout(
                task_dir, "pi", create(SANDBOXES, "local", "sandbox"), capture.serve(), "policy",
                Budget(max_steps=2, timeout_s=120), rollout_id="probe",
            )  # fmt: skip
            turns, _ = capture.take("probe")
        finally:
            capture.close()
    assert turns, "pi never asked the policy"
    return turns[0].prompt_ids


def answer_ids(tokenizer: Any, text: str) -> list[int]:
    return [*tokenizer(text, add_special_tokens=False)["input_ids"], tokenizer.eos_token_id]


def logprob(model: Any, prompt: list[int], completion: list[int]) -> Any:
    """log P(completion | prompt) at temperature 1 (a differentiable tensor)."""
    import torch

    ids = torch.tensor([prompt + completion])
    logits = model(ids).logits[0, len(prompt) - 1 : -1].float()
    picked = torch.log_softmax(logits, dim=-1)[torch.arange(len(completion)), completion]
    return picked.sum()


def warm_start(model: Any, prompt: list[int], answers: list[list[int]]) -> list[float]:
    """Supervised steps until each answer has probability ≥ 0.3; their final probabilities."""
    import torch

    torch.manual_seed(0)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    model.train()
    for _ in range(300):
        loss = -sum(logprob(model, prompt, a) for a in answers)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        with torch.no_grad():
            probs = [math.exp(float(logprob(model, prompt, a))) for a in answers]
        if min(probs) >= 0.3:
            return probs
    raise AssertionError(f"warm start did not converge: {probs}")


@pytest.mark.parametrize("backend", ["grpo", "async_grpo"])
def test_grpo_through_pi_moves_the_policy_toward_the_verified_answer(
    qa_dataset: Path,
    models: dict[str, str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    backend: str,
) -> None:
    need_training()
    import torch
    from peft import PeftModel
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from trajforge.train.tiny import resolve

    monkeypatch.setenv("TRAJFORGE_MODELS", models["TRAJFORGE_MODELS"])
    tiny = resolve("tiny:qwen2")
    tokenizer = AutoTokenizer.from_pretrained(tiny)
    model = AutoModelForCausalLM.from_pretrained(tiny)
    prompt = pi_prompt(qa_dataset, model, tokenizer, tmp_path)
    right, wrong = answer_ids(tokenizer, RIGHT), answer_ids(tokenizer, WRONG)
    warm_start(model, prompt, [right, wrong])
    warm = tmp_path / "warm"
    model.save_pretrained(warm)
    tokenizer.save_pretrained(warm)

    sets = (
        f"model.base={json.dumps(str(warm))}", "dataset.configs=[]", 'dataset.families=["qa"]',
        "trainer.max_steps=3", "trainer.save_steps=10", "grpo.num_generations=4",
        "grpo.per_device_batch=4", "grpo.max_completion_length=8", "grpo.max_turns=2",
        "grpo.learning_rate=2e-3", "rollout.concurrency=2", "trainer.bf16=true",
        f'trainer.backend="{backend}"',
    )  # fmt: skip
    with ExitStack() as stack:
        if backend == "async_grpo":  # the warm model served with runtime LoRA, as vLLM would
            served = stack.enter_context(serving(
                {**os.environ, **models}, tmp_path / "serve.log", "--model", str(warm),
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

    base = AutoModelForCausalLM.from_pretrained(warm).eval()
    trained = PeftModel.from_pretrained(AutoModelForCausalLM.from_pretrained(warm), adapter).eval()
    with torch.no_grad():
        before = [float(logprob(base, prompt, a)) for a in (right, wrong)]
        after = [float(logprob(trained, prompt, a)) for a in (right, wrong)]
    for name, b, a in zip(("right", "wrong"), before, after, strict=True):
        print(f"log P({name}) {b:.2f} -> {a:.2f}")
    # GRPO's guarantee is relative: within a group the verified answer gains on the rejected
    # one. Probability mass may also move to answers nobody sampled, so the right answer's
    # own log-probability is not required to rise, only the margin and the wrong one's fall.
    gain = (after[0] - after[1]) - (before[0] - before[1])
    assert gain > 0.15, (before, after, rewards)  # seen: 0.37 to 1.44 (both backends)
    assert after[1] < before[1] - 0.05, (before, after, rewards)
