"""The launch pages show what rlcat writes: each docs/launch page's worked example is run as the page
gives it, and its excerpt of the artifact is checked against the output. In an excerpt, a line that
holds `...` stands for lines left out or shortened; every other line is the artifact's own, and each
run of such lines stands in the artifact as it is, in the page's order."""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import SLURM_SITE, Result

Run = Callable[..., Result]
PAGES = Path(__file__).resolve().parents[2] / "docs" / "launch"
BLOCK = re.compile(r"```(\w+)\n(.*?)```", re.S)


def worked_example(page: Path) -> tuple[list[str], str]:
    """The page's `rlcat launch` command (its first, in the section's first code block; --emit
    left out, so the artifact is printed) and the excerpt (the section's second code block)."""
    text = page.read_text(encoding="utf-8")
    section = text[text.index("## Worked example") :]
    (_, commands), (_, excerpt) = BLOCK.findall(section)[:2]
    line = next(x for x in commands.replace("\\\n", " ").splitlines() if x.startswith("rlcat launch"))
    words = shlex.split(line, comments=True)
    if "--emit" in words:
        del words[words.index("--emit") : words.index("--emit") + 2]
    return words[1:], excerpt


def runs(excerpt: str) -> list[list[str]]:
    """The excerpt's runs of verbatim lines (split at each line that holds `...`)."""
    found: list[list[str]] = [[]]
    for line in excerpt.rstrip("\n").split("\n"):
        if "..." in line:
            found.append([])
        else:
            found[-1].append(line)
    return [run for run in found if any(line.strip() for line in run)]


def find_in_order(lines: list[str], wanted: list[list[str]]) -> list[str]:
    """The runs of `wanted` that do not stand in `lines` as they are, after the run before."""
    missing, start = [], 0
    for run in wanted:
        at = next(
            (i for i in range(start, len(lines) - len(run) + 1) if lines[i : i + len(run)] == run), None
        )
        if at is None:
            missing.append("\n".join(run))
        else:
            start = at + len(run)
    return missing


@pytest.mark.parametrize("page", sorted(PAGES.glob("*.md")), ids=lambda p: p.stem)
def test_the_worked_example_shows_the_artifact(rlcat: Run, page: Path) -> None:
    args, excerpt = worked_example(page)
    result = rlcat(*args)
    assert result.code == 0, result.err
    wanted = runs(excerpt)
    assert len(wanted) >= 3  # an excerpt, not a placeholder
    assert find_in_order(result.out.split("\n"), wanted) == []


def test_seed_003_on_cuda_needs_an_image_and_an_auth_mode(rlcat: Run) -> None:
    """docs/launch/slurm.md: what the seed-003 launch says on the cuda profile, and how its script
    differs from the ROCm one the page shows."""
    command = ("launch", "ppo_qwen2_7b_gsm8k_2x8", "--platform", "cuda", "--target", "slurm")
    alone = rlcat(*command, "--container", "docker")
    assert alone.code == 2 and "RLC1006" in alone.err and alone.out == ""
    no_image = rlcat(*command, "--container", "docker", "--ray-auth-mode", "disabled")
    assert no_image.code == 1 and alone.out == ""
    assert (
        "RLC1011" in no_image.err
        and "--container docker needs an image, and the cuda profile names none" in (no_image.err)
    )
    cuda = rlcat(
        *command, "--container", "docker", "--ray-auth-mode", "disabled", "--image", "REGISTRY/verl:TAG",
        *SLURM_SITE,
    )  # fmt: skip
    rocm = rlcat(
        *command[:3],
        "rocm",
        *command[4:],
        "--container",
        "docker",
        "--ray-auth-mode",
        "disabled",
        *SLURM_SITE,
    )
    assert cuda.code == rocm.code == 0
    rocm_lines = set(rocm.out.replace(" env -u ROCR_VISIBLE_DEVICES", "").split("\n"))
    cuda_lines = set(cuda.out.split("\n"))
    assert "    --network=host --gpus=all --ipc=host \\" in cuda_lines - rocm_lines
    assert {"    --device /dev/kfd \\", "    --device /dev/dri \\"} <= rocm_lines - cuda_lines
    assert "ROCR_VISIBLE_DEVICES" not in cuda.out
    assert "        actor_rollout_ref.rollout.enforce_eager=False \\" in rocm_lines - cuda_lines
    # beyond the header, the image, the docker flags, the env and the rollout overrides, they agree
    profile_lines = re.compile(
        r"#|export |    -e |    --|    [A-Z_]+ \S+ \\$|        \S*actor_rollout_ref\.rollout\."
    )
    differ = {line for line in rocm_lines ^ cuda_lines if not profile_lines.match(line)}
    assert differ == {
        "    verl-rocm:0.9.0.amd0-rocm sleep infinity ||",
        "    REGISTRY/verl:TAG sleep infinity ||",
        "    rlcat-image verl-rocm:0.9.0.amd0-rocm docker missing ||",
        "    rlcat-image REGISTRY/verl:TAG docker missing ||",
    }
