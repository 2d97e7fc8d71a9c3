"""The CPU policy server and the capture proxy: token ids, logprobs, tool calls, stitching.

A tiny Qwen2 is built locally (no download) and served through the real ``openai`` client.
"""

from __future__ import annotations

import json
import math
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import pytest

from trajforge.train.capture import CaptureProxy, Turn, stitch
from trajforge.train.chat import for_template, parse_reply

if find_spec("torch") is None or find_spec("transformers") is None:
    pytest.skip(
        "!! torch / transformers missing: pip install -e '.[train]'", allow_module_level=True
    )

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "bash",
            "description": "Run a shell command.",
            "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
        },
    }
]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Any:
    import os

    os.environ["TRAJFORGE_MODELS"] = str(tmp_path_factory.mktemp("models"))
    from trajforge.train.serving import load_policy

    return load_policy("tiny:qwen2", seed=3)


def test_parse_reply_pulls_out_tool_calls() -> None:
    text = 'Let me look.<tool_call>{"name": "bash", "arguments": {"command": "ls"}}</tool_call>'
    message = parse_reply(text, "call_1")
    assert message["content"] == "Let me look."
    call = message["tool_calls"][0]
    assert call["function"]["name"] == "bash"
    assert json.loads(call["function"]["arguments"]) == {"command": "ls"}
    assert parse_reply("<tool_call>{not json}</tool_call>", "c")["content"].startswith(
        "<tool_call>"
    )
    assert "tool_calls" not in parse_reply("plain answer", "c")


def test_messages_for_the_template() -> None:
    function = {"name": "bash", "arguments": '{"command": "ls"}'}
    messages = [
        {"role": "developer", "content": [{"type": "text", "text": "be brief"}]},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "function": function}]},
    ]
    out = for_template(messages)
    assert out[0] == {"role": "system", "content": "be brief"}
    assert out[1]["tool_calls"][0]["function"]["arguments"] == {"command": "ls"}


def test_server_returns_engine_tokens_and_logprobs(tiny: Any) -> None:
    from openai import OpenAI

    from trajforge.train.policy_server import PolicyServer

    with PolicyServer(tiny, model_name="tiny") as server:
        client = OpenAI(base_url=server.base_url, api_key="x")
        messages = [
            {"role": "system", "content": "You are a coder."},
            {"role": "user", "content": "hi"},
        ]
        reply = client.chat.completions.create(
            model="tiny",
            messages=messages,
            tools=TOOLS,
            max_tokens=12,
            temperature=1.0,  # type: ignore[arg-type]
        )
        choice = reply.choices[0]
        extra = choice.model_extra or {}
        prompt_ids = (reply.model_extra or {})["prompt_token_ids"]
        rendered = tiny.render(messages, TOOLS)
        assert prompt_ids == tiny.tokenizer(rendered, add_special_tokens=False)["input_ids"]
        assert 1 <= len(extra["token_ids"]) <= 12
        assert choice.logprobs is not None and choice.logprobs.content is not None
        logprobs = [c.logprob for c in choice.logprobs.content]
        assert len(logprobs) == len(extra["token_ids"]) and all(lp <= 0 for lp in logprobs)
        assert choice.finish_reason in ("stop", "length", "tool_calls")
        stream = client.chat.completions.create(
            model="tiny",
            messages=messages,
            max_tokens=6,
            stream=True,  # type: ignore[arg-type]
        )
        assert any(chunk.choices and chunk.choices[0].finish_reason for chunk in stream)


def test_logprobs_match_a_forward_pass(tiny: Any) -> None:
    import torch

    generated = tiny.generate([{"role": "user", "content": "add two numbers"}], None, 0.7, 8)
    ids = torch.tensor([generated.prompt_ids + generated.completion_ids])
    with torch.no_grad():
        logits = tiny.model(ids).logits[0, len(generated.prompt_ids) - 1 : -1] / 0.7
    expected = torch.log_softmax(logits.float(), dim=-1)
    for pos, (token, logprob) in enumerate(
        zip(generated.completion_ids, generated.logprobs, strict=True)
    ):
        assert math.isclose(float(expected[pos, token]), logprob, abs_tol=1e-4)


def test_capture_strips_sampling_and_stitches_real_template_turns(tiny: Any) -> None:
    """Two turns rendered by the real chat template: the second extends the first."""
    from trajforge.train.policy_server import PolicyServer

    capture = CaptureProxy("http://127.0.0.1:1/v1", temperature=0.5, max_tokens=7, max_turns=2)
    body = capture.request_body(
        {"messages": [], "tools": TOOLS, "top_p": 0.1, "seed": 4, "temperature": 2, "stop": ["x"]}
    )
    assert body["temperature"] == 0.5 and body["max_tokens"] == 7
    assert not {"top_p", "seed", "stop"} & set(body)

    tokenizer = tiny.tokenizer
    call = '<tool_call>{"name": "bash", "arguments": {"command": "ls"}}</tool_call>'
    first = [{"role": "user", "content": "list files"}]
    p0 = tokenizer(tiny.render(first, TOOLS), add_special_tokens=False)["input_ids"]
    c0 = tokenizer(call, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
    message = parse_reply(call, "call_0")
    second = [*first, message, {"role": "tool", "tool_call_id": "call_0_0", "content": "a.py"}]
    p1 = tokenizer(tiny.render(second, TOOLS), add_special_tokens=False)["input_ids"]
    row = stitch(
        [Turn(p0, c0, [-1.0] * len(c0), "tool_calls"), Turn(p1, [5, 6], [-0.1, -0.2], "stop")]
    )
    assert row is not None and not row.broken and row.turns == 2
    assert row.prompt_ids == p0
    assert row.completion_ids[: len(c0)] == c0 and row.completion_ids[-2:] == [5, 6]
    masked = [t for t, m in zip(row.completion_ids, row.env_mask, strict=True) if m == 0]
    assert "a.py" in tokenizer.decode(masked)
    assert sum(row.env_mask) == len(c0) + 2

    cut = stitch(
        [Turn(p0, c0, [-1.0] * len(c0), "tool_calls"), Turn(p1, [5, 6], [-0.1, -0.2], "stop")],
        limit=3,
    )
    assert cut is not None and cut.truncated and len(cut.completion_ids) == len(cut.env_mask) == 3
    rewritten = Turn([1, 2, 3], [4], [-0.3], "stop")
    assert stitch([Turn(p0, c0, [-1.0] * len(c0), "stop"), rewritten]).broken  # type: ignore[union-attr]

    with PolicyServer(tiny) as server:
        capture.point_to(server.base_url)
        for _ in range(3):
            capture.handle("r1", {"messages": first, "tools": TOOLS})
        turns, cut = capture.take("r1")
    assert len(turns) == 2 and cut  # the third turn hit max_turns
    assert all(len(t.logprobs) == len(t.completion_ids) <= 7 for t in turns)


def test_tiny_models_are_reproducible(tmp_path: Path) -> None:
    from trajforge.train.tiny import build, weights_revision

    a = build("qwen2", tmp_path / "a")
    b = build("qwen2", tmp_path / "b")
    assert weights_revision(a) == weights_revision(b)
