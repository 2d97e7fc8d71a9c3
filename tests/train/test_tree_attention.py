"""The plain-torch tree attention gives each packed sample exactly what a forward of that
sample alone gives (the check that lets AsyncGRPOTrainer train on a CPU)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.train.test_training import need_training


def _samples() -> list[list[int]]:
    prompt = list(range(10, 40))
    return [
        [*prompt, 50, 51, 52, 53],  # two rollouts of one prompt: the trie forks after it
        [*prompt, 60, 61, 62, 63, 64, 65],
        list(range(70, 90)),  # an unrelated sample: its own chain
    ]


def test_packed_forward_matches_each_sample_alone(
    models: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    need_training()
    import numpy as np
    import torch
    from transformers import AutoModelForCausalLM
    from trl.experimental.async_grpo.packing import TREE_ATTENTION, TreeRow

    from trajforge.train.tiny import resolve
    from trajforge.train.tree_attention import use_on_cpu

    monkeypatch.setenv("TRAJFORGE_MODELS", models["TRAJFORGE_MODELS"])
    if not use_on_cpu():
        pytest.skip("!! a GPU is present: TRL's own FlashAttention-3 kernel serves tree attention")
    from trl.experimental.async_grpo import async_grpo_trainer

    async_grpo_trainer.register_tree_attention()  # what AsyncGRPOTrainer calls when it is built
    folder: Path = resolve("tiny:qwen2")
    plain = AutoModelForCausalLM.from_pretrained(folder, attn_implementation="eager").eval()
    tree = AutoModelForCausalLM.from_pretrained(folder, attn_implementation=TREE_ATTENTION).eval()
    row = TreeRow()
    for i, ids in enumerate(_samples()):
        n = len(ids)
        row.add({"input_ids": np.array(ids), "completion_mask": np.ones(n, dtype=np.int64),
                 "old_log_probs": np.zeros(n, dtype=np.float32), "advantage": 0.0,
                 "group_id": i})  # fmt: skip
    packed = row.pack()
    assert len(packed["input_ids"]) < sum(map(len, _samples()))  # the shared prompt once
    with torch.no_grad():
        out = tree(
            input_ids=packed["input_ids"][None], position_ids=packed["position_ids"][None],
            tree_kv_index=packed["tree_kv_index"], tree_cu_seqlens_q=packed["tree_cu_seqlens_q"],
            tree_cu_seqlens_k=packed["tree_cu_seqlens_k"],
            tree_max_seqlen_q=int(packed["tree_max_seqlens"][0]),
            tree_max_seqlen_k=int(packed["tree_max_seqlens"][1]),
        ).logits[0]  # fmt: skip
        for i, ids in enumerate(_samples()):
            alone = plain(input_ids=torch.tensor([ids])).logits[0]
            # the packed positions of the sample's tokens but its last (the predecessors of
            # its trained tokens, every token being trained here)
            positions = packed["token_index"][packed["segment_id"] == i]
            assert len(positions) == len(ids) - 1
            assert torch.allclose(out[positions], alone[:-1], atol=1e-4), i
