"""The command line: list, show and compile on the seed catalog, the help screens and their examples,
and the console script as installed."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from rlcat.cli.app import command_tree
from rlcat.dev import trees, wheelhouse

from conftest import EXAMPLES_RUN_BY_THEIR_TEST, REPO, SEED_RECIPES, UPSTREAM_RECIPES, Result, docs_checkout

RECIPES = REPO / "recipes"
ALL_RECIPES = sorted(SEED_RECIPES + UPSTREAM_RECIPES)  # what `rlcat list` shows


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Run from an empty folder (so -o paths land in tmp), with no user catalog from the environment."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("RLCAT_PATH", raising=False)


# --- reading the seed recipes without rlcat, to compute what list and show must say ---------------


def _deep_merge(base: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in patch.items():
        if isinstance(out.get(key), dict) and isinstance(value, dict):
            out[key] = _deep_merge(out[key], value)
        else:
            out[key] = value
    return out


def raw_recipe(name: str) -> dict[str, Any]:
    """A seed recipe as plain YAML, its `extends` chain merged by hand."""
    path = RECIPES / f"{name}.yaml"
    if not path.exists():
        path = RECIPES / "upstream" / f"{name}.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    parent = data.pop("extends", None)
    return _deep_merge(raw_recipe(parent), data) if parent else data


def trains_with(data: dict[str, Any]) -> str:
    """What the actor trains with: the backend, or on an FSDP backend the actor's own strategy."""
    strategy = data.get("parallelism", {}).get("actor", {}).get("strategy")
    return strategy if data["backend"] in ("fsdp", "fsdp2") and strategy else data["backend"]


def seeds_where(**fields: str) -> list[str]:
    def value(name: str, key: str) -> Any:
        data = raw_recipe(name)
        return trains_with(data) if key == "backend" else data[key]

    return sorted(n for n in ALL_RECIPES if all(value(n, k) == v for k, v in fields.items()))


def override_lines(text: str) -> list[str]:
    return text.splitlines()


# --- rlcat list ----------------------------------------------------------------------------------


def test_list_table_names_every_seed_recipe(rlcat: Callable[..., Result]) -> None:
    result = rlcat("list")
    assert result.code == 0, result.err
    assert SEED_RECIPES, "no seed recipes found"
    rows = result.out.splitlines()
    for name in SEED_RECIPES:
        assert any(row.split() and row.split()[0] == name for row in rows), f"{name} missing:\n{result.out}"


def test_list_json(rlcat: Callable[..., Result]) -> None:
    result = rlcat("list", "--format", "json")
    assert result.code == 0, result.err
    rows = json.loads(result.out)
    assert isinstance(rows, list)
    assert sorted(row["name"] for row in rows) == sorted(p.stem for p in RECIPES.rglob("*.yaml"))
    for row in rows:
        assert {"name", "algorithm", "backend", "engine", "mode", "summary"} <= set(row), row
        raw = raw_recipe(row["name"])
        for field in ("algorithm", "engine", "mode", "summary"):
            assert row[field] == raw[field], (row["name"], field)
        assert row["backend"] == trains_with(raw), row["name"]


@pytest.mark.parametrize(
    "filters",
    [
        {"backend": "megatron"},
        {"backend": "fsdp"},
        {"backend": "fsdp2"},
        {"algorithm": "grpo"},
        {"algorithm": "ppo"},
        {"algorithm": "dapo"},
        {"mode": "fully_async"},
        {"mode": "colocate"},
        {"backend": "megatron", "mode": "fully_async"},
        {"backend": "fsdp2", "algorithm": "ppo"},
    ],
    ids=lambda f: ",".join(f"{k}={v}" for k, v in f.items()),
)
def test_list_filters(rlcat: Callable[..., Result], filters: dict[str, str]) -> None:
    args = [a for k, v in filters.items() for a in (f"--{k}", v)]
    result = rlcat("list", *args, "--format", "json")
    assert result.code == 0, result.err
    assert sorted(row["name"] for row in json.loads(result.out)) == seeds_where(**filters)


