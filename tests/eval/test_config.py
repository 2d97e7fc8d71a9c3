"""Config mistakes refuse the run with exit 2, the field named, and no traceback.

Two cases go through the CLI (exit code, stderr); the rest call the same loader in-process
(each CLI start costs seconds of imports).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.eval.conftest import cli, config_text, need_pi
from trajforge.errors import UsageError
from trajforge.train.evaluation.arms import deployment_units
from trajforge.train.evaluation.config import load_config
from trajforge.train.evaluation.evaluate import prepare

SCRIPTED_ADAPTER = '[arms.adapter]\nkind = "scripted"\npolicy = "replay"'
MODEL_ADAPTER = (
    '[arms.adapter]\nkind = "model"\nbase_model = "tiny:qwen3"\nbase_revision = "r1"\n'
    'adapter = "lora/"\nadapter_revision = "sha256:ab"'
)


def refused_cli(tmp_path: Path, text: str) -> str:
    config = tmp_path / "eval.toml"
    config.write_text(text)
    proc = cli("eval", "--config", str(config), "--output-dir", str(tmp_path / "out"))
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "out").exists()
    return " ".join(proc.stderr.split())


def refused(tmp_path: Path, text: str, *overrides: str) -> str:
    """The message a config is refused with (config loading, then the arms check)."""
    config = tmp_path / "eval.toml"
    config.write_text(text)
    with pytest.raises(UsageError) as caught:
        deployment_units(load_config(config, overrides))
    return str(caught.value)


def test_cli_refuses_with_exit_2_and_names_the_field(tmp_path: Path) -> None:
    text = config_text(tmp_path).replace('revision = "eval-t1"\n', "")
    assert "missing setting 'dataset.revision'" in refused_cli(tmp_path, text)
    differ = config_text(tmp_path).replace(SCRIPTED_ADAPTER, MODEL_ADAPTER)
    message = refused_cli(tmp_path, differ)
    assert "differ in more than the adapter" in message
    assert "base_model: 'scripted' vs 'tiny:qwen3'" in message


def test_missing_frozen_inputs_are_named(tmp_path: Path) -> None:
    text = config_text(tmp_path)
    assert "missing setting 'sampling.seed'" in refused(
        tmp_path, text.replace("seed = 0\n\n[budget]", "\n[budget]")
    )
    assert "missing setting 'budget.timeout_s'" in refused(
        tmp_path, text.replace("timeout_s = 120\n", "")
    )
    assert "missing setting 'harness'" in refused(tmp_path, text.replace('harness = "pi"\n', ""))
    assert "missing setting 'arms.base'" in refused(
        tmp_path, text.replace('[arms.base]\nkind = "scripted"\npolicy = "give_up"\n', "")
    )
    no_revision = text.replace(SCRIPTED_ADAPTER, MODEL_ADAPTER).replace(
        'base_revision = "r1"\n', ""
    )
    assert "missing setting 'arms.adapter.base_revision'" in refused(tmp_path, no_revision)
    without = text.replace(SCRIPTED_ADAPTER, MODEL_ADAPTER).replace(
        'adapter_revision = "sha256:ab"', ""
    )
    assert "missing setting 'arms.adapter.adapter_revision'" in refused(tmp_path, without)


def test_unknown_keys_are_named(tmp_path: Path) -> None:
    text = config_text(tmp_path)
    assert "unknown setting 'kk'" in refused(tmp_path, "kk = 3\n" + text)
    typo = text.replace('policy = "give_up"', 'policy = "give_up"\npolcy = "x"')
    assert "unknown setting 'arms.base.polcy'" in refused(tmp_path, typo)
    assert "unknown setting 'budget.steps'" in refused(tmp_path, text, "budget.steps=3")
    assert "+ --set" in refused(tmp_path, text, "budget.steps=3")


def test_arms_that_differ_beyond_the_adapter_are_refused(tmp_path: Path) -> None:
    text = config_text(tmp_path).replace(SCRIPTED_ADAPTER, MODEL_ADAPTER)
    both = text.replace(
        '[arms.base]\nkind = "scripted"\npolicy = "give_up"',
        '[arms.base]\nkind = "model"\nbase_model = "tiny:llama"\nbase_revision = "r1"',
    )
    assert "base_model: 'tiny:llama' vs 'tiny:qwen3'" in refused(tmp_path, both)
    revisions = both.replace(
        'base_model = "tiny:llama"\nbase_revision = "r1"',
        'base_model = "tiny:qwen3"\nbase_revision = "r0"',
    )
    assert "base_revision: 'r0' vs 'r1'" in refused(tmp_path, revisions)
    same = config_text(tmp_path).replace('policy = "replay"', 'policy = "give_up"')
    assert "arms.base and arms.adapter are identical" in refused(tmp_path, same)


def test_bad_values_are_named(tmp_path: Path) -> None:
    text = config_text(tmp_path)
    assert "setting 'k'" in refused(tmp_path, text, "k=0")
    assert "setting 'arms.adapter.policy'" in refused(
        tmp_path, text.replace('policy = "replay"', 'policy = "best"')
    )
    assert "arms.base.kind" in refused(
        tmp_path, text.replace('kind = "scripted"\npolicy = "give_up"', 'kind = "x"')
    )
    assert "setting 'dataset.families.0'" in refused(tmp_path, text, 'dataset.families=["web"]')
    assert "expected KEY=VALUE" in refused(tmp_path, text, "k")
    assert "not valid TOML" in refused(tmp_path, "k = [\n")
    assert "unknown harness 'emacs'" in refused(tmp_path, text, "harness=emacs")


def test_guard_bundle_and_dataset_are_checked_before_running(tmp_path: Path) -> None:
    need_pi()
    text = config_text(tmp_path / "nowhere")
    message = refused(tmp_path, text, "guard_bundle=v0-other")
    assert "guard_bundle 'v0-other'" in message and "shipped bundle" in message
    config = tmp_path / "eval.toml"
    config.write_text(text)
    settings = load_config(config, [f"output_dir={tmp_path / 'out'}"])
    with pytest.raises(UsageError, match=r"dataset.path .*nowhere.*not found"):
        prepare(settings)


def test_missing_config_file(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="cannot read the config file"):
        load_config(tmp_path / "none.toml")


def test_a_served_arm_needs_its_name_and_a_reachable_server(tmp_path: Path) -> None:
    text = config_text(tmp_path).replace(SCRIPTED_ADAPTER, MODEL_ADAPTER)
    alone = text + '\nserver_url = "http://127.0.0.1:9/v1"\n'
    assert "server_url and served_name go together" in refused(tmp_path, alone)
    both = text.replace(
        '[arms.base]\nkind = "scripted"\npolicy = "give_up"',
        '[arms.base]\nkind = "model"\nbase_model = "tiny:qwen3"\nbase_revision = "r1"',
    )
    unreachable = both + '\nserver_url = "http://127.0.0.1:9/v1"\nserved_name = "pi"\n'
    message = refused(tmp_path, unreachable)
    assert "arms.adapter.server_url http://127.0.0.1:9/v1: cannot list its models" in message
