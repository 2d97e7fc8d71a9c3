"""Tiny random causal LMs built locally (no download) for CPU smoke runs and tests.

``tiny:qwen2`` and ``tiny:lfm2`` name a model that is built on first use into
``$TRAJFORGE_MODELS`` (default ``~/.cache/trajforge/models``): a byte-level BPE tokenizer
trained on the bundled sample sessions, a chat template that renders tools and tool calls the
way Qwen2 does (``<tool_call>{json}</tool_call>``), and random weights from a fixed seed. The
same toolkit version builds the same bytes, so the revision (sha256 of the weights) is stable.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

PREFIX = "tiny:"
ARCHES = ("qwen2", "lfm2")
VOCAB = 4096
SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>"]
CHAT_TEMPLATE = (
    "{% if tools %}<|im_start|>system\n"
    "{% if messages[0].role == 'system' %}{{ messages[0].content }}\n\n{% endif %}"
    "# Tools\n<tools>\n{% for tool in tools %}{{ tool | tojson }}\n{% endfor %}</tools>\n"
    'Call a tool as <tool_call>{"name": NAME, "arguments": {...}}</tool_call><|im_end|>\n'
    "{% elif messages[0].role == 'system' %}"
    "<|im_start|>system\n{{ messages[0].content }}<|im_end|>\n{% endif %}"
    "{% for m in messages %}"
    "{% if m.role == 'user' %}<|im_start|>user\n{{ m.content }}<|im_end|>\n"
    "{% elif m.role == 'assistant' %}<|im_start|>assistant\n"
    "{% if m.content %}{{ m.content }}{% endif %}"
    "{% for call in m.tool_calls or [] %}<tool_call>"
    '{"name": {{ call.function.name | tojson }}, '
    '"arguments": {{ call.function.arguments | tojson }}}'
    "</tool_call>{% endfor %}<|im_end|>\n"
    "{% elif m.role == 'tool' %}<|im_start|>user\n<tool_response>\n{{ m.content }}\n"
    "</tool_response><|im_end|>\n{% endif %}"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
"""Qwen2-style chat template: system + tools, user / assistant (with tool calls) / tool turns."""


def is_tiny(name: str) -> bool:
    """Whether ``name`` names a locally built tiny model."""
    return name.startswith(PREFIX)


def models_dir() -> Path:
    """Where tiny models are built."""
    env = os.environ.get("TRAJFORGE_MODELS")
    return Path(env) if env else Path.home() / ".cache" / "trajforge" / "models"


def resolve(name: str) -> Path:
    """The folder of ``tiny:ARCH`` (built on first use)."""
    arch = name.removeprefix(PREFIX)
    if arch not in ARCHES:
        from trajforge.errors import UsageError

        raise UsageError(f"base model {name!r}: unknown tiny model (known: tiny:qwen2, tiny:lfm2)")
    folder = models_dir() / f"tiny-{arch}"
    if not (folder / "model.safetensors").is_file():
        build(arch, folder)
    return folder


def weights_revision(folder: Path) -> str:
    """``sha256:<hex>`` over the model's safetensors files (a local model's revision)."""
    digest = hashlib.sha256()
    for path in sorted(folder.glob("*.safetensors")):
        digest.update(path.read_bytes())
    return f"sha256:{digest.hexdigest()}"


def _corpus() -> list[str]:
    samples = Path(__file__).resolve().parents[1] / "trajforge" / "samples"
    if not samples.is_dir():
        import trajforge

        samples = Path(trajforge.__file__).parent / "samples"
    texts = [p.read_text(errors="replace") for p in sorted(samples.rglob("*")) if p.is_file()]
    texts = [t for t in texts if t.strip()]
    return texts or ["def add(a, b):\n    return a + b\n"]


def build_tokenizer() -> Any:
    """A byte-level BPE tokenizer trained on the bundled samples, with the chat template."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB,
        special_tokens=SPECIAL,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(_corpus(), trainer=trainer)
    return PreTrainedTokenizerFast(
        tokenizer_object=tok,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        bos_token=None,
        chat_template=CHAT_TEMPLATE,
    )


def model_config(arch: str, vocab: int, tokenizer: Any) -> Any:
    """A few-layer config of ``arch`` sized for a CPU (long context: harness prompts are big)."""
    ids = {
        "pad_token_id": tokenizer.pad_token_id,
        "eos_token_id": tokenizer.eos_token_id,
        "bos_token_id": None,
    }
    if arch == "qwen2":
        from transformers import Qwen2Config

        return Qwen2Config(
            vocab_size=vocab, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
            num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=65536,
            tie_word_embeddings=True, **ids,
        )  # fmt: skip
    from transformers import Lfm2Config

    return Lfm2Config(
        vocab_size=vocab, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=65536,
        layer_types=["conv", "full_attention"], block_auto_adjust_ff_dim=False,
        tie_word_embeddings=True, **ids,
    )  # fmt: skip


def build(arch: str, folder: Path) -> Path:
    """Build ``tiny:arch`` into ``folder`` (tokenizer, config, seeded random weights)."""
    import torch
    from transformers import AutoModelForCausalLM

    from trajforge.train.quiet import quiet_libraries

    log.info("building tiny:%s into %s", arch, folder)
    tokenizer = build_tokenizer()
    config = model_config(arch, len(tokenizer), tokenizer)
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(config)
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    tmp = folder.with_name(folder.name + f".tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    with quiet_libraries(progress=False):
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
    shutil.rmtree(folder, ignore_errors=True)
    tmp.replace(folder)
    return folder
