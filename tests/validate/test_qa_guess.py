"""A keyed qa task must fail a guess: yes or no with the workspace's most frequent names.

The real case: the pi session in ``corpus/real/pi/rycerzes__trl`` asks "run_benchmark.sh will
run both grpo and asyncgrpo?" and its key is ``yes`` with the evidence ``vLLM``, taken from
``benchmarks/HANDOFF.md``. The workspace's five files name vLLM 64 times (as facts are found;
the next name, CUDA_VISIBLE_DEVICES, 17), so ``Yes. vLLM`` passed without reading the script.
The guess control finds that and rejects the task.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.validate.conftest import real_qa_task, validated_qa_task
from trajforge.reconstruct.facts import frequent_names, names_stated
from trajforge.records import AnswerKey, Control, ControlId, Fact
from trajforge.verifiers.answer_facts import MAX_NAMES, check_key
from trajforge.verifiers.validate.qa import check_task_answer
from trajforge.verifiers.validate.qa_key import GUESSABLE, guesses

REAL_PI = Path(__file__).parents[3] / "shared" / "corpus" / "real" / "pi" / "rycerzes__trl"
NOTES = "We serve with `vLLM`. vLLM is fast; VLLM again.\n" * 6 + "load_config, load_config\n"
CODE = "def merge_shards(parts):\n    # merge_shards sorts\n    return sorted(parts)\n"
CODE += "\nload_config()\n"


def _key(*required: tuple[str, str]) -> AnswerKey:
    facts = tuple(Fact(kind=k, value=v, grounded_in="file:notes.md") for k, v in required)  # type: ignore[arg-type]
    return AnswerKey(required=facts, others=(), focus=("polarity",))


@pytest.fixture()
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "notes.md").write_text(NOTES)
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "shards.py").write_text(CODE)
    (tmp_path / "blob.bin").write_bytes(b"\0vLLM_secret_name" * 10)
    return tmp_path


def test_frequent_names_rank_by_mentions_any_case(workspace: Path) -> None:
    texts = [NOTES, CODE]
    # 12 and 3 mentions: `vLLM` and vLLM alike (VLLM, all capitals, is not an identifier)
    assert frequent_names(texts, "identifier", 2) == ["vLLM", "load_config"]
    assert frequent_names(texts, "path", 5) == []
    assert frequent_names(["see `src/shards.py` and src/shards.py"], "path", 5) == ["src/shards.py"]


def test_a_key_whose_evidence_is_the_most_mentioned_name_is_passed_by_a_guess(
    workspace: Path,
) -> None:
    key = _key(("polarity", "yes"), ("identifier", "vLLM"))
    tried = {k.key: v for k, v in guesses(key, workspace).items()}
    assert set(tried) == {"guess:yes", "guess:no"}
    assert "vLLM_secret_name" not in tried["guess:yes"]  # binary files are not skimmed
    assert check_key(key, tried["guess:yes"]).passed  # the weakness the control exposes
    assert not check_key(key, tried["guess:no"]).passed


def test_a_key_with_specific_evidence_fails_the_guess(workspace: Path) -> None:
    key = _key(("polarity", "yes"), ("identifier", "merge_shards"))
    # three names in all: a guess lists every one, so in this workspace the key is guessable
    assert check_key(key, guesses(key, workspace)[ControlId(Control.GUESS, "yes")]).passed
    for n in range(MAX_NAMES):  # as many names as a guess may list, each mentioned more often
        (workspace / f"mod_{n}.md").write_text(f"`helper_{n}` " * 5)
    tried = {k.key: v for k, v in guesses(key, workspace).items()}
    assert "merge_shards" not in tried["guess:yes"] and "helper_0" in tried["guess:yes"]
    assert len(names_stated(tried["guess:yes"])) == MAX_NAMES  # the most the checker allows
    assert not any(check_key(key, answer).passed for answer in tried.values())
    right = "Yes: the shards are merged by merge_shards() in src/shards.py, sorted."
    assert check_key(key, right).passed  # a correct answer, worded unlike the recorded one


def test_a_key_without_names_has_no_guess(workspace: Path) -> None:
    assert guesses(_key(("polarity", "yes"), ("number", "8")), workspace) == {}


def test_the_real_yes_no_task_whose_evidence_is_guessable_is_rejected(tmp_path: Path) -> None:
    task = real_qa_task(REAL_PI, tmp_path / "out")
    assert task.instruction == "run_benchmark.sh will run both grpo and asyncgrpo?"
    assert check_task_answer(task, "Yes. vLLM").passed  # nine characters, no reading
    v = validated_qa_task(tmp_path / "out").validation
    assert v.status == "rejected"
    assert v.reasons[0].startswith(f"{GUESSABLE}: 'Yes. `vLLM`"), v.reasons
    assert len(v.reasons) == 1  # every other control behaved: the guess alone rejects it
    assert v.controls["guess:yes"].result == "pass" and v.controls["guess:no"].result == "fail"
    assert v.controls["oracle"].result == "pass" and v.controls["polarity:0"].result == "fail"