def test_list_shows_what_each_recipe_trains_with(rlcat: Callable[..., Result]) -> None:
    """An imported `*_fsdp2_*` example is backend fsdp with the actor on FSDP2: `list` shows (and
    filters by) fsdp2, as the docs' recipe tables do; a `*_fsdp_*` one shows fsdp."""
    rows = {row["name"]: row["backend"] for row in json.loads(rlcat("list", "--format", "json").out)}
    fsdp2 = [name for name in rows if "_fsdp2_" in name]
    assert fsdp2 and {rows[name] for name in fsdp2} == {"fsdp2"}
    assert {rows[name] for name in rows if "_fsdp_" in name and "_fsdp2_" not in name} == {"fsdp"}
    assert rows == {name: trains_with(raw_recipe(name)) for name in rows}


def test_list_backend_megatron_is_exactly_the_megatron_recipes(rlcat: Callable[..., Result]) -> None:
    expected = seeds_where(backend="megatron")
    assert "gsm8k_qwen3_8b_megatron" in expected  # megatron only through `extends` overriding the backend
    result = rlcat("list", "--backend", "megatron")
    assert result.code == 0, result.err
    listed = sorted(row.split()[0] for row in result.out.splitlines()[1:] if row.strip() and row[0] != " ")
    assert listed == expected


# --- rlcat show ----------------------------------------------------------------------------------


def test_show_fills_in_defaults(rlcat: Callable[..., Result]) -> None:
    result = rlcat("show", "geo3k_megatron_4_4")
    assert result.code == 0, result.err
    data = yaml.safe_load(result.out)
    assert data["name"] == "geo3k_megatron_4_4"
    raw = raw_recipe("geo3k_megatron_4_4")
    assert "variants" not in raw  # so what show prints under variants is rlcat's default
    assert "vllm" in data["variants"]["engine"]
    assert "mode" in data["variants"]
    assert data["async"]["trigger_parameter_sync_step"] == raw["async"]["trigger_parameter_sync_step"]
    assert data["model"]["name"] == raw["model"]  # catalog entries are looked up and inlined
    assert data["model"]["hf_id"]
    assert data["dataset"]["name"] == raw["dataset"]
    assert data["batch"]["dynamic_batch_size"] is True
    assert "rocm" in data["platforms"]


def test_show_merges_the_platform_block(rlcat: Callable[..., Result]) -> None:
    result = rlcat("show", "geo3k_megatron_4_4", "--platform", "rocm")
    assert result.code == 0, result.err
    data = yaml.safe_load(result.out)
    rocm = raw_recipe("geo3k_megatron_4_4")["platforms"]["rocm"]
    assert data["batch"]["dynamic_batch_size"] is False
    assert data["batch"]["micro_batch_size_per_gpu"] == rocm["batch"]["micro_batch_size_per_gpu"]
    assert data["actor"]["megatron"]["vanilla_mbridge"] is True
    assert data["actor"]["megatron"]["use_mbridge"] is True  # merged, not replaced
    assert "platforms" not in data
    cuda = yaml.safe_load(rlcat("show", "geo3k_megatron_4_4", "--platform", "cuda").out)
    assert cuda["batch"]["dynamic_batch_size"] is True  # no cuda block: the recipe as written


def test_show_leaves_out_unset_fields_unless_all(rlcat: Callable[..., Result]) -> None:
    """By default only the fields with a value (a null is verl's default, said once in --all)."""
    short = yaml.safe_load(rlcat("show", "gsm8k_qwen3_8b_fsdp", "-p", "rocm").out)
    every = yaml.safe_load(rlcat("show", "gsm8k_qwen3_8b_fsdp", "--platform", "rocm", "--all").out)

    def leaves(node: object, path: str = "") -> dict[str, object]:
        if isinstance(node, dict):
            return {k: v for key, sub in node.items() for k, v in leaves(sub, f"{path}.{key}").items()}
        return {path: node}

    short_leaves, every_leaves = leaves(short), leaves(every)
    assert None not in short_leaves.values()
    assert {k: v for k, v in every_leaves.items() if v is not None} == short_leaves
    assert len(every_leaves) > len(short_leaves)  # the nulls are there with --all


