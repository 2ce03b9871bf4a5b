"""Values given on the command line: `--override` read with Hydra's override grammar, closed choices
refused by the command line itself, and findings about a command-line value naming its argument."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from conftest import Result

Run = Callable[..., Result]
RECIPE = "gsm8k_qwen3_8b_fsdp"


def overrides_of(rlcat: Run, *args: str) -> list[str]:
    result = rlcat("compile", RECIPE, "--format", "json", *args)
    assert result.code == 0, result.err
    overrides: list[str] = json.loads(result.out)["overrides"]
    return overrides


# (what the user types after --override, the override rlcat emits for it)
# fmt: off
GRAMMAR_CASES: list[tuple[str, str, str]] = [
    ("mapping", "actor_rollout_ref.model.override_config={attention_dropout: 0.1}",
     "actor_rollout_ref.model.override_config={attention_dropout:0.1}"),
    ("list-with-quotes", "trainer.logger=[console, 'wandb']", "trainer.logger=[console,wandb]"),
    ("quoted-hash", "trainer.experiment_name='run #3'", 'trainer.experiment_name="run #3"'),
    ("null", "trainer.val_before_train=null", "trainer.val_before_train=null"),
    ("bool-any-case", "trainer.val_before_train=TRUE", "trainer.val_before_train=True"),
    ("yes-is-a-string", "trainer.experiment_name=yes", "trainer.experiment_name=yes"),
    ("time-is-a-string", "trainer.experiment_name=64:00", 'trainer.experiment_name="64:00"'),
    ("float-exponent", "actor_rollout_ref.actor.optim.lr=3e-6", "actor_rollout_ref.actor.optim.lr=3e-06"),
    ("interpolation-kept", "trainer.default_local_dir=${oc.env:HOME}/ckpt",
     'trainer.default_local_dir="${oc.env:HOME}/ckpt"'),
]
# fmt: on


@pytest.mark.parametrize(
    ("given", "emitted"), [c[1:] for c in GRAMMAR_CASES], ids=[c[0] for c in GRAMMAR_CASES]
)
def test_override_values_are_read_as_hydra_reads_them(rlcat: Run, given: str, emitted: str) -> None:
    assert emitted in overrides_of(rlcat, "--override", given)


@pytest.mark.parametrize(
    ("given", "why"),
    [
        ("trainer.logger=console,wandb", "sweep"),
        ("trainer.logger=choice(console,wandb)", "function"),
        ("trainer.logger=[console", "never closed"),
    ],
    ids=["sweep", "function", "unclosed"],
)
def test_an_override_that_is_not_one_value_is_refused_naming_it(rlcat: Run, given: str, why: str) -> None:
    result = rlcat("compile", RECIPE, "--override", given)
    assert result.code == 2
    assert result.out == ""
    first = result.err.splitlines()[0]
    assert first.startswith(f"--override {given} RLC105 error: ")
    assert why in first


@pytest.mark.parametrize(
    ("args", "where", "code"),
    [
        (["--override", "trainer.save_frq=5"], "--override trainer.save_frq=5", "RLC401"),
        (["--override", "trainer.total_epochs=ten"], "--override trainer.total_epochs=ten", "RLC402"),
        (["--set", "trainer.save_freq=x"], "--set trainer.save_freq=x", "RLC102"),
        (["--set", "trainer.nope=1"], "--set trainer.nope=1", "RLC101"),
        (["--set", "noequals"], "--set noequals", "RLC105"),
        (
            ["--override", "actor_rollout_ref.rollout.n=1"],
            "--override actor_rollout_ref.rollout.n=1",
            "RLC702",
        ),
    ],
    ids=["unknown-key", "wrong-type", "set-wrong-type", "set-unknown-field", "set-no-equals", "guard"],
)
def test_findings_about_command_line_values_name_the_argument(
    rlcat: Run, args: list[str], where: str, code: str
) -> None:
    result = rlcat("compile", RECIPE, *args)
    assert result.code in (1, 2)
    errors = [line for line in result.err.splitlines() if " error: " in line]
    assert errors == [next(line for line in errors if code in line)], result.err
    assert errors[0].startswith(f"{where} {code} error: "), errors[0]


@pytest.mark.parametrize(
    ("command", "option", "value", "choices"),
    [
        ("compile", "--format", "xml", ["overrides", "shell", "json", "yaml"]),
        ("compile", "--engine", "trt", ["vllm", "sglang"]),
        ("compile", "--mode", "async", ["colocate", "fully_async"]),
        ("validate", "--format", "html", ["text", "json", "github", "sarif"]),
        ("list", "--backend", "deepspeed", ["fsdp", "fsdp2", "megatron"]),
    ],
)
def test_closed_choices_come_from_their_registries(
    rlcat: Run, command: str, option: str, value: str, choices: list[str]
) -> None:
    args: list[Any] = [command, RECIPE] if command == "compile" else [command]
    result = rlcat(*args, option, value)
    assert result.code == 2
    assert result.out == ""
    assert option in result.err and f"'{value}'" in result.err
    for choice in choices:
        assert f"'{choice}'" in result.err, result.err
