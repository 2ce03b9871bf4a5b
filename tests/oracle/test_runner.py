"""The verl oracle itself: its runner's protocol and answers, its walls against the network, and the
command that builds its environments."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from typing import Any

import pytest

from rlcat.compile.assemble import Request, compile_request
from rlcat.dev import oracle_env
from rlcat.dev.verl_oracle import RUNNER, case_for

from conftest import Result, example_of, skip_without_oracle

pytestmark = [pytest.mark.oracle, pytest.mark.xdist_group("verl-oracle")]


@pytest.fixture(scope="module")
def oracle(verl_oracles: dict[str, Any]) -> Any:
    skip_without_oracle(verl_oracles, "0.9.1")
    return verl_oracles["0.9.1"]


def grpo_case(case_id: str, *overrides: str) -> dict[str, Any]:
    """The seed GRPO recipe's plan (its model a hub id), with `overrides` on the command line."""
    compiled = compile_request(Request("gsm8k_qwen3_8b_fsdp", "cuda"))
    return case_for(case_id, compiled, extra=overrides)


def test_greeting_names_what_it_runs(oracle: Any) -> None:
    hello = oracle.ready()
    assert hello["verl"] == "0.9.1"
    assert hello["torch"].startswith("2.13.0")


def test_verdicts_name_the_refusal(oracle: Any) -> None:
    accepted, plus_key, unknown = oracle.judge(
        [
            grpo_case("good"),
            grpo_case("plus", "+actor_rollout_ref.rollout.no_such_knob=1"),
            grpo_case("unknown", "actor_rollout_ref.rollout.no_such_knob=1"),
        ]
    )
    assert accepted["verdict"] == "accepted", accepted
    # the hub id was pointed at a local folder: the model was read, offline
    assert "actor_rollout_ref.model.path" in accepted["model_keys"]
    assert accepted["blocked"] == []
    assert plus_key["verdict"] == "refused"
    assert plus_key["type"] == "TypeError"
    assert plus_key["key"] == "actor_rollout_ref.rollout.no_such_knob"
    assert plus_key["at"].startswith("verl/") or "RolloutConfig" in plus_key["message"]
    # Hydra refuses a key the tree does not have, before any check of verl's
    assert unknown["verdict"] == "refused"
    assert unknown["stage"] == "compose"
    assert [r["id"] for r in (accepted, plus_key, unknown)] == ["good", "plus", "unknown"]


NETWORK_PROBE = """
import importlib.util, json, os, socket, sys
spec = importlib.util.spec_from_file_location("oracle_runner", sys.argv[1])
runner = importlib.util.module_from_spec(spec)
spec.loader.exec_module(runner)  # its top level: the offline variables and the audit hook
said = {name: os.environ.get(name) for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")}
server = socket.socket()
server.bind(("127.0.0.1", 0))
server.listen(1)
socket.create_connection(server.getsockname(), timeout=5).close()
said["loopback"] = "connected"
for name, call in (
    ("private", lambda: socket.socket().connect(("10.255.255.1", 9))),
    ("hub", lambda: socket.getaddrinfo("huggingface.co", 443)),
):
    try:
        call()
        said[name] = "connected"
    except ConnectionRefusedError as exc:
        said[name] = str(exc)
said["blocked"] = runner.BLOCKED
print(json.dumps(said))
"""


def test_the_runner_never_leaves_loopback() -> None:
    if not oracle_env.is_complete("0.9.1"):
        pytest.skip("no verl 0.9.1 oracle environment: build it with `rlcat dev verl-oracle --release 0.9.1`")
    python = str(oracle_env.env_python("0.9.1"))
    done = subprocess.run(
        [python, "-c", NETWORK_PROBE, str(RUNNER)], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    said = json.loads(done.stdout)
    assert said["HF_HUB_OFFLINE"] == said["TRANSFORMERS_OFFLINE"] == "1"
    assert said["loopback"] == "connected"
    assert "no network" in said["private"] and "10.255.255.1" in said["private"]
    assert "no network" in said["hub"]
    assert said["blocked"] == ["socket.connect 10.255.255.1", "socket.getaddrinfo huggingface.co"]


def test_build_command_reuses_the_environment(rlcat: Callable[..., Result]) -> None:
    if not oracle_env.is_complete("0.9.1"):
        pytest.skip("it would build the environment (minutes, network): run `rlcat dev verl-oracle` first")
    result = rlcat(*example_of("test_build_command_reuses_the_environment"))
    assert result.code == 0, result.err
    assert result.out.startswith(f"verl 0.9.1: {oracle_env.env_dir('0.9.1')} (reused; ")
    assert "verl 0.9.1" in result.out.split("(", 1)[1]


def test_identical_cases_are_judged_once_and_answered_in_order(oracle: Any) -> None:
    good, plus = grpo_case("good"), grpo_case("plus", "+actor_rollout_ref.rollout.no_such_knob=1")
    asked = [good, plus, {**good, "id": "good again"}, {**plus, "id": "plus again"}, {**good, "id": "last"}]
    replies = oracle.judge(asked)
    assert [r["id"] for r in replies] == ["good", "plus", "good again", "plus again", "last"]
    assert [r["verdict"] for r in replies] == ["accepted", "refused", "accepted", "refused", "accepted"]


def test_a_case_is_bounded_in_time_and_the_next_one_runs(oracle: Any) -> None:
    # 100,000 appended keys keep Hydra busy for far longer than the case's one second, on any machine
    flood = [f"+oracle_probe.k{i}=1" for i in range(100_000)]
    slow = {**grpo_case("slow", *flood), "timeout": 1}
    late, after = oracle.judge([slow, grpo_case("after")])
    assert late["verdict"] == "timeout"
    assert late["stage"] == "compose"
    assert after["verdict"] == "accepted", after


def test_a_shared_plan_composed_once_gives_what_a_whole_compose_gives(oracle: Any) -> None:
    """Cases that put overrides on one plan (`base`: the plan's own) are composed from one compose of
    the plan: each verdict must be the one a compose of the whole list gives, refusals included."""
    on_top = [
        ("data.train_batch_size=1024",),
        (
            "actor_rollout_ref.actor.use_dynamic_bsz=False",
            "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=3",
        ),
        ("actor_rollout_ref.rollout.mode=sync",),
        ("+actor_rollout_ref.actor.no_such_knob=1",),
        ("actor_rollout_ref.rollout.no_such_knob=1",),  # Hydra refuses a key the tree lacks
        ("+trainer.no_such_knob=1", "trainer.n_gpus_per_node=6"),
        ("~actor_rollout_ref.rollout.val_kwargs",),
        ("actor_rollout_ref.actor.loss_agg_mode=token_mean",),
    ]
    shared = [grpo_case(f"shared {n}", *extra) for n, extra in enumerate(on_top)]
    assert all(case["base"] > 0 for case in shared)
    whole = [
        {k: v for k, v in case.items() if k != "base"} | {"id": f"whole {n}"} for n, case in enumerate(shared)
    ]
    replies = oracle.judge([*shared, *whole])
    fields = ("verdict", "stage", "type", "message", "key")
    assert [[r.get(f) for f in fields] for r in replies[: len(shared)]] == [
        [r.get(f) for f in fields] for r in replies[len(shared) :]
    ]
    assert {r["verdict"] for r in replies} == {"accepted", "refused"}
