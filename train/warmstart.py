"""The demo's warm start: a tiny random model taught to answer one QA task right or wrong.

A random tiny model never solves a task, so every GRPO group's rewards are equal
(``reward_std 0``, ``loss 0``, ``grad_norm 0``) and GRPO has nothing to learn from. The warm
start gives it something to choose between, openly: plain supervised steps on the exact prompt
the harness sends for a QA task (captured from one probe rollout through the harness, placed as
training places it), toward two answers — the reference answer's value, and a near miss that the
task's verifier rejects — until each has probability ≥ ``MIN_PROB``. GRPO then samples both, the
verifier tells them apart, the rewards inside a group differ, and the loss has a gradient.

This shows the learning signal reaching the adapter; it is not a model solving tasks (the warm
start was shown the verified answer). ``trajforge demo`` uses it; so does
``tests/train/test_learning.py``.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import tempfile
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from trajforge.errors import UsageError
from trajforge.records import Budget, Task
from trajforge.registry import SANDBOXES, create
from trajforge.taskdir import load_task
from trajforge.train.config import TrainConfig
from trajforge.train.quiet import quiet_libraries
from trajforge.train.rollout_spec import HarnessSandbox, RolloutSetup, setup_for, spec_for

log = logging.getLogger(__name__)

MIN_PROB = 0.3
"""Probability each of the two answers must reach: with both ≥ 0.3 a group of 4 samples mixes
right and wrong answers ~85 % of the time (all-equal groups carry no GRPO signal)."""
MAX_STEPS = 300
"""Supervised steps at most (the tiny Qwen2 takes 38 on pi's prompt for the samples' QA task)."""
LEARNING_RATE = 5e-3
"""AdamW learning rate of the warm start: on that prompt 3e-3 takes 55 steps, 8e-3 overshoots
(46); a 2-layer, 64-wide model takes large steps safely."""
PROBE_TOKENS = 4
"""Tokens the probe rollout lets the model sample (only the prompt it was sent matters)."""
PROBE_BUDGET = Budget(max_steps=2, timeout_s=120)
"""The probe rollout's budget: one policy turn is all it needs (the prompt of the first)."""
SEED = 0
"""Seed of the warm start and of the near-miss choice."""


class WarmStart(BaseModel):
    """A warm-started model and what it was taught."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str
    """Folder of the warm-started model (weights + tokenizer)."""
    task: str
    """Id of the QA task whose prompt it was taught on."""
    right: str
    """The answer the verifier accepts."""
    wrong: str
    """The near miss the verifier rejects."""
    probs: tuple[float, float]
    """P(right), P(wrong) after the warm start, at temperature 1."""
    steps: int
    """Supervised steps taken."""
    prompt_tokens: int
    """Length of the harness's prompt."""


def pick_answers(task: Task, tokenizer: Any) -> tuple[str, str]:
    """(right, wrong): the reference value, and of the near misses the task's verifier rejects
    the one fewest tokens away from it (one token to learn apart, so the warm start is short)."""
    from trajforge.verifiers.answer import extract_answer, perturbed_answers
    from trajforge.verifiers.validate.qa import expected_answer
    from trajforge.verifiers.validate.verify import verify_answer

    if task.family != "qa":
        raise UsageError(f"warm start: task {task.id} is a {task.family} task, not qa")
    expected = expected_answer(task)
    right = extract_answer(expected)
    if not right or not verify_answer(task, right).passed:
        raise UsageError(f"warm start: task {task.id}: its verifier rejects its own answer")
    wrong = [w for w in perturbed_answers(expected, SEED) if not verify_answer(task, w).passed]
    if not wrong:
        raise UsageError(f"warm start: task {task.id}: no near miss of {right!r} is rejected")
    ids = [answer_ids(tokenizer, w) for w in wrong]
    return right, wrong[closest(answer_ids(tokenizer, right), ids)]


def probe_setup(harness: str, placement: HarnessSandbox) -> RolloutSetup:
    """The probe rollout's setup: ``harness`` placed as ``placement`` says (as training places
    it: the prompt names its cwd), two turns, the verifier in the local sandbox."""
    sandbox = create(SANDBOXES, "local", "sandbox")
    return setup_for(harness, sandbox, PROBE_BUDGET, placement)


def probe_prompt(setup: RolloutSetup, task_dir: Path, model: Any, tokenizer: Any) -> list[int]:
    """The token ids of the harness's first request on the task, as the policy server renders
    them (the harness placed as ``setup`` places it)."""
    from trajforge.train.capture import CaptureProxy
    from trajforge.train.policy_server import Policy, PolicyServer
    from trajforge.train.rollout import run_rollout

    setup = dataclasses.replace(setup, budget=PROBE_BUDGET)
    with PolicyServer(Policy(model, tokenizer, max_tokens=PROBE_TOKENS)) as server:
        capture = CaptureProxy(server.base_url, 1.0, PROBE_TOKENS, max_turns=1)
        try:
            spec = spec_for(setup, task_dir, capture.serve(), "policy", "warm-start-probe")
            run_rollout(spec)
            turns, _ = capture.take("warm-start-probe")
        finally:
            capture.close()
    if not turns:
        name = setup.harness.name
        raise UsageError(f"warm start: {name} never asked the policy on {task_dir.name}")
    return list(turns[0].prompt_ids)