def test_show_follows_extends(rlcat: Callable[..., Result]) -> None:
    result = rlcat("show", "gsm8k_qwen3_8b_megatron")
    assert result.code == 0, result.err
    data = yaml.safe_load(result.out)
    assert data["backend"] == "megatron"
    assert data["extends"] == "gsm8k_qwen3_8b_fsdp"
    assert data["batch"] == yaml.safe_load(rlcat("show", "gsm8k_qwen3_8b_fsdp").out)["batch"]


# --- rlcat compile -------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["overrides", "shell", "json", "yaml"])
def test_output_file_holds_what_stdout_shows(rlcat: Callable[..., Result], tmp_path: Path, fmt: str) -> None:
    printed = rlcat("compile", "geo3k_megatron_4_4", "--platform", "rocm", "--format", fmt)
    assert printed.code == 0, printed.err
    target = tmp_path / "deeper" / f"plan.{fmt}"
    written = rlcat("compile", "geo3k_megatron_4_4", "--platform", "rocm", "--format", fmt, "-o", str(target))
    assert written.code == 0, written.err
    assert written.out == ""
    assert written.err == printed.err  # notes go to stderr either way
    assert target.read_text(encoding="utf-8") == printed.out
    assert sorted(p.name for p in target.parent.iterdir()) == [target.name]  # no temporary file left


def test_engine_choice(rlcat: Callable[..., Result]) -> None:
    default = override_lines(rlcat("compile", "dapo_math_fsdp2_4_4").out)
    sglang = override_lines(rlcat("compile", "dapo_math_fsdp2_4_4", "--engine", "sglang").out)
    assert "actor_rollout_ref.rollout.name=vllm" in default
    assert "actor_rollout_ref.rollout.name=sglang" in sglang
    assert "actor_rollout_ref.rollout.name=vllm" not in sglang


def test_set_changes_a_recipe_field(rlcat: Callable[..., Result]) -> None:
    key = "actor_rollout_ref.actor.ppo_mini_batch_size"
    default = override_lines(rlcat("compile", "geo3k_megatron_4_4").out)
    assert f"{key}={raw_recipe('geo3k_megatron_4_4')['batch']['mini_batch_size']}" in default
    changed = rlcat("compile", "geo3k_megatron_4_4", "--set", "batch.mini_batch_size=64")
    assert changed.code == 0, changed.err
    lines = override_lines(changed.out)
    assert [line for line in lines if line.startswith(f"{key}=")] == [f"{key}=64"]
    assert [i for i, line in enumerate(lines) if line.startswith(f"{key}=")] == [
        i for i, line in enumerate(default) if line.startswith(f"{key}=")
    ]


@pytest.mark.parametrize(
    ("flag", "assignment"),
    [("--set", "actor.optim.lr="), ("--override", "actor_rollout_ref.actor.optim.lr=")],
)
def test_command_line_reads_numbers_as_recipe_files_do(
    rlcat: Callable[..., Result], flag: str, assignment: str
) -> None:
    """`1e-6` is a number in a recipe file (rlcat's loader reads it as YAML 1.2 does); --set and
    --override must read it the same way, not as the string '1e-6'."""
    with_dot = rlcat("compile", "gsm8k_qwen3_8b_fsdp", flag, assignment + "3.0e-6")
    assert with_dot.code == 0, with_dot.err
    assert "actor_rollout_ref.actor.optim.lr=3e-06" in override_lines(with_dot.out)
    plain = rlcat("compile", "gsm8k_qwen3_8b_fsdp", flag, assignment + "3e-6")
    assert plain.code == 0, f"{flag} {assignment}3e-6 refused:\n{plain.err}"
    assert plain.out == with_dot.out


