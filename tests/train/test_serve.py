"""``trajforge serve``: the CPU policy server as a vLLM-compatible server with runtime LoRA.

Real server processes (``python -m trajforge.cli.main serve ... --port 0 --json``) on a tiny
Qwen2 built locally, real PEFT adapters saved with ``save_pretrained``, the real ``openai``
client and the exact payloads ``train/vllm_sync.py`` sends to vLLM.
"""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import pytest

from tests.support.serve import ready_line, serve_argv, start_serve

REPO = Path(__file__).resolve().parents[2]
BASE = "tiny:qwen2"
PROMPT = [{"role": "user", "content": "write a function that adds two numbers"}]
TARGETS = ["q_proj", "v_proj", "o_proj", "up_proj", "down_proj"]

pytestmark = pytest.mark.slow

_missing = [m for m in ("torch", "transformers", "peft", "openai") if find_spec(m) is None]
if _missing:
    pytest.skip(
        f"!! serving extra missing ({_missing}): pip install -e '.[train]'",
        allow_module_level=True,
    )


@dataclass
class Server:
    """A running ``trajforge serve`` process and its ready line."""

    proc: subprocess.Popen[str]
    ready: dict[str, Any]
    stderr: Path

    @property
    def url(self) -> str:
        return str(self.ready["url"])

    def chat(self, model: str, **extra: Any) -> Any:
        from openai import OpenAI

        client = OpenAI(base_url=self.url, api_key="x", max_retries=0)
        return client.chat.completions.create(
            model=model, messages=PROMPT, max_tokens=8, temperature=0, **extra
        )

    def models(self) -> dict[str, dict[str, Any]]:
        with urllib.request.urlopen(f"{self.url}/models", timeout=60) as resp:
            return {card["id"]: card for card in json.load(resp)["data"]}

    def load(self, name: str, path: Path) -> tuple[int, str]:
        return self.post("load_lora_adapter", {"lora_name": name, "lora_path": str(path)})

    def post(self, route: str, payload: dict[str, Any]) -> tuple[int, str]:
        return post_json(f"{self.url}/{route}", payload)


def post_json(url: str, payload: dict[str, Any]) -> tuple[int, str]:
    request = urllib.request.Request(
        url, data=json.dumps(payload).encode(), headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=120) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def cli_env(models: Path) -> dict[str, str]:
    return {**os.environ, "TRAJFORGE_MODELS": str(models)}


def start(env: dict[str, str], log: Path, *args: str) -> subprocess.Popen[str]:
    return start_serve(env, log, "--model", BASE, "--port", "0", "--json", "--max-tokens", "8",
                       *args)  # fmt: skip


def wait_ready(proc: subprocess.Popen[str], log: Path) -> Server:
    """The server once it printed its ready line (a dead or silent server fails the test)."""
    return Server(proc, ready_line(proc, log), log)


