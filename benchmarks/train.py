"""Training loop costs: policy serving, the capture proxy, and one tiny GRPO run.

    python benchmarks/train.py [--turns 20] [--steps 2] [--processes 2]

1. Policy server: one chat turn over HTTP (render + generate + logprobs + JSON) vs the anchor,
   a bare ``model.generate`` of the same prompt and length on the same tiny model.
2. Capture proxy: a chat turn through the capture proxy vs straight to the policy server.
3. A 2-step GRPO run of ``examples/train-tiny-cpu.toml`` through the real pi harness, split into
   rollout time (harness + policy + verifier) and trainer time, from ``rollouts.jsonl`` and
   TRL's step log. Needs a dataset: run ``trajforge demo`` first (``demo-out/dataset``).
4. With ``--processes N`` (N > 1): the same run launched by ``torchrun`` as N training processes
   (gloo on CPU; each rank runs its own rollouts), rollouts per second beside the one-process
   run (the anchor).
5. With ``--async-grpo``: the same run with ``trainer.backend = "async_grpo"`` against a
   ``trajforge serve --enable-lora`` it starts (generation overlapping training), seconds per
   optimizer step (TRL's ``train_runtime`` / steps) beside the ``grpo`` run (the anchor).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "bash",
            "description": "Run a shell command in the workspace.",
            "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
        },
    }
]
MESSAGES = [
    {"role": "system", "content": "You are a coding agent. " * 200},
    {"role": "user", "content": "The tests fail. Fix the bug in calc.py."},
]
NEW_TOKENS = 32


def serving(turns: int) -> None:
    import torch
    from openai import OpenAI

    from trajforge.train.capture import CaptureProxy
    from trajforge.train.policy_server import PolicyServer
    from trajforge.train.serving import load_policy

    policy = load_policy("tiny:qwen2", seed=0)
    ids = policy.tokenizer(policy.render(MESSAGES, TOOLS), add_special_tokens=False)["input_ids"]
    bare = []
    for _ in range(turns):
        start = time.perf_counter()
        with torch.no_grad():
            policy.model.generate(
                input_ids=torch.tensor([ids]), attention_mask=torch.ones_like(torch.tensor([ids])),
                max_new_tokens=NEW_TOKENS, do_sample=True, top_k=None, top_p=None,
                pad_token_id=policy.tokenizer.pad_token_id,
            )  # fmt: skip
        bare.append(time.perf_counter() - start)
    with PolicyServer(policy) as server:
        capture = CaptureProxy(server.base_url, 1.0, NEW_TOKENS, max_turns=10**6)
        url = capture.serve()
        direct = _turns(OpenAI(base_url=server.base_url, api_key="b"), turns)
        captured = _turns(OpenAI(base_url=url, api_key="bench"), turns)
        capture.close()
    med = statistics.median
    print(f"prompt {len(ids)} tokens, up to {NEW_TOKENS} new tokens, median of {turns} turns")
    print(f"  bare model.generate (anchor)     {med(bare) * 1000:8.1f} ms")
    print(f"  policy server over HTTP          {med(direct) * 1000:8.1f} ms "
          f"(+{(med(direct) - med(bare)) * 1000:.1f} ms)")  # fmt: skip
    print(f"  through the capture proxy        {med(captured) * 1000:8.1f} ms "
          f"(+{(med(captured) - med(direct)) * 1000:.1f} ms over direct)")  # fmt: skip


def _turns(client: object, turns: int) -> list[float]:
    times = []
    for _ in range(turns):
        start = time.perf_counter()
        client.chat.completions.create(  # type: ignore[attr-defined]
            model="tiny", messages=MESSAGES, tools=TOOLS, max_tokens=NEW_TOKENS
        )
        times.append(time.perf_counter() - start)
    return times


def grpo_run(steps: int, processes: int = 1, *extra: str) -> float | None:
    """One GRPO run (``extra``: more ``--set`` items); rollouts per second of TRL step time
    (None if it could not run). Prints seconds per optimizer step too."""
    dataset = REPO / "demo-out" / "dataset"
    if not dataset.is_dir():
        print("(skipping the GRPO run: no demo-out/dataset — run `trajforge demo` first)")
        return None
    launch = [sys.executable]
    if processes > 1:
        launch += ["-m", "torch.distributed.run", "--nproc_per_node", str(processes)]
    with tempfile.TemporaryDirectory(prefix="bench-train-") as tmp:
        argv = [*launch, "-m", "trajforge.cli.main", "train", "--config",
                str(REPO / "examples" / "train-tiny-cpu.toml"), "--output-dir", tmp, "--json",
                "--set", f"dataset.path={json.dumps(str(dataset))}",
                "--set", f"trainer.max_steps={steps}"]  # fmt: skip
        for item in extra:
            argv += ["--set", item]
        start = time.perf_counter()
        proc = subprocess.run(argv, capture_output=True, text=True, check=False, cwd=REPO)
        wall = time.perf_counter() - start
        if proc.returncode != 0:
            print(f"GRPO run failed ({proc.returncode}): {proc.stderr[-1500:]}")
            return None
        doc = json.loads(proc.stdout)
        rollouts = [json.loads(line) for line in
                    (Path(doc["adapter"]) / "rollouts.jsonl").read_text().splitlines()]  # fmt: skip
        log = doc["metrics"]["trainer_log"]
    runtime = next(float(h["train_runtime"]) for h in log if "train_runtime" in h)
    step_time = sum(float(h.get("step_time", h.get("perf/step_s", 0.0))) for h in log) or runtime
    harness = sum(r["wall_s"] for r in rollouts)
    backend = "async_grpo" if any("async_grpo" in item for item in extra) else "grpo"
    print(f"{backend}: {steps} steps in {processes} process(es), "
          f"{len(rollouts)} rollouts through pi: {wall:.1f} s wall in all, "
          f"{runtime / steps:.1f} s per optimizer step")  # fmt: skip
    print(f"  harness processes (sum)   {harness:8.1f} s ({harness / len(rollouts):.1f} s each)")
    print(f"  TRL steps incl. rollouts         {step_time:8.1f} s")
    print(f"  start-up (imports, model, tasks) {wall - runtime:8.1f} s")
    return len(rollouts) / step_time


def async_run(steps: int) -> float | None:
    """The same run with async_grpo against a ``trajforge serve`` it starts."""
    sys.path.insert(0, str(REPO))
    from tests.support.serve import serving as serve

    with tempfile.TemporaryDirectory(prefix="bench-serve-") as tmp:
        args = ("--model", "tiny:qwen2", "--enable-lora", "--max-loras", "6", "--port", "0")
        with serve(dict(os.environ), Path(tmp) / "serve.log", *args) as ready:
            return grpo_run(steps, 1, 'trainer.backend="async_grpo"',
                            f"trainer.vllm_url={json.dumps(ready['url'])}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--processes", type=int, default=1)
    parser.add_argument("--async-grpo", action="store_true")
    args = parser.parse_args()
    os.environ.setdefault("TRAJFORGE_MODELS", str(Path(tempfile.gettempdir()) / "trajforge-models"))
    serving(args.turns)
    one = grpo_run(args.steps)
    if args.processes > 1 and one:
        many = grpo_run(args.steps, args.processes)
        if many:
            print(f"rollouts/s of step time: {args.processes} processes {many:.2f} vs "
                  f"one {one:.2f} ({many / one:.2f}x; anchor: one process)")  # fmt: skip
    if args.async_grpo:
        async_run(args.steps)


if __name__ == "__main__":
    main()
