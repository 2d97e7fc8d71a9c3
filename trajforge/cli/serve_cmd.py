"""``trajforge serve --model M``: a policy on CPU behind vLLM's OpenAI-compatible API.

The base model (``tiny:ARCH``, a local folder or a hub id) answers ``/v1/chat/completions``
with the engine's token ids and logprobs (vLLM's ``return_token_ids``). With ``--enable-lora``
LoRA adapters are served beside it: ``--lora-modules NAME=PATH`` at start, and
``/v1/load_lora_adapter`` / ``/v1/unload_lora_adapter`` at run time, so ``trainer.vllm_url`` can
point here. One ready line goes to stdout; logs go to stderr; SIGINT / SIGTERM stop it (exit 0).
"""

from __future__ import annotations

import json
import signal
import sys
import threading
from contextlib import redirect_stdout
from importlib.util import find_spec
from pathlib import Path
from types import FrameType
from typing import Any

import typer

from trajforge.cli.common import err
from trajforge.errors import UsageError
from trajforge.train.served_adapters import DEFAULT_MAX_LORA_RANK

DEFAULT_PORT = 8000


def serve(
    model: str = typer.Option(
        ..., "--model", help="Base model: tiny:qwen2 | tiny:lfm2, a local folder, or a hub id."
    ),
    revision: str | None = typer.Option(None, "--revision", help="Hub revision (hub ids only)."),
    served_model_name: str | None = typer.Option(
        None,
        "--served-model-name",
        help="Name requests use for the base model (default: the tiny name, the folder's name, "
        "or the hub id).",
    ),
    lora_modules: list[str] = typer.Option(
        [],
        "--lora-modules",
        help="NAME=PATH of a PEFT LoRA adapter to serve from the start (repeatable; needs "
        "--enable-lora, as in vLLM).",
    ),
    enable_lora: bool = typer.Option(
        False,
        "--enable-lora",
        help="Serve LoRA adapters: --lora-modules and the runtime /v1/load_lora_adapter and "
        "/v1/unload_lora_adapter endpoints (vLLM also needs VLLM_ALLOW_RUNTIME_LORA_UPDATING "
        "for those; here this flag is enough).",
    ),
    max_lora_rank: int = typer.Option(
        DEFAULT_MAX_LORA_RANK,
        "--max-lora-rank",
        min=1,
        help="Largest adapter rank accepted (32 here, the rank training makes; vLLM's own "
        "default is 16).",
    ),
    max_loras: int = typer.Option(
        8,
        "--max-loras",
        min=1,
        help="Adapters loaded at once at most; a load past it is refused (HTTP 400). TRL's "
        "AsyncGRPOTrainer wants max_staleness + 2.",
    ),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on (IPv4)."),
    port: int = typer.Option(
        DEFAULT_PORT, "--port", min=0, max=65535, help="Port to listen on (0: a free port)."
    ),
    seed: int = typer.Option(0, "--seed", help="Sampling seed (each request takes the next)."),
    max_tokens: int = typer.Option(
        256, "--max-tokens", min=1, help="Cap on new tokens per turn (requests may ask fewer)."
    ),
    as_json: bool = typer.Option(
        False, "--json", help='Print the ready line as JSON: {"url", "model", "adapters"}.'
    ),
) -> None:
    """Serve a policy on CPU with vLLM's OpenAI API (+ runtime LoRA with --enable-lora)."""
    modules = [parse_lora_module(spec) for spec in lora_modules]
    if modules and not enable_lora:
        raise UsageError("--lora-modules needs --enable-lora (as in vLLM)")
    if len(modules) > max_loras:
        raise UsageError(f"--lora-modules: {len(modules)} adapters but --max-loras {max_loras}")
    _check_adapters(modules, max_lora_rank)
    _check_model(model)
    _need_extras(enable_lora)
    from trajforge.train.policy_server import PolicyServer

    name = served_model_name or default_name(model)
    with redirect_stdout(sys.stderr):  # loaders may print; stdout carries only the ready line
        policy = _load(model, revision, seed, max_tokens)
        if enable_lora:
            adapters = policy.enable_lora(max_lora_rank, max_loras)
            for adapter_name, path in modules:
                adapters.load(adapter_name, str(path), name)
    try:
        server = PolicyServer(policy, model_name=name, port=port, host=host)
    except OSError as exc:
        raise UsageError(f"--host {host} --port {port}: cannot listen there ({exc})") from exc
    stop = _stop_on_signals()
    with server:
        url = f"http://{host}:{server.port}/v1"
        _ready(url, name, [n for n, _ in modules], enable_lora, as_json)
        while not stop.wait(1.0):
            pass
    err.print("stopped")