def test_override_replaces_a_key_in_place_and_appends_a_new_one(rlcat: Callable[..., Result]) -> None:
    default = override_lines(rlcat("compile", "geo3k_megatron_4_4").out)
    changed = override_lines(rlcat("compile", "geo3k_megatron_4_4", "--override", "trainer.save_freq=7").out)
    # one line per key: the recipe's save_freq is replaced, in its place, not repeated
    assert [line for line in changed if line.startswith("trainer.save_freq=")] == ["trainer.save_freq=7"]
    assert len(changed) == len(default)
    assert [a for a, b in zip(default, changed, strict=True) if a != b] == [
        line for line in default if line.startswith("trainer.save_freq=")
    ]
    added = override_lines(
        rlcat("compile", "geo3k_megatron_4_4", "--override", "trainer.max_actor_ckpt_to_keep=3").out
    )
    assert added == [*default, "trainer.max_actor_ckpt_to_keep=3"]


def test_mode_the_recipe_does_not_allow_is_refused(rlcat: Callable[..., Result], tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    result = rlcat("compile", "geo3k_megatron_4_4", "--mode", "colocate", "-o", str(target))
    assert result.code == 2
    assert result.out == ""
    assert " RLC205 error: " in result.err
    assert "colocate" in result.err
    assert not target.exists()


# --- help screens and their examples -------------------------------------------------------------


def _commands() -> list[tuple[list[str], Any]]:
    """(path, command) for the root and every command and group below it."""
    found: list[tuple[list[str], Any]] = []

    def walk(command: Any, path: list[str]) -> None:
        found.append((path, command))
        for name, sub in sorted(getattr(command, "commands", {}).items()):
            if not getattr(sub, "hidden", False):
                walk(sub, [*path, name])

    walk(command_tree(), [])
    return found


COMMANDS = _commands()
# every example line of every epilog: (the command whose help shows it, the line)
ALL_EXAMPLES = [
    (path, line.strip())
    for path, command in COMMANDS
    for line in (command.epilog or "").splitlines()
    if line.strip().startswith("rlcat ")
]
# each distinct command line runs once, even when a group's help repeats a command's example
EXAMPLES = list({example: (path, example) for path, example in reversed(ALL_EXAMPLES)}.values())[::-1]
HEADINGS = ("Arguments:", "Options:", "Commands:")


def test_every_command_is_found() -> None:
    names = {" ".join(path) for path, _ in COMMANDS}
    assert {"", "compile", "list", "show", "dev"} <= names


@pytest.mark.parametrize(("path", "command"), COMMANDS, ids=[" ".join(p) or "rlcat" for p, _ in COMMANDS])
def test_help_ends_with_examples(rlcat: Callable[..., Result], path: list[str], command: Any) -> None:
    result = rlcat(*path, "--help")
    assert result.code == 0, result.err
    assert result.out.startswith("Usage: rlcat"), result.out
    if hasattr(command, "commands"):
        return  # a group lists its commands; examples are optional there
    lines = result.out.rstrip().splitlines()
    examples = [i for i, line in enumerate(lines) if line.strip() == "Examples:"]
    assert examples, f"`rlcat {' '.join(path)} --help` has no Examples section:\n{result.out}"
    start = examples[-1]
    assert all(i < start for i, line in enumerate(lines) if line in HEADINGS), "a section follows Examples"
    assert any(line.strip().startswith("rlcat ") for line in lines[start + 1 :])
    assert all(line == "" or line.startswith("  ") for line in lines[start + 1 :])


def test_every_command_has_examples() -> None:
    with_examples = {" ".join(path) for path, _ in ALL_EXAMPLES}
    leaves = [" ".join(path) for path, command in COMMANDS if not hasattr(command, "commands")]
    assert [name for name in leaves if name not in with_examples] == []


EXAMPLE_SCRIPT = REPO / "tests" / "data" / "lint" / "clean.sh"
EXAMPLE_RECIPE = """\
name: {name}
summary: a user recipe for the help examples
extends: gsm8k_qwen3_8b_fsdp
"""


def _prepare(args: list[str], cwd: Path) -> None:
    """Create the user files an example names (e.g. my_recipes/run.yaml, run.sh) in the scratch folder."""
    for arg in args:
        if arg.endswith((".yaml", ".yml")) and "/" in arg and not (cwd / arg).exists():
            path = cwd / arg
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(EXAMPLE_RECIPE.format(name=path.stem), encoding="utf-8")
        if args[0] in ("lint", "import") and arg.endswith(".sh") and not (cwd / arg).exists():
            path = cwd / arg
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(EXAMPLE_SCRIPT.read_text(encoding="utf-8"), encoding="utf-8")


def _prepare_runs(args: list[str], cwd: Path) -> None:
    """For `rlcat runs` examples: a project (rlcat.toml) to record into, the run folders they name
    (compiled with --run-dir, a few steps of metrics), the --catalog folder, and the recorded runs
    they name (RECIPE-rocm-FOLDER, recorded from runs/FOLDER)."""
    from rlcat.cli import main

    (cwd / "rlcat.toml").write_text("", encoding="utf-8")
    if "--catalog" in args:
        (cwd / args[args.index("--catalog") + 1]).mkdir(exist_ok=True)
    names = [a for a in args if a.startswith("dapo_math_fsdp2_4_4-rocm-")]
    recorded = [f"runs/{name.removeprefix('dapo_math_fsdp2_4_4-rocm-')}" for name in names]
    folders = [a for a in args if a.startswith("runs/")] + recorded
    for folder in dict.fromkeys(folders):
        if (cwd / folder / "plan.json").exists():
            continue
        assert main(["compile", "dapo_math_fsdp2_4_4", "-p", "rocm", "--run-dir", folder]) == 0
        lines = [{"step": 0, "data": {"val-core/math_dapo/acc/mean@1": 0.2}}]
        lines += [
            {"step": s, "data": {"timing_s/step": 200.0 + s, "perf/throughput": 900.0}} for s in (1, 2, 3)
        ]
        text = "".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines)
        (cwd / folder / "metrics.jsonl").write_text(text, encoding="utf-8")
    for folder in recorded:
        assert main(["runs", "add", folder]) == 0