def make_adapter(base: Path, out: Path, rank: int, seed: int) -> Path:
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_pretrained(str(base))
    config = LoraConfig(
        r=rank, lora_alpha=2 * rank, init_lora_weights=False, target_modules=TARGETS
    )
    get_peft_model(model, config).save_pretrained(str(out))
    return out


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The tiny model (built once) and adapters: pi (r 8), other (r 4), big (r 64), empty."""
    root = tmp_path_factory.mktemp("serve")
    models = root / "models"
    os.environ["TRAJFORGE_MODELS"] = str(models)
    from trajforge.train.tiny import resolve

    base = resolve(BASE)
    (root / "empty").mkdir()
    return {
        "root": root,
        "models": models,
        "pi": make_adapter(base, root / "pi", 8, 1),
        "other": make_adapter(base, root / "other", 4, 2),
        "big": make_adapter(base, root / "big", 64, 3),
        "empty": root / "empty",
    }


@pytest.fixture(scope="module")
def servers(files: dict[str, Path]) -> Iterator[dict[str, Server]]:
    """A LoRA server (pi loaded at start, max rank 16) and a plain one, started together."""
    env = cli_env(files["models"])
    logs = {"lora": files["root"] / "lora.log", "plain": files["root"] / "plain.log"}
    procs = {
        "lora": start(
            env, logs["lora"], "--enable-lora", "--max-lora-rank", "16", "--max-loras", "3",
            "--lora-modules", f"pi={files['pi']}",
        ),
        "plain": start(env, logs["plain"]),
    }  # fmt: skip
    try:
        yield {key: wait_ready(proc, logs[key]) for key, proc in procs.items()}
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def engine(reply: Any) -> tuple[list[int], list[int], list[float]]:
    """(prompt_token_ids, token_ids, logprobs) of a completion."""
    choice = reply.choices[0]
    assert choice.logprobs is not None and choice.logprobs.content is not None
    logprobs = [c.logprob for c in choice.logprobs.content]
    prompt = (reply.model_extra or {})["prompt_token_ids"]
    return prompt, (choice.model_extra or {})["token_ids"], logprobs


def same(a: list[float], b: list[float]) -> bool:
    if len(a) != len(b):
        return False
    return all(math.isclose(x, y, abs_tol=1e-5) for x, y in zip(a, b, strict=True))


def test_ready_line_and_models(servers: dict[str, Server]) -> None:
    lora = servers["lora"]
    assert lora.ready["model"] == BASE and lora.ready["adapters"] == ["pi"]
    assert lora.url.startswith("http://127.0.0.1:") and lora.url.endswith("/v1")
    cards = lora.models()
    assert set(cards) == {BASE, "pi"}
    assert cards["pi"]["parent"] == BASE and "parent" not in cards[BASE]
    assert servers["plain"].ready["adapters"] == []


def test_base_answers_like_the_plain_model(servers: dict[str, Server]) -> None:
    """The base name runs with adapters off: the same greedy tokens and logprobs as a server
    that never loaded one."""
    with_lora = engine(servers["lora"].chat(BASE))
    plain = engine(servers["plain"].chat(BASE))
    prompt, tokens, logprobs = with_lora
    assert prompt and 1 <= len(tokens) <= 8 and len(logprobs) == len(tokens)
    assert all(lp <= 0 for lp in logprobs)
    assert prompt == plain[0] and tokens == plain[1] and same(logprobs, plain[2])


def test_adapter_changes_the_policy(servers: dict[str, Server]) -> None:
    lora = servers["lora"]
    base = engine(lora.chat(BASE))
    pi_reply = lora.chat("pi")
    assert pi_reply.model == "pi"
    pi = engine(pi_reply)
    assert pi[0] == base[0]
    assert pi[1] != base[1] or not same(pi[2], base[2])
    assert engine(lora.chat("pi")) == pi  # greedy: the adapter answers the same way again
    stream = lora.chat("pi", stream=True)
    assert any(chunk.choices and chunk.choices[0].finish_reason for chunk in stream)


def test_runtime_load_and_unload(servers: dict[str, Server], files: dict[str, Path]) -> None:
    from openai import NotFoundError

    lora = servers["lora"]
    status, text = lora.load("other", files["other"])
    assert status == 200 and "added successfully" in text, text
    assert lora.models()["other"]["parent"] == BASE
    other = engine(lora.chat("other"))
    assert other != engine(lora.chat("pi"))

    status, text = lora.load("other", files["pi"])
    assert status == 400 and "already been loaded" in json.loads(text)["error"]["message"]
    status, text = lora.load("x", files["empty"])
    error = json.loads(text)["error"]
    assert status == 400 and str(files["empty"]) in error["message"] and error["code"] == 400
    status, text = lora.load("big", files["big"])
    assert status == 400 and "LoRA rank 64 is greater than max_lora_rank 16" in text
    status, text = lora.post("load_lora_adapter", {"lora_name": "x"})
    assert status == 400 and json.loads(text)["error"]["type"] == "InvalidUserInput"
    assert set(lora.models()) == {BASE, "pi", "other"}  # refused loads left nothing behind

    status, text = lora.post("unload_lora_adapter", {"lora_name": "other"})
    assert status == 200 and "removed successfully" in text
    assert "other" not in lora.models()
    with pytest.raises(NotFoundError) as missing:
        lora.chat("other")
    assert "The model `other` does not exist." in str(missing.value)
    status, text = lora.post("unload_lora_adapter", {"lora_name": "nobody"})
    assert status == 404 and json.loads(text)["error"]["type"] == "NotFoundError"
    assert engine(lora.chat("pi")) != other  # pi is still served


def test_last_adapter_unloaded_and_loaded_again(
    servers: dict[str, Server], files: dict[str, Path]
) -> None:
    """vllm_sync's cycle (load policy-step-N, unload the previous) down to base-only and back."""
    lora = servers["lora"]
    pi = engine(lora.chat("pi"))
    assert lora.post("unload_lora_adapter", {"lora_name": "pi"})[0] == 200
    assert set(lora.models()) == {BASE}
    base_again, plain = engine(lora.chat(BASE)), engine(servers["plain"].chat(BASE))
    assert base_again[:2] == plain[:2] and same(base_again[2], plain[2])
    load = {"lora_name": "policy-step-1", "lora_path": str(files["pi"])}
    assert lora.post("load_lora_adapter", load)[0] == 200
    assert engine(lora.chat("policy-step-1"))[1] == pi[1]


