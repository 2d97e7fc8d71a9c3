"""TRL's tree-packed attention in plain torch, so ``AsyncGRPOTrainer`` can train on a CPU.

TRL 1.16's AsyncGRPOTrainer loads the model with the ``tree_fa3`` attention, which calls the
FlashAttention-3 kernel (downloaded with ``kernels``; CUDA only) through
``flash_attn_varlen_func``. :func:`tree_attention` computes the same thing with matrix products:
each packed segment's queries attend, causally and aligned bottom-right as FlashAttention aligns
them, to that segment's keys gathered through ``tree_kv_index``. :func:`use_on_cpu` registers it
under TRL's name when no GPU is present; on a GPU TRL's kernel stays.

This is the one place trajforge reaches into TRL's module namespace: a CPU run of the
``async_grpo`` backend (CI, a laptop) exists only through it.
"""

from __future__ import annotations

from itertools import pairwise
from typing import Any


def tree_attention(
    module: Any,
    query: Any,
    key: Any,
    value: Any,
    attention_mask: Any,
    *,
    tree_kv_index: Any,
    tree_cu_seqlens_q: Any,
    tree_cu_seqlens_k: Any,
    scaling: float | None = None,
    sliding_window: int | None = None,
    softcap: float | None = None,
    **_: Any,
) -> tuple[Any, None]:
    """``flash_attn_varlen_func(causal=True)`` over packed segments, as TRL calls it."""
    import torch

    q, k, v = (x.transpose(1, 2)[0] for x in (query, key, value))  # (tokens, heads, dim)
    k, v = k.index_select(0, tree_kv_index), v.index_select(0, tree_kv_index)
    scale = scaling if scaling is not None else q.shape[-1] ** -0.5
    repeat = q.shape[1] // k.shape[1]  # grouped-query attention
    out = torch.empty_like(q)
    bounds_q, bounds_k = tree_cu_seqlens_q.tolist(), tree_cu_seqlens_k.tolist()
    for (q0, q1), (k0, k1) in zip(pairwise(bounds_q), pairwise(bounds_k), strict=True):
        qs = q[q0:q1].transpose(0, 1).float()
        ks = k[k0:k1].transpose(0, 1).repeat_interleave(repeat, 0).float()
        vs = v[k0:k1].transpose(0, 1).repeat_interleave(repeat, 0).float()
        scores = qs @ ks.transpose(-1, -2) * scale
        if softcap:
            scores = softcap * torch.tanh(scores / softcap)
        rows = torch.arange(q1 - q0)[:, None] + ((k1 - k0) - (q1 - q0))
        cols = torch.arange(k1 - k0)[None, :]
        allowed = cols <= rows
        if sliding_window:
            allowed &= cols > rows - sliding_window
        scores = scores.masked_fill(~allowed, float("-inf"))
        out[q0:q1] = (torch.softmax(scores, dim=-1) @ vs).transpose(0, 1).to(out.dtype)
    return out.unsqueeze(0), None


def use_on_cpu() -> bool:
    """Let TRL's AsyncGRPOTrainer run without a GPU (call before building it); False on a GPU.

    Two spots in TRL 1.16 assume CUDA: the ``tree_fa3`` attention (served here by
    :func:`tree_attention`) and the MFU metric's device lookup (``torch.cuda.get_device_name``;
    here no peak FLOPs, so TRL skips MFU as it does for an unknown device).
    """
    import torch

    if torch.cuda.is_available():
        return False
    from transformers import AttentionInterface, masking_utils
    from trl.experimental.async_grpo import async_grpo_trainer
    from trl.experimental.async_grpo.packing import TREE_ATTENTION

    def register() -> None:
        AttentionInterface.register(TREE_ATTENTION, tree_attention)
        masking_utils.AttentionMaskInterface.register(TREE_ATTENTION, lambda **_: None)

    async_grpo_trainer.register_tree_attention = register
    async_grpo_trainer.get_peak_flops_per_device = lambda *_: None
    return True