def _needs_verl_trees(args: list[str]) -> bool:
    return args[:2] in (["dev", "fetch-verl"], ["dev", "verl-index"]) or "--whole" in args


def _all_fetched() -> bool:
    """Everything `rlcat dev fetch-verl` fetches is here, so running it downloads nothing."""
    houses = [
        (wheelhouse.wheelhouse_dir(), None),
        (wheelhouse.docs_wheelhouse_dir(), wheelhouse.docs_requirements()),
    ]
    return all(trees.is_fetched(v) for v in trees.VERL_VERSIONS) and all(
        wheelhouse.is_complete(house, reqs) for house, reqs in houses
    )


def _is_slow(example: str) -> bool:
    """Examples that compile every built-in recipe on every platform (schema coverage, and every
    `rlcat docs` command, which generates every page) and most build a whole MkDocs site: seconds to
    tens of seconds each, so they run in the slow tier; and `import --whole`, which composes with Hydra."""
    args = shlex.split(example)[1:]
    return args[:2] == ["dev", "schema-coverage"] or args[0] == "docs" or "--whole" in args


def _writes_the_checkout(args: list[str]) -> bool:
    """In a checkout, `rlcat docs build|serve` regenerate docs/ and mkdocs.yml there (and build into
    its site/) unless they build a catalog's site or only --check."""
    return args[0] == "docs" and "--check" not in args and "--catalog" not in args


def test_examples_left_to_their_own_test_are_examples_and_that_test_runs_them() -> None:
    """An example taken out of test_help_examples_run is still in the help, and the test named for it
    exists and runs it (or its fixture does) through `example_of`: word for word, not a copy that
    could drift."""
    shown = {e for _, e in EXAMPLES}
    for example, runner in EXAMPLES_RUN_BY_THEIR_TEST.items():
        assert example in shown, f"`{example}` is no longer a help example"
        path, _, test = runner.partition("::")
        source = (REPO / path).read_text(encoding="utf-8")
        assert f"def {test}(" in source, f"{runner} is not there"
        assert f'example_of("{test}")' in source, f"{runner} does not run `{example}`"


