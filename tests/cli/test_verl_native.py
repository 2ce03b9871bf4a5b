"""`--verl-native` where verl is not there, and the bounds of the process that asks it. The answers of
the real verl are tests/oracle/test_native.py."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from rlcat.diagnostics import Severity
from rlcat.native import process
from rlcat.native.checks import Ask, NativeChecks, culprit, findings, has_verl
from rlcat.native.process import RunnerGone, VerlProcess

from conftest import REPO, Result

Run = Callable[..., Result]
SCRIPT = str(REPO / "tests" / "data" / "lint" / "clean.sh")
NOT_RUN = "--verl-native: verl's own checks were not run: "
COMMANDS = {
    "lint": ("lint", SCRIPT),
    "validate": ("validate", str(REPO / "recipes" / "gsm8k_qwen3_8b_fsdp.yaml"), "-p", "cuda"),
    "compile": ("compile", "gsm8k_qwen3_8b_fsdp", "-p", "cuda"),
}


@pytest.mark.parametrize("command", COMMANDS)
def test_without_verl_one_line_says_so_and_nothing_else_changes(rlcat: Run, command: str) -> None:
    if has_verl():
        pytest.skip("verl is importable here: --verl-native would run it")
    plain = rlcat(*COMMANDS[command])
    native = rlcat(*COMMANDS[command], "--verl-native")
    assert (native.code, native.out) == (plain.code, plain.out)
    assert native.err.startswith(plain.err)
    (line,) = native.err[len(plain.err) :].splitlines()
    assert (
        line == f"{NOT_RUN}no verl in {sys.executable} (give --verl-python PATH: the Python of a verl image)"
    )


def test_a_python_that_is_not_there_is_the_one_line(rlcat: Run, tmp_path: Path) -> None:
    missing = tmp_path / "bin" / "python"
    plain = rlcat("lint", SCRIPT)
    native = rlcat("lint", SCRIPT, "--verl-python", str(missing))
    assert (native.code, native.out) == (plain.code, plain.out)
    assert native.err == plain.err + f"{NOT_RUN}--verl-python {missing} is not an executable file\n"


def test_a_python_without_verl_is_the_one_line(rlcat: Run) -> None:
    if importlib.util.find_spec("torch") is not None:
        pytest.skip("this interpreter has torch: the runner would import it")
    plain = rlcat("lint", SCRIPT)
    native = rlcat("lint", SCRIPT, "--verl-python", sys.executable)
    assert (native.code, native.out) == (plain.code, plain.out)
    (line,) = native.err[len(plain.err) :].splitlines()
    # the runner imports torch first (verl cannot import without it), and says what failed
    assert (
        line
        == f"{NOT_RUN}`import verl` fails in {sys.executable}: ModuleNotFoundError: No module named 'torch'"
    )


def test_the_runner_is_bounded_in_memory_and_killed_by_its_pid_when_late(tmp_path: Path) -> None:
    silent = tmp_path / "python"
    silent.write_text("#!/bin/sh\nexec sleep 60\n", encoding="utf-8")
    silent.chmod(0o755)
    with VerlProcess(silent, timeout=1) as runner:
        assert runner._process is not None
        pid = runner._process.pid
        limits = Path(f"/proc/{pid}/limits").read_text(encoding="utf-8")
        data = next(line for line in limits.splitlines() if line.startswith("Max data size"))
        assert data.split()[3:5] == [str(process.MEMORY_LIMIT)] * 2
        with pytest.raises(RunnerGone, match=r"no answer within 1 s") as gone:
            runner.ready()
        assert gone.value.late
        assert runner._process.returncode == -9  # SIGKILL, to that PID only


def _ask(*keys: str) -> Ask:
    origins = {key: {"file": "run.sh", "line": n, "col": 5} for n, key in enumerate(keys, 1)}
    return Ask("ppo_trainer", (), {}, origins, {"file": "run.sh"})


def test_the_finding_is_at_the_key_verls_message_is_about() -> None:
    rollout = "actor_rollout_ref.rollout"
    ask = _ask(
        f"{rollout}.tensor_model_parallel_size", f"{rollout}.expert_parallel_size", "trainer.n_gpus_per_node"
    )
    message = "expert_parallel_size must be equal to tensor_model_parallel_size * data_parallel_size"
    # the key of the section judged that the message names first
    assert culprit({"message": message, "section": rollout}, ask) == f"{rollout}.expert_parallel_size"
    # a key the message names whole wins, wherever it stands
    whole = f"set `{rollout}.tensor_model_parallel_size=2`: {message}"
    assert culprit({"message": whole, "section": rollout}, ask) == f"{rollout}.tensor_model_parallel_size"
    # the key verl's exception carries wins over all; a message about no key of the plan has none
    assert culprit({"message": message, "key": "trainer.n_gpus_per_node"}, ask) == "trainer.n_gpus_per_node"
    assert culprit({"message": "the tokenizer has no chat template", "section": rollout}, ask) is None


def test_the_runner_gets_no_secret_of_rlcats_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A config's `${oc.env:NAME}` is resolved by verl's checks, and a refusal quotes values: the
    runner's environment holds what an interpreter needs, not a CI job's tokens."""
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_secret")
    seen = tmp_path / "env.txt"
    python = tmp_path / "python"
    python.write_text(f"#!/bin/sh\nenv > {seen}\n", encoding="utf-8")
    python.chmod(0o755)
    with VerlProcess(python, timeout=5) as runner, pytest.raises(RunnerGone):
        runner.ready()  # it wrote its environment and ended without a greeting
    names = {line.split("=", 1)[0] for line in seen.read_text(encoding="utf-8").splitlines()}
    assert "GITHUB_TOKEN" not in names
    assert {"PATH", "HOME", "PWD"} <= names  # `$HOME` and `$PWD` paths resolve as a launch from here would


