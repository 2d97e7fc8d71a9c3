"""The demo's warm start, piece by piece (its whole run is in test_learning and test_demo):
which answers it teaches, the batched log-probabilities it fits, and the library-noise filter
around training."""

from __future__ import annotations

import warnings
from importlib.util import find_spec
from pathlib import Path

import pytest

from trajforge.errors import UsageError
from trajforge.reconstruct import pipeline
from trajforge.records import Task, load_record
from trajforge.train.quiet import quiet_libraries

SESSIONS = Path(__file__).resolve().parents[1] / "fixtures" / "sessions" / "pi"


def need_training() -> None:
    missing = [m for m in ("torch", "transformers", "tokenizers") if find_spec(m) is None]
    if missing:
        pytest.skip(f"!! training extra missing ({missing}): pip install -e '.[train]'")


def _task(tmp_path: Path, session: str, family: str) -> Task:
    pipeline.run([SESSIONS / session], tmp_path)
    (task_json,) = (tmp_path / "tasks").glob(f"{family}-*/task.json")
    return load_record(Task, task_json)


def test_answers_are_the_verified_total_and_the_nearest_rejected_miss(tmp_path: Path) -> None:
    need_training()
    from transformers import AutoTokenizer

    from trajforge.train.tiny import build
    from trajforge.train.warmstart import pick_answers
    from trajforge.verifiers.validate.verify import verify_answer

    task = _task(tmp_path, "qa.jsonl", "qa")
    tokenizer = AutoTokenizer.from_pretrained(build("qwen2", tmp_path / "tiny"))  # as trained
    right, wrong = pick_answers(task, tokenizer)
    assert right == "136.50"  # the session's final answer
    # of 137.87, 135.13, 137.50, 135.50, 146.50 (one token per digit): the first one digit off
    assert wrong == "137.50"
    assert verify_answer(task, right).passed and not verify_answer(task, wrong).passed
    repair = _task(tmp_path / "r", "repair.jsonl", "repair")
    with pytest.raises(UsageError, match="not qa"):
        pick_answers(repair, tokenizer)


def test_batched_logprobs_equal_one_forward_per_answer() -> None:
    need_training()
    import torch
    from transformers import AutoModelForCausalLM

    from trajforge.train.tiny import build_tokenizer, model_config
    from trajforge.train.warmstart import logprobs

    tokenizer = build_tokenizer()
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(model_config("qwen2", len(tokenizer), tokenizer))
    prompt, answers = list(range(10, 400)), [[5, 6, 7, 8], [5, 9]]  # different lengths
    with torch.no_grad():
        batched = logprobs(model, prompt, answers)
        for row, answer in zip(batched, answers, strict=True):
            logits = model(torch.tensor([prompt + answer])).logits[0, len(prompt) - 1 : -1]
            alone = torch.log_softmax(logits.float(), -1)[torch.arange(len(answer)), answer]
            assert float(row) == pytest.approx(float(alone.sum()), abs=1e-4)


def _warn(module: str, category: type[Warning]) -> None:
    message = "test_warmstart: a renamed argument"  # "once" remembers a message per process
    warnings.warn_explicit(message, category, f"{module}.py", 1, module=module)


def test_library_deprecations_dropped_ours_kept() -> None:
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with quiet_libraries():
            _warn("transformers.modeling_utils", FutureWarning)
            _warn("trl.trainer.grpo_trainer", DeprecationWarning)
            _warn("peft.tuners", UserWarning)
            _warn("peft.tuners", UserWarning)  # shown once
            _warn("trajforge.train.trainer", FutureWarning)  # ours: never hidden
            _warn("transformersfake", FutureWarning)  # not a library the filter names
    kept = [(w.filename, w.category) for w in seen]
    assert kept == [
        ("peft.tuners.py", UserWarning),
        ("trajforge.train.trainer.py", FutureWarning),
        ("transformersfake.py", FutureWarning),
    ]