def test_examples_name_no_fixed_path() -> None:
    """A user copies an example: one that writes to an absolute path (a shared /tmp folder) writes
    where nobody asked, so every path in an example is relative."""
    fixed = [e for _, e in EXAMPLES if any(arg.startswith(("/", "~")) for arg in shlex.split(e)[1:])]
    assert fixed == []


@pytest.mark.parametrize(
    ("path", "example"),
    [
        pytest.param(p, e, id=e, marks=[pytest.mark.slow] if _is_slow(e) else [])
        for p, e in EXAMPLES
        if e not in EXAMPLES_RUN_BY_THEIR_TEST
    ],
)
def test_help_examples_run(
    rlcat: Callable[..., Result],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    tmp_path_factory: pytest.TempPathFactory,
    path: list[str],
    example: str,
) -> None:
    args = shlex.split(example)[1:]
    assert args[: len(path)] == path, f"an example under `rlcat {' '.join(path)}` runs another command"
    if _needs_verl_trees(args) and not _all_fetched():
        pytest.skip(
            "needs what `rlcat dev fetch-verl` fetches (verl's trees, the wheelhouses); tests never download"
        )
    _prepare(args, tmp_path)
    if _writes_the_checkout(args):
        docs_checkout(monkeypatch, tmp_path_factory.mktemp("checkout"))
    if args[0] == "runs":
        _prepare_runs(args, tmp_path)
    result = rlcat(*args)
    assert result.code == 0, f"`{example}` exited with {result.code}:\n{result.err}"
    assert "Traceback" not in result.err
    for flag in ("-o", "--output"):
        if flag in args:
            written = tmp_path / args[args.index(flag) + 1]
            if args[0] == "import":  # -o names the catalog folder it writes
                written = next((written / "recipes").glob("*.yaml"))
            assert written.is_file() and written.stat().st_size > 0, f"`{example}` wrote no {written}"


# --- the console script, as installed ------------------------------------------------------------


def _console_script() -> str:
    beside_python = Path(sys.executable).with_name("rlcat")
    found = str(beside_python) if beside_python.is_file() else shutil.which("rlcat")
    assert found, "the rlcat console script is not installed"
    return found


def _run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("RLCAT_PATH", "RLCAT_TRACEBACK")}
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False)