def test_a_plan_that_names_code_is_not_handed_to_verl(tmp_path: Path) -> None:
    """A `_target_` is what Hydra instantiates when verl builds a section's dataclass: a pull request
    could name any callable there. Such a plan is not asked (no runner even starts), and says so."""
    said: list[str] = []
    target = "actor_rollout_ref.rollout._target_"
    ask = Ask(
        "ppo_trainer",
        ("algorithm.adv_estimator=grpo", f"{target}=os.system"),
        {},
        {target: {"file": "run.sh", "line": 9, "col": 5}},
        {"file": "run.sh"},
    )
    with NativeChecks(tmp_path / "no-python", said.append) as native:
        (finding,) = native.judge(ask)
    assert said == [] and native.unavailable is None
    assert (finding.code, finding.severity, finding.line) == ("RLC451", Severity.WARNING, 9)
    assert finding.message == f"not handed to verl: {target} names code verl's checks would run"
    assert Ask("ppo_trainer", ("hydra.searchpath=[file:///tmp]",), {}, {}, {}).names_code() is not None
    nested = "+actor_rollout_ref.rollout.engine_kwargs.vllm.x={_target_:os.system,command:id}"
    assert Ask("ppo_trainer", (nested,), {}, {}, {}).names_code() == nested


def test_verls_words_are_shown_as_every_finding_is() -> None:
    """verl's message is quoted in a finding; whatever it holds, the finding is one line."""
    ask = _ask("actor_rollout_ref.rollout.mode")
    hostile = "mode 'x\n::error file=forged.py::owned\x1b[2J' removed"
    (finding,) = findings({"verdict": "refused", "message": hostile, "type": "ValueError"}, ask, "0.9.1")
    headline = finding.render().splitlines()[0]
    assert "\x1b" not in headline and headline.count("::error") == 1 and "\\n::error" in headline
    (late,) = findings({"verdict": "timeout", "message": "the case ran past its time"}, ask, "0.9.1")
    assert (late.code, late.file) == ("RLC451", "run.sh")
