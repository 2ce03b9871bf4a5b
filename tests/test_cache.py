"""The compile cache: a repeated `rlcat compile` replays its output without recompiling, and any
change to a file it read — a recipe, a catalog entry, a folder a name was looked up in — is a miss."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlcat import cli, entry

RECIPE = """\
name: mine
extends: gsm8k_qwen3_8b_fsdp
summary: my variant
batch:
  train_batch_size: 512
  mini_batch_size: 128
  responses_per_prompt: 5
  max_prompt_length: 1024
  max_response_length: 2048
  dynamic_batch_size: true
"""


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("RLCAT_CACHE_DIR", str(folder))
    monkeypatch.delenv("RLCAT_NO_CACHE", raising=False)
    return folder


@pytest.fixture
def compiles(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """Every call that reached the real compiler (a cache hit never does)."""
    calls: list[list[str]] = []
    real = cli.main

    def spy(argv: list[str] | None = None) -> int:
        calls.append(list(argv or []))
        return real(argv)

    monkeypatch.setattr(cli, "main", spy)
    return calls


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    capsys.readouterr()
    code = entry.main(list(argv))
    return code, capsys.readouterr().out


def test_hit_replays_identical_output(
    cache_dir: Path, compiles: list[list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    args = ("compile", "geo3k_megatron_4_4", "--platform", "rocm")
    first = _run(capsys, *args)
    second = _run(capsys, *args)
    assert first == second
    assert first[0] == 0 and "actor_rollout_ref.rollout.name=vllm" in first[1]
    assert len(compiles) == 1


def test_changed_recipe_is_a_miss(
    tmp_path: Path, cache_dir: Path, compiles: list[list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    user = tmp_path / "user"
    (user / "recipes").mkdir(parents=True)
    recipe = user / "recipes" / "mine.yaml"
    recipe.write_text(RECIPE)
    args = ("compile", "mine", "--catalog", str(user))
    _, before = _run(capsys, *args)
    recipe.write_text(RECIPE.replace("mini_batch_size: 128", "mini_batch_size: 64"))
    _, after = _run(capsys, *args)
    assert "actor_rollout_ref.actor.ppo_mini_batch_size=128" in before
    assert "actor_rollout_ref.actor.ppo_mini_batch_size=64" in after
    assert len(compiles) == 2


def test_new_file_that_shadows_a_name_is_a_miss(
    tmp_path: Path, cache_dir: Path, compiles: list[list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    user = tmp_path / "user"
    (user / "recipes" / "team").mkdir(parents=True)
    args = ("compile", "gsm8k_qwen3_8b_fsdp", "--catalog", str(user))
    _, before = _run(capsys, *args)
    # a user recipe of the same name, in a nested folder, now wins the lookup
    (user / "recipes" / "team" / "gsm8k_qwen3_8b_fsdp.yaml").write_text(
        RECIPE.replace("name: mine", "name: gsm8k_qwen3_8b_fsdp").replace(
            "extends: gsm8k_qwen3_8b_fsdp\n", ""
        )
        + "algorithm: grpo\nbackend: fsdp\nengine: vllm\nmode: colocate\nmodel: qwen3_8b\ndataset: gsm8k\n"
        "actor: {optim: {lr: 2.0e-6}}\n"
    )
    _, after = _run(capsys, *args)
    assert before != after and "actor.optim.lr=2e-06" in after
    assert len(compiles) == 2


def test_output_file_is_written_again_on_a_hit(
    tmp_path: Path, cache_dir: Path, compiles: list[list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "launch.sh"
    args = ("compile", "dapo_math_fsdp2_4_4", "--format", "shell", "-o", str(out))
    assert _run(capsys, *args)[0] == 0
    text = out.read_text()
    out.unlink()
    assert _run(capsys, *args)[0] == 0
    assert out.read_text() == text
    assert len(compiles) == 1


def test_failures_are_not_cached(
    cache_dir: Path, compiles: list[list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    for _ in range(2):
        assert entry.main(["compile", "no_such_recipe"]) == 2
    assert len(compiles) == 2
    assert not cache_dir.exists() or not any(cache_dir.iterdir())


def test_no_cache_switch(
    cache_dir: Path,
    compiles: list[list[str]],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("RLCAT_NO_CACHE", "1")
    for _ in range(2):
        assert _run(capsys, "compile", "geo3k_megatron_4_4")[0] == 0
    assert len(compiles) == 2
