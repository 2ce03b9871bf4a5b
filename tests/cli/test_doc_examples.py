"""Every `rlcat ...` example of README.md and of the pages of docs/, run in-process against a fresh
team repository made by `rlcat init` (one scaffold for the module, a copy of it per page), each
page's examples in order, as a reader types them. The files an example reads are put where it names
them first (INPUTS); once a plan is compiled into a run folder (`--run-dir`), the folder gets the
metrics file the run would write. An example that cannot run here is listed in NOT_RUN with the
reason; a page whose commands a test of its own runs is in RUN_BY_THEIR_TEST (docs/cli.md: the help
examples). The generated catalog pages (docs/recipes/, platforms/, ...) show each cell's compile
command inside tabs, indented: `rlcat docs build` ran that very compile to write the page
(tests/e2e/test_docs_generate.py), so they are not examples a reader types in order."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from conftest import REPO, Result

Run = Callable[..., Result]
SOURCE = "git+https://git.example.com/ml/rlcat.git@v0.1.0"
UPSTREAM_SCRIPT = (
    REPO / "tests" / "data" / "upstream_scripts" / "examples__grpo_trainer__run_qwen3_8b_fsdp.sh"
)
USER_RECIPE = "name: recipe\nsummary: a recipe of the reader's own\nextends: gsm8k_qwen3_8b_fsdp\n"

# Examples that cannot run here, each with the reason (the text as the page writes it, comment aside).
NOT_RUN = {
    "rlcat import run.sh -o my_catalog --whole": "an illustration of the report on a script with one "
    "difference (its output abridged); tests/verl/test_import_whole.py runs --whole on the 64 reference "
    "scripts",
    "rlcat lint tests/data/lint/verl_only.sh "
    "--verl-python ~/.cache/rlcat/verl-oracle/verl-0.9.1/bin/python": (
        "needs verl's oracle environment (`rlcat dev verl-oracle`); tests/oracle/test_native.py runs it "
        "and compares its output with the page"
    ),
    "rlcat launch gsm8k_qwen3_8b_fsdp --platform rocm --target ray-job --ray-auth-mode token --address "
    "http://head:8265 --submit --wait": "submits to a Ray cluster of GPUs (tests/e2e/test_launch_ray.py "
    "submits and follows jobs on a real Ray cluster)",
    "rlcat launch gsm8k_qwen3_8b_fsdp --platform rocm --target ray-job --ray-auth-mode token --submit --wait "
    "--address http://HEAD:8265": "submits to a Ray cluster of GPUs (tests/e2e/test_launch_ray.py)",
    "rlcat dev fetch-verl": "downloads verl's trees from the package index (network); the help example "
    "runs where everything is fetched already (tests/cli/test_cli.py)",
    "rlcat dev verl-oracle [--release X]": "a synopsis ([--release X]); it builds environments of "
    "gigabytes (tests/oracle/test_runner.py)",
    "rlcat dev verl-index [--check]": "a synopsis; it rewrites rlcat's own checkout "
    "(tests/verl/test_index_fresh.py runs --check)",
    "rlcat dev schemas [--check]": "a synopsis; it rewrites rlcat's own checkout (its help example runs)",
    "rlcat docs build [--check]": "a synopsis; building the site takes tens of CPU seconds "
    "(tests/e2e/test_docs_site.py builds it)",
    "rlcat docs build": "regenerates rlcat's own docs/ and builds the site (tests/e2e/test_docs_site.py)",
    "rlcat docs build --check": "generates every page of rlcat's own docs (tests/e2e/test_docs_generate.py)",
    "rlcat docs serve --port 8000": "serves until Ctrl-C (tests/e2e/test_docs_site.py serves a build)",
    "rlcat docs build --catalog team-catalog --out site": "builds a MkDocs site of a team's catalog "
    "(tests/e2e/test_team_docs.py)",
    "rlcat docs serve --catalog team-catalog": "serves until Ctrl-C (tests/e2e/test_team_docs.py)",
    "rlcat docs build --catalog team-catalog --no-builtin --out site": "builds a MkDocs site "
    "(tests/e2e/test_team_docs.py)",
    "rlcat dev schema-coverage": "compiles every built-in recipe on every platform "
    "(tests/cli/test_schema_coverage.py)",
    "rlcat dev schema-coverage --format json --top 40": "compiles every built-in recipe on every "
    "platform (tests/cli/test_schema_coverage.py)",
    "rlcat import run.sh -o my_catalog [--env NAME=VALUE]...": "a synopsis ([--env NAME=VALUE]...)",
    "rlcat import SCRIPT -o DIR --name NAME --provenance OWNER/REPO:PATH@COMMIT": "a synopsis "
    "(placeholders in capitals)",
}
# Pages whose commands a test of its own runs in order, checking more than their exit codes.
RUN_BY_THEIR_TEST = {
    "docs/team-repository.md": "tests/cli/test_init.py::test_guide_commands_run_in_order",
    "docs/cli.md": "tests/cli/test_cli.py::test_help_examples_run",  # the help screens' examples
}
# Examples whose exit code is not 0, and why.
EXIT_CODES = {
    # the page shows its findings
    "rlcat lint tests/data/lint/plus_misuse.sh": 1,
    # a command line of a few overrides makes a recipe verl would refuse (no micro-batch size:
    # RLC703), which import reports; `...` stands for the rest of a real command line
    "rlcat import -o from_cli -- python3 -m verl.trainer.main_ppo data.train_batch_size=1024 ...": 1,
    "rlcat import -o my_catalog -- python3 -m verl.trainer.main_ppo data.train_batch_size=256 "
    "trainer.nnodes=2": 1,
}
# What an example reads, put where it names it: the argument → the files it stands for (path → text).
LAUNCH_SCRIPT = REPO / "tests" / "data" / "lint" / "clean.sh"  # a verl launch with no findings


def _text(path: Path) -> Callable[[], str]:
    return lambda: path.read_text(encoding="utf-8")


def _hydra_run() -> dict[str, Callable[[], str]]:
    """A past run's .hydra/ folder as verl's Hydra leaves it: the overrides it was started with (a
    built-in recipe's, with the data paths written out) and hydra.yaml naming the entry config."""

    def overrides() -> str:
        golden = (REPO / "tests/golden/gsm8k_qwen3_8b_fsdp/cuda.txt").read_text(encoding="utf-8")
        lines = [line.replace("${oc.env:HOME}", "/home/me") for line in golden.splitlines()]
        return yaml.safe_dump([line for line in lines if line and not line.startswith("#")])

    hydra = {"hydra": {"job": {"name": "main_ppo", "config_name": "ppo_trainer"}}}
    return {"overrides.yaml": overrides, "hydra.yaml": lambda: yaml.safe_dump(hydra)}


INPUTS: dict[str, dict[str, Callable[[], str]]] = {
    "my/recipe.yaml": {"": lambda: USER_RECIPE},
    "scripts/": {"run_qwen3_8b.sh": _text(LAUNCH_SCRIPT)},
    "run_qwen3_8b.sh": {"": _text(LAUNCH_SCRIPT)},
    "examples/grpo_trainer/run_qwen3_8b_fsdp.sh": {"": _text(UPSTREAM_SCRIPT)},
    "tests/data/lint/plus_misuse.sh": {"": _text(REPO / "tests/data/lint/plus_misuse.sh")},
    "tests/data/lint/renamed_keys.sh": {"": _text(REPO / "tests/data/lint/renamed_keys.sh")},
    "outputs/2026-11-30/.hydra/overrides.yaml": {f"../{k}": v for k, v in _hydra_run().items()},
    "outputs/2026-01-01/12-00-00/.hydra/overrides.yaml": {f"../{k}": v for k, v in _hydra_run().items()},
}
VAL_KEY = "val-core/openai/gsm8k/reward/mean@1"


@dataclass(frozen=True)
class Example:
    page: str
    line: int
    text: str  # the command as the page writes it, without its comment
    words: list[str]
    then_cd: str | None  # `&& cd DIR` after it


def _pages() -> list[Path]:
    return [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]


def page_examples(page: Path) -> list[Example]:
    """The `rlcat` commands of a page's shell blocks (bash, sh, console: there only the `$ ` lines
    when the block has any), continuation lines joined, in order."""
    text = page.read_text(encoding="utf-8")
    found = []
    for block in re.finditer(r"^``` ?(bash|sh|shell|console)\n(.*?)^```$", text, re.M | re.S):
        start = text.count("\n", 0, block.start(2)) + 1
        lines = block.group(2).splitlines()
        prompted = block.group(1) == "console" and any(line.startswith("$ ") for line in lines)
        joined: list[tuple[int, str]] = []
        for number, line in enumerate(lines, start):
            if joined and joined[-1][1].endswith("\\"):
                joined[-1] = (joined[-1][0], joined[-1][1][:-1] + " " + line.strip())
            else:
                joined.append((number, line))
        for number, line in joined:
            if prompted and not line.startswith("$ "):
                continue
            command = line.removeprefix("$ ") if prompted else line
            if "rlcat" not in command:
                continue  # other tools' lines (a dataset's preprocessing, sbatch, kubectl)
            words = shlex.split(command, comments=True)
            segments: list[list[str]] = [[]]
            for word in words:
                segments.append([]) if word == "&&" else segments[-1].append(word)
            for i, segment in enumerate(segments):
                if segment[:1] != ["rlcat"]:
                    continue
                after = segments[i + 1] if i + 1 < len(segments) else []
                then_cd = after[1] if after[:1] == ["cd"] else None
                shown = page.relative_to(REPO).as_posix()
                found.append(Example(shown, number, " ".join(segment), segment, then_cd))
    return found


EXAMPLES = {page.relative_to(REPO).as_posix(): page_examples(page) for page in _pages()}


@pytest.fixture(scope="module")
def scaffold(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A team repository as `rlcat init` writes it (once for the module; each page runs in a copy)."""
    from rlcat.cli import main

    root = tmp_path_factory.mktemp("scaffold") / "team"
    assert main(["init", str(root), "--rlcat-source", SOURCE]) == 0
    return root


def _put_inputs(words: list[str], cwd: Path) -> None:
    for word in words:
        for relative, text in INPUTS.get(word, {}).items():
            path = Path(os.path.normpath(cwd / word / relative)) if relative else cwd / word
            if not path.exists():
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text(), encoding="utf-8")


def _the_run_ran(words: list[str], cwd: Path, number: int) -> None:
    """What verl's file logger writes into a run folder: a validation before training, three steps
    and a last validation (the second run of a page scores higher and steps faster)."""
    folder = cwd / words[words.index("--run-dir") + 1]
    lines = [{"step": 0, "data": {VAL_KEY: 0.3}}]
    lines += [
        {"step": s, "data": {"timing_s/step": 200.0 - 10 * number + s, "perf/throughput": 900.0}}
        for s in (1, 2, 3)
    ]
    lines.append({"step": 3, "data": {VAL_KEY: 0.3 + 0.05 * number}})
    text = "".join(json.dumps(line) + "\n" for line in lines)
    (folder / "metrics.jsonl").write_text(text, encoding="utf-8")


def run_page(page: str, rlcat: Run, cwd: Path) -> dict[str, Result]:
    """Run the page's examples in order in `cwd`; each example's result by its text."""
    os.chdir(cwd)
    done: dict[str, Result] = {}
    runs = 0
    for example in EXAMPLES[page]:
        if example.text in NOT_RUN:
            continue
        _put_inputs(example.words[1:], Path.cwd())
        r = rlcat(*example.words[1:])
        expected = EXIT_CODES.get(example.text, 0)
        assert r.code == expected, (
            f"{page}:{example.line}: `{example.text}` exited {r.code}\n{r.out}\n{r.err}"
        )
        assert "Traceback" not in r.err
        done[example.text] = r
        if "--run-dir" in example.words:
            runs += 1
            _the_run_ran(example.words, Path.cwd(), runs)
        if example.then_cd:
            os.chdir(example.then_cd)
    return done


# Pages whose examples take seconds of CPU (imports proved by a round trip, a whole matrix, a dozen
# compiles): in the slow tier.
SLOW_PAGES = {"README.md", "docs/import.md"}


@pytest.mark.parametrize(
    "page",
    [
        pytest.param(p, marks=[pytest.mark.slow] if p in SLOW_PAGES else [])
        for p in EXAMPLES
        if EXAMPLES[p] and p not in RUN_BY_THEIR_TEST
    ],
)
def test_page_examples_run(
    page: str, rlcat: Run, scaffold: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("RLCAT_PATH", raising=False)
    monkeypatch.chdir(tmp_path)
    shutil.copytree(scaffold, tmp_path / "team")
    done = run_page(page, rlcat, tmp_path / "team")
    assert done or all(e.text in NOT_RUN for e in EXAMPLES[page])
    if page == "README.md":
        _readme_runs_compare(done, rlcat)


def _readme_runs_compare(done: dict[str, Result], rlcat: Run) -> None:
    """The README's runs, compared by folder and by the recorded run's name; a name that is neither
    (`r1`, as a reader may type it) says what it may have meant."""
    by_folder = done["rlcat runs compare runs/r1 runs/r2"]
    by_name = done["rlcat runs compare gsm8k_qwen3_8b_fsdp-rocm-r1 runs/r2"]
    changed = "~ actor_rollout_ref.actor.ppo_mini_batch_size: 256 -> 128"
    assert changed in by_folder.out and changed in by_name.out, by_name.out
    assert "step_time_median" in by_name.out
    bare = rlcat("runs", "compare", "r1", "r2")
    assert bare.code == 2 and "RLC202 error: 'r1' is neither a run folder nor a recorded result" in bare.err
    assert "did you mean the run folder runs/r1 or the result gsm8k_qwen3_8b_fsdp-rocm-r1?" in bare.err
    typo = rlcat("runs", "compare", "gsm8k_qwen3_8b_fsdp-rocm-r3", "runs/r2")
    assert typo.code == 2 and "did you mean the result gsm8k_qwen3_8b_fsdp-rocm-r1 " in typo.err, typo.err


def test_every_example_is_run_or_says_why_not() -> None:
    shown = {e.text for examples in EXAMPLES.values() for e in examples}
    assert sorted(set(NOT_RUN) - shown) == [], "NOT_RUN names examples no page shows any longer"
    assert sorted(set(EXIT_CODES) - shown) == []
    for page, runner in RUN_BY_THEIR_TEST.items():
        assert EXAMPLES[page], page
        path, _, test = runner.partition("::")
        assert f"def {test}(" in (REPO / path).read_text(encoding="utf-8"), runner
    assert len(shown) > 40, "the examples are found"