def parse_lora_module(spec: str) -> tuple[str, Path]:
    """``NAME=PATH`` (or vLLM's JSON ``{"name": ..., "path": ...}``) → (name, path)."""
    if spec.lstrip().startswith("{"):
        try:
            data = json.loads(spec)
        except ValueError as exc:
            raise UsageError(f"--lora-modules {spec!r}: not JSON ({exc})") from exc
        name, path = data.get("name"), data.get("path")
    else:
        name, _, path = spec.partition("=")
    if not isinstance(name, str) or not name.strip() or not isinstance(path, str) or not path:
        raise UsageError(f"--lora-modules {spec!r}: expected NAME=PATH")
    return name.strip(), Path(path).expanduser().resolve()


def default_name(model: str) -> str:
    """The served name of ``model``: ``tiny:ARCH`` as is, a local folder's name, a hub id."""
    if not model.startswith("tiny:") and Path(model).expanduser().is_dir():
        return Path(model).expanduser().resolve().name
    return model


def _check_adapters(modules: list[tuple[str, Path]], max_rank: int) -> None:
    from trajforge.train.served_adapters import adapter_rank

    names = [name for name, _ in modules]
    for name in {n for n in names if names.count(n) > 1}:
        raise UsageError(f"--lora-modules: {name!r} given twice")
    for name, path in modules:
        adapter_rank(path, max_rank, name)


def _check_model(model: str) -> None:
    if model.startswith("tiny:"):
        from trajforge.train.tiny import ARCHES

        if model.removeprefix("tiny:") not in ARCHES:
            known = ", ".join(f"tiny:{a}" for a in ARCHES)
            raise UsageError(f"--model {model}: unknown tiny model (known: {known})")
        return
    path = Path(model).expanduser()
    local = path.exists() or model.startswith(("/", "./", "../", "~")) or model.count("/") > 1
    if local and not path.is_dir():
        raise UsageError(f"--model {model}: no such model folder")
    if local and not (path / "config.json").is_file():
        raise UsageError(f"--model {model}: not a transformers model folder (no config.json)")


def _need_extras(enable_lora: bool) -> None:
    wanted = ("torch", "transformers", "peft") if enable_lora else ("torch", "transformers")
    missing = [m for m in wanted if find_spec(m) is None]
    if missing:
        raise UsageError(
            f"serving needs {', '.join(missing)}: pip install torch==2.13.0 (CPU) or a CUDA "
            "build first, then pip install -e '.[train]'"
        )


def _load(model: str, revision: str | None, seed: int, max_tokens: int) -> Any:
    from trajforge.train.serving import load_policy

    err.print(f"loading {model}")
    try:
        policy = load_policy(model, revision, seed=seed)
    except (OSError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise UsageError(f"--model {model}: cannot load it ({first})") from exc
    policy.max_tokens = max_tokens
    return policy


def _stop_on_signals() -> threading.Event:
    stop = threading.Event()

    def handle(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGINT, handle)
    signal.signal(signal.SIGTERM, handle)
    return stop


def _ready(url: str, name: str, adapters: list[str], lora: bool, as_json: bool) -> None:
    if as_json:
        line = json.dumps({"url": url, "model": name, "adapters": adapters})
    else:
        extra = f" + adapters {', '.join(adapters)}" if adapters else ""
        runtime = " (runtime LoRA loading on)" if lora else ""
        line = f"serving {name}{extra} at {url}{runtime}; Ctrl-C to stop"
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)