def test_console_script(rlcat: Callable[..., Result], tmp_path: Path) -> None:
    expected = rlcat("compile", "ppo_qwen2_7b_gsm8k", "--platform", "rocm")
    assert expected.code == 0, expected.err
    script = _console_script()
    proc = _run([script, "compile", "ppo_qwen2_7b_gsm8k", "--platform", "rocm"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == expected.out
    assert proc.stderr == expected.err
    target = tmp_path / "plan.sh"
    proc = _run([script, "compile", "ppo_qwen2_7b_gsm8k", "-f", "shell", "-o", str(target)], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert target.read_text(encoding="utf-8") == rlcat("compile", "ppo_qwen2_7b_gsm8k", "-f", "shell").out


def test_console_script_reports_bad_input(tmp_path: Path) -> None:
    proc = _run([_console_script(), "compile", "geo3k_megatron_44"], tmp_path)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert " RLC201 error: " in proc.stderr
    assert "Traceback" not in proc.stderr


def test_python_dash_m(tmp_path: Path) -> None:
    proc = _run([sys.executable, "-m", "rlcat", "list", "--format", "json"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert sorted(row["name"] for row in json.loads(proc.stdout)) == ALL_RECIPES


@pytest.mark.parametrize(
    "argv",
    [
        ["compile", "geo3k_megatron_4_4", "--platform", "rocm", "--explain", "-f", "json"],
        ["show", "geo3k_megatron_4_4"],
        ["list", "--format", "json"],
    ],
)
def test_a_reader_that_goes_away_ends_the_run_quietly(argv: list[str], tmp_path: Path) -> None:
    """`rlcat ... | head -1`: the pipe closes early; exit 141 as after SIGPIPE, nothing on stderr."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before rlcat writes anything
    try:
        proc = subprocess.run(
            [_console_script(), *argv], cwd=tmp_path, stdout=write_end, stderr=subprocess.PIPE, check=False
        )
    finally:
        os.close(write_end)
    assert proc.returncode == 141
    err = proc.stderr.decode()
    assert err == ""


@pytest.mark.parametrize("via", ["console-script", "python-m"])
def test_a_closed_stderr_ends_the_run_quietly(via: str, tmp_path: Path) -> None:
    """Notes go to stderr, before the plan is written; with stderr's reader gone the run ends with
    141, as the console script and as `python -m rlcat`, and writes no plan file."""
    argv = ["compile", "dapo_math_fsdp2_4_4", "--platform", "npu", "--engine", "sglang", "-o", "plan.txt"]
    prefix = [_console_script()] if via == "console-script" else [sys.executable, "-m", "rlcat"]
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = subprocess.run(
            [*prefix, *argv], cwd=tmp_path, stdout=subprocess.PIPE, stderr=write_end, check=False
        )
    finally:
        os.close(write_end)
    assert proc.returncode == 141
    assert proc.stdout == b""
    assert not (tmp_path / "plan.txt").exists()


def test_version_and_short_help_everywhere(rlcat: Callable[..., Result]) -> None:
    from rlcat import __version__

    version = rlcat("--version")
    assert (version.code, version.out) == (0, f"rlcat {__version__}\n")
    for command in (["-h"], ["compile", "-h"], ["dev", "schemas", "-h"], ["runs", "add", "-h"]):
        short, long = rlcat(*command), rlcat(*command[:-1], "--help")
        assert short.code == 0 and short.out == long.out and short.out.startswith("Usage: rlcat"), command


def test_a_value_outside_the_choices_gets_a_did_you_mean(
    rlcat: Callable[..., Result], tmp_path: Path
) -> None:
    """On the command line (Typer's choices) and in a recipe file (the schema's Literal) alike."""
    option = rlcat("compile", "gsm8k_qwen3_8b_fsdp", "--mode", "fully-async")
    assert option.code == 2 and option.out == ""
    assert "'fully-async' is not one of 'colocate', 'fully_async', 'one_step_off'." in option.err
    assert "Value error" not in option.err and "hint: did you mean 'fully_async'?" in option.err
    recipe = tmp_path / "t1.yaml"
    recipe.write_text("name: t1\nextends: gsm8k_qwen3_8b_fsdp\nsummary: x\nmode: fully-async\n")
    found = json.loads(rlcat("validate", str(recipe), "--format", "json").out)["diagnostics"]
    assert [(d["code"], d["line"], d["hint"]) for d in found] == [
        ("RLC103", 4, "did you mean 'fully_async'?")
    ]


def test_help_names_values_not_python_types(rlcat: Callable[..., Result]) -> None:
    """Every option and argument of every command shows what its value is (RECIPE, DIR,
    FIELD=VALUE), never a Python type; choices keep their list."""

    def params(cmd: Any, path: str) -> Iterator[tuple[str, Any]]:
        for param in cmd.params:
            yield path, param
        for name, sub in getattr(cmd, "commands", {}).items():
            yield from params(sub, f"{path} {name}")

    shown = 0
    for path, param in params(command_tree(), "rlcat"):
        if getattr(param, "is_flag", False) or param.type_descriptor.is_choice:
            continue
        assert param.metavar and "[" not in param.metavar.replace("[:ro]", ""), (path, param.name)
        assert param.metavar == param.metavar.upper() or "=" in param.metavar or ":" in param.metavar
        shown += 1
    assert shown > 60
    help_text = rlcat("compile", "-h").out
    assert "--set FIELD=VALUE" in help_text and "--catalog DIR" in help_text and "<list[" not in help_text
