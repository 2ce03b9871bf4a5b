"""Escape hatches that express real runs, through the command line: Hydra's `+`/`++` prefixes, FSDP2
per role, trust_remote_code for data loading, placeholders in paths, and env precedence between a
recipe and its platform profile. (tests/verl/test_escape_hatches.py composes the same with Hydra.)"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from rlcat.model.paths import placeholder_problem, split_placeholder

from conftest import REPO, Result

Run = Callable[..., Result]
PARENT = "gsm8k_qwen3_8b_fsdp"


def child(tmp_path: Path, body: str, name: str = "child", parent: str = PARENT) -> Path:
    path = tmp_path / "recipes" / f"{name}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"name: {name}\nextends: {parent}\nsummary: a child recipe\n{body}", encoding="utf-8")
    return path


def overrides_of(result: Result) -> list[str]:
    assert result.code == 0, result.err
    return list(json.loads(result.out)["overrides"])


# --- Hydra's prefixes ---


@pytest.mark.parametrize(
    ("override", "written"),
    [
        ("+trainer.rlcat_added=1", "+trainer.rlcat_added=1"),
        ("++trainer.save_freq=2", "++trainer.save_freq=2"),
        ("++trainer.rlcat_added=1", "++trainer.rlcat_added=1"),
        (
            "+actor_rollout_ref.actor.optim.warmup_style=cosine",
            "+actor_rollout_ref.actor.optim.warmup_style=cosine",
        ),
        ("trainer.save_freq=2", "trainer.save_freq=2"),
    ],
    ids=["add-new", "force-add-existing", "force-add-new", "add-over-null", "plain-existing"],
)
def test_a_prefix_on_the_command_line_is_kept(rlcat: Run, override: str, written: str) -> None:
    assert written in overrides_of(rlcat("compile", PARENT, "-f", "json", "--override", override))


@pytest.mark.parametrize(
    ("override", "code", "words"),
    [
        ("+trainer.save_freq=2", "RLC408", "Could not append to config"),
        ("trainer.rlcat_added=1", "RLC401", "write it with Hydra's + prefix: +trainer.rlcat_added"),
        ("+++trainer.save_freq=2", "RLC105", "Hydra's + (add a key) or ++"),
        ("+=2", "RLC105", "a verl key"),
        ("+trainer.total_epochs.x=1", "RLC402", "would turn 'trainer.total_epochs'"),
        ("+actor_rollout_ref.actor.no_such_knob=1", "RLC409", "unexpected keyword argument 'no_such_knob'"),
        ("++actor_rollout_ref.rollout.no_such_knob=1", "RLC409", "builds as a dataclass (verl.workers"),
    ],
    ids=[
        "add-existing",
        "plain-unknown",
        "three-pluses",
        "prefix-only",
        "under-a-number",
        "add-to-a-dataclass",
        "force-add-to-a-dataclass",
    ],
)
def test_a_prefix_hydra_would_refuse_is_refused(rlcat: Run, override: str, code: str, words: str) -> None:
    result = rlcat("compile", PARENT, "--override", override)
    assert result.code == 2 and result.out == ""
    assert f"--override {override} {code} error: " in result.err and words in result.err, result.err


def test_a_recipe_override_keeps_its_prefix_in_every_format(rlcat: Run, tmp_path: Path) -> None:
    path = child(tmp_path, "overrides:\n  +trainer.rlcat_added.note: hi\n  ++trainer.save_freq: 3\n")
    for fmt in ("overrides", "shell", "json"):
        out = rlcat("compile", str(path), "-f", fmt).out
        assert "+trainer.rlcat_added.note=hi" in out and "++trainer.save_freq=3" in out, fmt
    yaml_out = rlcat("compile", str(path), "-f", "yaml").out
    assert "#   +trainer.rlcat_added.note\n" in yaml_out and "#   ++trainer.save_freq\n" in yaml_out
    assert "  rlcat_added:\n    note: hi\n" in yaml_out


def test_recipe_override_findings_point_at_their_line(rlcat: Run, tmp_path: Path) -> None:
    path = child(tmp_path, "overrides:\n  +trainer.save_freq: 3\n  trainer.rlcat_added: 1\n")
    result = rlcat("compile", str(path))
    assert result.code == 2
    assert f"{path}:5:3 RLC408 error: '+trainer.save_freq' adds a key" in result.err
    assert f"{path}:6:3 RLC401 error: " in result.err and "+trainer.rlcat_added" in result.err


def test_one_key_written_twice_in_overrides_is_refused(rlcat: Run, tmp_path: Path) -> None:
    path = child(tmp_path, "overrides:\n  trainer.save_freq: 3\n  ++trainer.save_freq: 4\n")
    result = rlcat("compile", str(path))
    assert result.code == 2
    assert "RLC103 error: overrides: 'trainer.save_freq' and '++trainer.save_freq' set the same verl key" in (
        result.err
    )


def test_a_key_inside_a_plain_value_of_the_plan_is_refused(rlcat: Run) -> None:
    result = rlcat(
        "compile", PARENT, "--override", "+trainer.rlcat_x=1", "--override", "+trainer.rlcat_x.y=2"
    )
    assert result.code == 2
    assert "'trainer.rlcat_x.y' is set inside 'trainer.rlcat_x', which this plan sets to 1" in result.err


def test_a_four_plus_key_is_not_a_recipe_override_key(rlcat: Run, tmp_path: Path) -> None:
    path = child(tmp_path, "overrides:\n  +++trainer.save_freq: 3\n")
    result = rlcat("compile", str(path))
    assert result.code == 2 and "RLC103" in result.err and "overrides" in result.err


# --- FSDP2 per role ---


def test_fsdp2_for_the_actor_only(rlcat: Run, tmp_path: Path) -> None:
    path = child(tmp_path, "parallelism:\n  actor: {strategy: fsdp2}\n", parent="ppo_qwen2_7b_gsm8k")
    written = overrides_of(rlcat("compile", str(path), "-f", "json"))
    strategies = [o for o in written if "strategy=" in o]
    # verl 0.9 copies actor.strategy to its engine's fsdp_config.strategy: that key stays at verl's default
    assert strategies == [
        "actor_rollout_ref.actor.strategy=fsdp2",
        "actor_rollout_ref.ref.strategy=fsdp",
    ]


def test_fsdp2_backend_with_an_fsdp_reference(rlcat: Run) -> None:
    written = overrides_of(
        rlcat("compile", "dapo_math_fsdp2_4_4", "-f", "json", "--set", "parallelism.ref.strategy=fsdp")
    )
    assert "actor_rollout_ref.ref.strategy=fsdp" in written
    assert not any(o.startswith("actor_rollout_ref.ref.fsdp_config.strategy=") for o in written)


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["gsm8k_qwen3_8b_megatron", "--set", "parallelism.actor.strategy=fsdp2"], "backend megatron"),
        ([PARENT, "--set", "parallelism.critic.strategy=fsdp2"], "algorithm grpo trains no critic"),
        (
            [PARENT, "--platform", "rocm-7.0.2", "--set", "parallelism.actor.strategy=fsdp2"],
            "verl/workers/fsdp_workers.py:600",
        ),
    ],
    ids=["megatron", "no-critic", "legacy-workers-0.7.1"],
)
def test_impossible_role_strategies_are_refused(rlcat: Run, args: list[str], words: str) -> None:
    result = rlcat("compile", *args)
    assert result.code == 2 and " RLC301 error: " in result.err and words in result.err, result.err


def test_legacy_workers_can_be_switched_off(rlcat: Run, tmp_path: Path) -> None:
    body = "parallelism:\n  actor: {strategy: fsdp2}\noverrides:\n  trainer.use_legacy_worker_impl: disable\n"
    path = child(tmp_path, body)
    result = rlcat("compile", str(path), "--platform", "rocm-7.0.2", "--allow-known-broken", "-f", "json")
    assert "RLC301" not in result.err
    written = overrides_of(result)  # compiled: the engine workers take a strategy per role
    assert "trainer.use_legacy_worker_impl=disable" in written
    assert "actor_rollout_ref.actor.strategy=fsdp2" in written
    assert "actor_rollout_ref.ref.strategy=fsdp" in written


# --- trust_remote_code ---


def test_trust_remote_code_reaches_data_loading(rlcat: Run, tmp_path: Path) -> None:
    written = overrides_of(rlcat("compile", "qwen3_5_35b_megatron", "-f", "json"))
    assert "data.trust_remote_code=True" in written
    off = child(tmp_path, "actor:\n  trust_remote_code: false\n", parent="qwen3_5_35b_megatron")
    written = overrides_of(rlcat("compile", str(off), "-f", "json"))
    assert "data.trust_remote_code=False" in written
    assert "actor_rollout_ref.model.trust_remote_code=False" in written


def test_remote_code_guard_sees_the_data_key(rlcat: Run) -> None:
    result = rlcat(
        "compile",
        PARENT,
        "--override",
        "data.trust_remote_code=true",
        "--override",
        "actor_rollout_ref.model.path=someone/model",
    )
    assert "RLC902" in result.err and "data.trust_remote_code is on" in result.err


# --- placeholders in paths ---


@pytest.mark.parametrize(
    ("path", "variable", "rest"),
    [
        ("~", "HOME", ""),
        ("~/d/x.parquet", "HOME", "/d/x.parquet"),
        ("$HOME/d", "HOME", "/d"),
        ("${HOME}/d", "HOME", "/d"),
        ("$PWD/data", "PWD", "/data"),
        ("${PWD}", "PWD", ""),
        ("/abs/x", None, "/abs/x"),
        ("$PWDX/y", None, "$PWDX/y"),
    ],
)
def test_leading_placeholders(path: str, variable: str | None, rest: str) -> None:
    assert split_placeholder(path) == (variable, rest)


@pytest.mark.parametrize(
    ("path", "shown"),
    [
        ("$DATA/x", "'$DATA'"),
        ("/x/${oc.env:SECRET}/y", "'${oc.env:SECRET}'"),
        ("/x/$PWD/y", "'$PWD'"),
        ("~bob/x", "'~bob'"),
        ("$PWDX/y", "'$PWDX'"),
    ],
)
def test_other_placeholders_are_refused(path: str, shown: str) -> None:
    problem = placeholder_problem(path)
    assert problem is not None and problem.startswith(shown)
    assert "start it with ~, $HOME or $PWD" in problem


@pytest.mark.parametrize("path", ["/abs/x.parquet", "rel/x", "Qwen/Qwen3-8B", "a$5", "~", "$PWD/x"])
def test_plain_paths_pass(path: str) -> None:
    assert placeholder_problem(path) is None


def _user_dataset(tmp_path: Path, train: str) -> None:
    folder = tmp_path / "catalog" / "datasets"
    folder.mkdir(parents=True, exist_ok=True)
    shipped = (REPO / "catalog" / "datasets" / "gsm8k.yaml").read_text(encoding="utf-8")
    entry = shipped.replace("name: gsm8k", "name: user_data").replace(
        "train_files: [~/data/gsm8k/train.parquet]", f"train_files: [{train}]"
    )
    (folder / "user_data.yaml").write_text(entry, encoding="utf-8")


def test_pwd_and_home_become_launch_time_interpolations(rlcat: Run, tmp_path: Path) -> None:
    _user_dataset(tmp_path, '$PWD/data/train.parquet, "${HOME}/more.parquet"')
    path = child(tmp_path, "dataset: user_data\n")
    written = overrides_of(rlcat("compile", str(path), "-f", "json", "--catalog", str(tmp_path)))
    assert 'data.train_files=["${oc.env:PWD}/data/train.parquet","${oc.env:HOME}/more.parquet"]' in written


def test_another_variable_is_refused_at_its_file_line_and_key(rlcat: Run, tmp_path: Path) -> None:
    _user_dataset(tmp_path, "$DATA_ROOT/train.parquet")
    path = child(tmp_path, "dataset: user_data\n")
    for command in ("compile", "validate"):
        result = rlcat(command, str(path), "--catalog", str(tmp_path))
        shown = result.err + result.out  # validate reports on stdout
        assert result.code != 0
        assert "RLC103 error: '$DATA_ROOT' is not expanded" in shown and "[train_files[0]]" in shown
        # the entry's file and line, as the finding or as its note when reported on the recipe
        assert "user_data.yaml:3:" in shown or "user_data.yaml, line 3" in shown, shown


def test_a_model_path_in_a_recipe_follows_the_same_rule(rlcat: Run, tmp_path: Path) -> None:
    path = child(tmp_path, "actor:\n  model_path: $PWD/models/q\n")
    written = overrides_of(rlcat("compile", str(path), "-f", "json"))
    assert 'actor_rollout_ref.model.path="${oc.env:PWD}/models/q"' in written
    bad = child(tmp_path, "actor:\n  model_path: $MODELS/q\n", name="bad")
    result = rlcat("compile", str(bad))
    assert result.code == 2 and f"{bad}:5:" in result.err and "'$MODELS' is not expanded" in result.err


# --- env precedence ---


def test_recipe_env_beats_the_profile_and_explain_shows_both(rlcat: Run, tmp_path: Path) -> None:
    path = child(tmp_path, 'env:\n  NCCL_MIN_NCHANNELS: "64"\n')
    result = rlcat("compile", str(path), "--platform", "rocm", "-f", "json")
    assert json.loads(result.out)["env"]["NCCL_MIN_NCHANNELS"] == "64"
    explained = rlcat("explain", str(path), "NCCL_MIN_NCHANNELS", "--platform", "rocm")
    assert explained.code == 0, explained.err
    lines = explained.out.splitlines()
    assert lines[0] == "NCCL_MIN_NCHANNELS = 64"
    rows = [line.split() for line in lines[2:]]
    assert [(r[0], r[1]) for r in rows] == [("platform", "112"), ("recipe", "64")]


def test_recipe_env_beats_a_profile_tweak(rlcat: Run, tmp_path: Path) -> None:
    path = child(tmp_path, 'env:\n  VLLM_ROCM_USE_AITER: "0"\n')
    result = rlcat("compile", str(path), "--platform", "rocm", "-f", "json")
    assert json.loads(result.out)["env"]["VLLM_ROCM_USE_AITER"] == "0"


@pytest.mark.parametrize(
    ("body", "args", "name"),
    [
        (
            'env:\n  RAY_EXPERIMENTAL_NOSET_HIP_VISIBLE_DEVICES: "0"\n',
            [],
            "RAY_EXPERIMENTAL_NOSET_HIP_VISIBLE_DEVICES",
        ),
        ("env:\n  SGLANG_ATTENTION_BACKEND: aiter\n", ["--engine", "sglang"], "SGLANG_ATTENTION_BACKEND"),
        (
            'platforms:\n  rocm:\n    env:\n      RAY_ACCEL_ENV_VAR_OVERRIDE_ON_ZERO: "1"\n',
            [],
            "RAY_ACCEL_ENV_VAR_OVERRIDE_ON_ZERO",
        ),
    ],
    ids=["profile-env", "tweak-env", "platform-block"],
)
def test_a_required_profile_variable_cannot_be_changed(
    rlcat: Run, tmp_path: Path, body: str, args: list[str], name: str
) -> None:
    path = child(tmp_path, body)
    result = rlcat("compile", str(path), "--platform", "rocm", *args)
    assert result.code == 2 and result.out == ""
    assert f"RLC301 error: env {name}: " in result.err and "and platform rocm requires" in result.err
    assert f"{path}:" in result.err


def test_the_same_value_as_a_required_variable_is_fine(rlcat: Run, tmp_path: Path) -> None:
    path = child(tmp_path, 'env:\n  RAY_EXPERIMENTAL_NOSET_HIP_VISIBLE_DEVICES: "1"\n')
    assert rlcat("compile", str(path), "--platform", "rocm").code == 0


def test_an_override_that_keeps_a_mode_invariant_passes_its_guard(rlcat: Run) -> None:
    # the mode sets rollout.mode=async; the same text on the command line is the same value
    result = rlcat("compile", "dapo_math_fsdp2_4_4", "--override", "actor_rollout_ref.rollout.mode=async")
    assert result.code == 0 and "RLC701" not in result.err, result.err


# --- config-group choices ---


def test_an_override_naming_a_config_group_chooses_its_option(rlcat: Run, tmp_path: Path) -> None:
    """`model_engine: veomni` under `overrides:` picks VeOmni's part of verl's tree, as the command
    line's `model_engine=veomni` does (how `rlcat import` keeps an engine no axis selects): the keys
    are then checked against that engine's index, where the FSDP actor's keys are not."""
    result = rlcat("compile", str(child(tmp_path, "overrides:\n  model_engine: veomni\n")), "-f", "json")
    assert result.code == 2
    assert "has no key 'actor_rollout_ref.actor.fsdp_config.param_offload'" in result.err
    assert "did you mean 'actor_rollout_ref.actor.veomni.param_offload'" in result.err


def test_an_option_the_release_lacks_is_refused(rlcat: Run, tmp_path: Path) -> None:
    result = rlcat("compile", str(child(tmp_path, "overrides:\n  model_engine: nosuch\n")))
    assert result.code == 2 and "RLC404" in result.err and "model_engine=nosuch" in result.err
