"""Smoke run of ``trajforge eval`` with model arms: a tiny local Qwen2 vs the same + a LoRA.

Both arms are served by the CPU policy server behind a capture proxy that forces the run's
sampling, inside the real pi harness, scored by the sandboxed verifier. A random model solves
nothing; the test checks the plumbing: one row per attempt, both arms ran, frozen inputs.
"""

from __future__ import annotations

import json
import os
from importlib.util import find_spec
from pathlib import Path

import pytest

from tests.eval.conftest import REVISION, cli, need_pi

pytestmark = pytest.mark.slow


def test_tiny_model_arms_run_through_pi(dataset: Path, tmp_path: Path) -> None:
    if any(find_spec(m) is None for m in ("torch", "transformers", "peft")):
        pytest.skip("!! [train] extra missing: pip install -e '.[train]'")
    need_pi()
    os.environ["TRAJFORGE_MODELS"] = str(tmp_path / "models")
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    from trajforge.train.tiny import resolve, weights_revision

    base = resolve("tiny:qwen2")
    lora = LoraConfig(
        r=32, lora_alpha=64, target_modules=["q_proj", "v_proj"], init_lora_weights=False
    )
    adapter = tmp_path / "adapter"
    get_peft_model(AutoModelForCausalLM.from_pretrained(base), lora).save_pretrained(adapter)
    config = tmp_path / "eval.toml"
    config.write_text(
        f"""harness = "pi"
k = 1
output_dir = "{tmp_path / "out"}"
[dataset]
path = "{dataset}"
revision = "{REVISION}"
split = "test"
families = ["repair"]
[sampling]
temperature = 1.0
top_p = 0.95
max_tokens = 16
seed = 0
[budget]
max_steps = 3
timeout_s = 120
[arms.base]
kind = "model"
base_model = "tiny:qwen2"
base_revision = "{weights_revision(base)}"
[arms.adapter]
kind = "model"
base_model = "tiny:qwen2"
base_revision = "{weights_revision(base)}"
adapter = "{adapter}"
adapter_revision = "{weights_revision(adapter)}"
"""
    )
    proc = cli("eval", "--config", str(config), "--json")
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = tmp_path / "out"
    import pyarrow.parquet as pq

    rows = pq.read_table(out / "results.parquet").to_pylist()
    assert sorted(r["arm"] for r in rows) == ["adapter", "base"]
    assert all(r["status"] in ("ok", "timeout") and r["reward"] is not None for r in rows), rows
    units = json.loads((out / "deployment_units.json").read_text())
    assert units["adapter"]["adapter"] == str(adapter) and units["base"]["adapter"] is None
    assert units["adapter"]["base_revision"] == units["base"]["base_revision"]