def test_without_enable_lora_any_name_is_the_model(servers: dict[str, Server]) -> None:
    plain = servers["plain"]
    status, _ = plain.post("load_lora_adapter", {"lora_name": "a", "lora_path": "/tmp"})
    assert status == 404
    assert engine(plain.chat("whatever-name"))[1] == engine(plain.chat(BASE))[1]
    assert set(plain.models()) == {BASE}


def test_bad_input_is_one_clear_line(files: dict[str, Path]) -> None:
    cases = {
        "expected NAME=PATH": ["--model", BASE, "--enable-lora", "--lora-modules", "pi"],
        "needs --enable-lora": ["--model", BASE, "--lora-modules", f"pi={files['pi']}"],
        "No adapter found for": [
            "--model", BASE, "--enable-lora", "--lora-modules", f"e={files['empty']}",
        ],
        "LoRA rank 64 is greater than max_lora_rank 32": [
            "--model", BASE, "--enable-lora", "--lora-modules", f"b={files['big']}",
        ],
        "--max-loras 1": [
            "--model", BASE, "--enable-lora", "--max-loras", "1",
            "--lora-modules", f"a={files['pi']}", "--lora-modules", f"b={files['other']}",
        ],
        "no such model folder": ["--model", str(files["root"] / "missing-model")],
        "unknown tiny model": ["--model", "tiny:gpt9"],
    }  # fmt: skip
    env = cli_env(files["models"])
    procs = {
        want: subprocess.Popen(
            serve_argv(*args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
        )
        for want, args in cases.items()
    }
    for want, proc in procs.items():
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 2, (want, err)
        assert want in err and "Traceback" not in err and out == "", (want, err)
        assert len(err.strip().splitlines()) <= 2, err  # one message (rich may wrap it once)
        if want == "No adapter found for":
            assert str(files["empty"]) in err.replace("\n", "")


def get(url: str) -> tuple[int, str]:
    with urllib.request.urlopen(url, timeout=60) as resp:
        return resp.status, resp.read().decode()


def test_the_control_endpoints_an_rl_trainer_uses(
    servers: dict[str, Server], files: dict[str, Path]
) -> None:
    """What TRL's AsyncGRPOTrainer asks a vLLM server: health, server_info, pause / resume,
    and a load past --max-loras refused."""
    import threading

    lora, plain = servers["lora"], servers["plain"]
    root = lora.url.removesuffix("/v1")
    assert get(f"{root}/health") == (200, "")
    info = json.loads(get(f"{root}/server_info?config_format=json")[1])["vllm_config"]
    assert info["lora_config"] == {"max_lora_rank": 16, "max_loras": 3}
    assert info["parallel_config"]["data_parallel_size"] == 1
    max_len = lora.models()[BASE]["max_model_len"]
    assert isinstance(max_len, int) and info["model_config"]["max_model_len"] == max_len > 0
    plain_root = plain.url.removesuffix("/v1")
    assert json.loads(get(f"{plain_root}/server_info")[1])["vllm_config"]["lora_config"] is None

    assert post_json(f"{root}/pause?mode=keep", {})[0] == 200  # paused: a new generation waits
    answered = threading.Event()
    waiting = threading.Thread(target=lambda: (lora.chat(BASE), answered.set()))
    waiting.start()
    assert not answered.wait(2.0)
    assert post_json(f"{root}/resume", {})[0] == 200
    assert answered.wait(60.0)
    waiting.join()

    loaded = set(lora.models()) - {BASE}
    for i in range(3 - len(loaded)):
        assert lora.load(f"extra-{i}", files["other"])[0] == 200
    status, text = lora.load("one-too-many", files["other"])
    assert status == 400 and "max_loras 3" in text, text
    for i in range(3 - len(loaded)):
        assert lora.post("unload_lora_adapter", {"lora_name": f"extra-{i}"})[0] == 200


def test_sigterm_and_sigint_stop_cleanly(servers: dict[str, Server]) -> None:
    servers["lora"].proc.send_signal(signal.SIGTERM)
    servers["plain"].proc.send_signal(signal.SIGINT)
    for server in servers.values():
        assert server.proc.wait(timeout=60) == 0, server.stderr.read_text()[-2000:]
        assert "Traceback" not in server.stderr.read_text()