def answer_ids(tokenizer: Any, text: str) -> list[int]:
    """The completion ``text`` then end-of-turn, as the model would sample it."""
    return [*tokenizer(text, add_special_tokens=False)["input_ids"], tokenizer.eos_token_id]


def logprobs(model: Any, prompt: list[int], completions: list[list[int]]) -> Any:
    """log P(completion | prompt) of each completion at temperature 1 (a differentiable tensor,
    one per completion). The prompt runs once (its key/value cache shared by every completion):
    it is thousands of tokens, the completions a few."""
    import torch

    width = max(len(c) for c in completions)
    rows = [c + [c[-1]] * (width - len(c)) for c in completions]  # right padding, masked below
    name = _cache_name(model)
    head = model(input_ids=torch.tensor([prompt[:-1]]), use_cache=True, logits_to_keep=1)
    cache = head[name]
    cache.batch_repeat_interleave(len(rows))
    tail = torch.tensor([[prompt[-1], *row] for row in rows])  # prompt[-1] predicts row[0]
    logits = model(input_ids=tail, **{name: cache}).logits[:, :-1].float()
    picked = torch.log_softmax(logits, dim=-1).gather(-1, torch.tensor(rows)[..., None])[..., 0]
    mask = torch.tensor([[i < len(c) for i in range(width)] for c in completions])
    return (picked * mask).sum(dim=-1)


def _cache_name(model: Any) -> str:
    """``cache`` (transformers ≥ 5.2x) or ``past_key_values`` (earlier 5.x, deprecated later)."""
    import inspect

    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    return "cache" if "cache" in inspect.signature(base.forward).parameters else "past_key_values"


def closest(right: list[int], candidates: list[list[int]]) -> int:
    """Index of the candidate fewest token edits (insert, delete, substitute) from ``right``."""

    def distance(other: list[int]) -> int:
        row = list(range(len(other) + 1))
        for i, a in enumerate(right, 1):
            prev, row[0] = row[0], i
            for j, b in enumerate(other, 1):
                prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (a != b))
        return row[-1]

    return min(range(len(candidates)), key=lambda i: distance(candidates[i]))


def fit(model: Any, prompt: list[int], answers: list[list[int]]) -> tuple[list[float], int]:
    """Supervised steps until every answer has probability ≥ ``MIN_PROB``: (probs, steps)."""
    import torch

    torch.manual_seed(SEED)
    optimizer = torch.optim.AdamW(model.parameters(), lr=LEARNING_RATE)
    model.train()
    probs: list[float] = []
    for step in range(MAX_STEPS + 1):
        scores = logprobs(model, prompt, answers)
        probs = [math.exp(float(x)) for x in scores.detach()]
        if min(probs) >= MIN_PROB:  # measured on the weights that are saved
            model.eval()
            return probs, step
        if step == MAX_STEPS:
            break
        optimizer.zero_grad()
        (-scores.sum()).backward()
        optimizer.step()
    raise UsageError(f"warm start did not converge in {MAX_STEPS} steps: probabilities {probs}")


def warm_start(base: Path, task_dir: Path, setup: RolloutSetup, out: Path) -> WarmStart:
    """Warm-start the model in ``base`` on the QA task in ``task_dir`` (probed through
    ``setup``'s harness, placed as it says); save it to ``out``."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    task = load_task(task_dir)
    with quiet_libraries(progress=False):
        tokenizer = AutoTokenizer.from_pretrained(base)
        right, wrong = pick_answers(task, tokenizer)
        model = AutoModelForCausalLM.from_pretrained(base)
        prompt = probe_prompt(setup, task_dir, model, tokenizer)
        answers = [answer_ids(tokenizer, right), answer_ids(tokenizer, wrong)]
        probs, steps = fit(model, prompt, answers)
        model.save_pretrained(out)
        tokenizer.save_pretrained(out)
    log.info("warm start: P(%s)=%.2f P(%s)=%.2f after %d steps", right, probs[0], wrong, probs[1],
             steps)  # fmt: skip
    return WarmStart(
        model=str(out), task=task.id, right=right, wrong=wrong,
        probs=(round(probs[0], 4), round(probs[1], 4)), steps=steps, prompt_tokens=len(prompt),
    )  # fmt: skip


def warm_config(config: TrainConfig, out: Path) -> tuple[TrainConfig, WarmStart]:
    """``config`` with its base model warm-started (into ``out``) on the one QA task its dataset
    settings select, the harness placed as ``config`` places it; and what it was taught."""
    from trajforge.train.trainer import load_tasks, resolve_model

    setup = probe_setup(config.harness, config.rollout.harness_sandbox)
    path, _ = resolve_model(config)
    with tempfile.TemporaryDirectory(prefix="trajforge-warm-") as tmp:
        tasks = load_tasks(config, Path(tmp))
        if len(tasks) != 1:
            raise UsageError(f"warm start: the dataset settings select {len(tasks)} tasks, not 1")
        (task_dir,) = tasks.values()
        warm = warm_start(Path(path), task_dir, setup, out.resolve())
    model = config.model.model_copy(update={"base": warm.model, "revision": None})
    return config.model_copy(update={"model": model}), warm
