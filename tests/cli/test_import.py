"""`rlcat import`: every reference script turned into a recipe that compiles back to the same verl
values (tests/verl/test_import_whole.py proves it through Hydra, on the whole config), an
overrides.yaml, a command line after `--`, and bad input refused with a diagnostic."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from import_helpers import (
    DATA,
    MEGATRON_COMMAND,
    SCRIPTS,
    environment,
    import_reference,
    launches_verl,
    outputs,
)

from rlcat.importer import read_source, share

from conftest import Result

REPO = Path(__file__).resolve().parent.parent.parent
IMPORT_DATA = REPO / "tests" / "data" / "import"
OVERRIDES = IMPORT_DATA / "run" / ".hydra" / "overrides.yaml"
NO_LAUNCH = "examples__grpo_trainer__run_deepseek_v4_megatron_lite"
# a few shapes in the fast tier (colocate FSDP, Megatron, PPO, fully-async DAPO); all 68 when slow
QUICK = [
    "examples__grpo_trainer__run_qwen3_8b_fsdp",
    "examples__ppo_trainer__run_qwen3_8b_megatron",
    "verl__experimental__fully_async_policy__shell__dapo_7b_math_fsdp2_4_4",
]

Rlcat = Callable[..., Result]


@pytest.mark.parametrize("name", QUICK)
def test_reference_script_round_trips(name: str, tmp_path: Path) -> None:
    done = import_reference(name, tmp_path)
    assert done.report.compiled is not None, [d.headline() for d in done.report.diagnostics]
    assert not done.report.unexplained, done.report.unexplained
    keys = [line for line in done.report.lines if line.what != "entry" and not line.what.startswith("env ")]
    assert len(keys) == len(done.run.settings)
    assert all(line.same for line in keys)
    # every setting of the recipe sits under the source line that set it
    text = (tmp_path / "recipes" / f"{done.imported.name}.yaml").read_text()
    for setting in done.run.settings.values():
        assert f"# line {setting.line}: {setting.text}" in text or "... and" in text


@pytest.mark.slow
@pytest.mark.xdist_group("reference-imports")  # its imports serve tests/verl (the Hydra proofs)
def test_every_reference_script_round_trips(reference_imports: Callable[[str], Any]) -> None:
    """All 68: each that launches verl imports with no unexplained difference; the one that
    launches nothing says so. Prints the figures the docs quote."""
    proved = typed = overrides = left_out = defaults = keys = 0
    launching = [name for name in SCRIPTS if launches_verl(name)]
    assert [name for name in SCRIPTS if name not in launching] == [NO_LAUNCH]
    for name in launching:
        done = reference_imports(name)
        assert done.report.compiled is not None, (name, [d.headline() for d in done.report.diagnostics])
        assert not done.report.unexplained, (name, done.report.unexplained)
        assert done.run.env.items() <= done.report.compiled.env_vars.items(), name  # the script's env
        proved += 1
        counts = share(done.run, done.imported.solution)
        typed, overrides = typed + counts["typed"], overrides + counts["overrides"]
        left_out, defaults = left_out + counts["left_out"], defaults + counts["verl_default"]
        keys += len(done.run.settings) + len(done.run.groups)
    assert proved == len(SCRIPTS) - 1 == 67
    print(
        f"\n{proved} of 67 round-trip; {keys} keys: typed {typed}, overrides {overrides}, "
        f"left out {left_out}, null at verl's default {defaults}"
    )
    assert typed / keys > 0.85


def test_no_launch_script_reports_so(rlcat: Rlcat, tmp_path: Path) -> None:
    result = rlcat("import", str(DATA / f"{NO_LAUNCH}.sh"), "-o", str(tmp_path))
    assert result.code == 2
    assert "RLC1301" in result.err and "no command here launches verl" in result.err
    assert "Traceback" not in result.err
    assert not any(tmp_path.iterdir())


def test_cli_writes_a_catalog_that_compiles(rlcat: Rlcat, tmp_path: Path) -> None:
    script = DATA / f"{QUICK[0]}.sh"
    out = tmp_path / "cat"
    result = rlcat("import", str(script), "-o", str(out), "--name", "qwen3_run", "--env", "HOME=$HOME")
    assert result.code == 0, result.err
    assert "0 unexplained" in result.out
    assert re.search(r"typed fields \d+, overrides \d+, left out 0", result.out)
    recipe = yaml.safe_load((out / "recipes" / "qwen3_run.yaml").read_text())
    assert (recipe["model"], recipe["dataset"]) == ("qwen3_8b", "gsm8k_math")  # built-in entries matched
    assert rlcat("compile", "qwen3_run", "--catalog", str(out)).code == 0
    # nothing is overwritten without --force, and nothing is written at all then
    before = (out / "recipes" / "qwen3_run.yaml").stat().st_mtime_ns
    again = rlcat("import", str(script), "-o", str(out), "--name", "qwen3_run", "--env", "HOME=$HOME")
    assert again.code == 2 and "RLC1306" in again.err
    assert (out / "recipes" / "qwen3_run.yaml").stat().st_mtime_ns == before
    forced = rlcat(
        "import", str(script), "-o", str(out), "--name", "qwen3_run", "--env", "HOME=$HOME", "--force"
    )
    assert forced.code == 0, forced.err
    assert not [p for p in out.rglob("*") if p.name.endswith(".tmp")]


def test_import_from_hydra_overrides_yaml(rlcat: Rlcat, tmp_path: Path) -> None:
    result = rlcat("import", str(OVERRIDES), "-o", str(tmp_path))
    assert result.code == 0, result.err
    text = (tmp_path / "recipes" / "run.yaml").read_text()  # named after the run's folder
    recipe = yaml.safe_load(text.replace("!interp ", ""))
    assert recipe["engine"] == "sglang"
    assert recipe["rollout"]["engine_kwargs"]["sglang"] == {"attention_backend": "fa3"}
    assert recipe["resources"]["nodes"] == 2
    # a live interpolation stays one, asked for with !interp
    assert "trainer.experiment_name: !interp run_${now:%H}" in text
    # a key verl 0.9.1 lacks and a deletion are left out, each said
    assert "RLC1303" in result.err and "megatron.grad_offload" in result.err
    assert "~trainer.resume_from_path — a deletion" in text
    assert "differs line 24: trainer.resume_from_path" in result.out
    assert (tmp_path / "catalog" / "datasets" / "gsm8k_2.yaml").is_file()  # other paths than built-in gsm8k


def test_import_from_a_command_line(rlcat: Rlcat, tmp_path: Path) -> None:
    result = rlcat(
        "import", "-o", str(tmp_path), "--name", "cli_run", "--", *MEGATRON_COMMAND
    )  # fmt: skip
    assert result.code == 0, result.out + result.err
    recipe = yaml.safe_load((tmp_path / "recipes" / "cli_run.yaml").read_text())
    assert (recipe["algorithm"], recipe["backend"]) == ("ppo", "megatron")
    assert recipe["parallelism"]["actor"]["tp"] == 2
    assert recipe["critic"]["optim"]["lr"] == 1e-5
    # ppo_megatron_trainer is what 0.9.1 selects with model_engine=megatron: an explained entry
    assert "differs line 1: entry" in result.out and "the keys are compared" in result.out


def test_verl_recipe_trainer_names_the_closest_core_trainer(rlcat: Rlcat, tmp_path: Path) -> None:
    result = rlcat(
        "import", "-o", str(tmp_path), "--", "python3", "-m", "recipe.dapo.main_dapo",
        "algorithm.adv_estimator=grpo", "actor_rollout_ref.rollout.n=4",
    )  # fmt: skip
    assert "Traceback" not in result.err
    assert "RLC1302" in result.err
    assert "recipe.dapo.main_dapo is not part of the verl release" in result.err
    assert "closest core verl trainer being verl.trainer.main_ppo" in result.err
    assert (tmp_path / "recipes" / "imported.yaml").is_file()


@pytest.mark.parametrize(
    ("args", "code", "words"),
    [
        ([], 2, "nothing to import"),
        (["no/such/file.sh"], 2, "RLC001"),
        (["--name", "Bad Name", str(OVERRIDES)], 2, "not a recipe name"),
        (["--env", "NOEQUALS", str(OVERRIDES)], 2, "--env"),
        (["--platform", "no_such_platform", str(OVERRIDES)], 2, "RLC204"),
        (["--whole", "--aside", "everything", str(OVERRIDES)], 2, "--aside everything: not one of paths"),
        (["--accept", "trainer.logger=ours", str(OVERRIDES)], 2, "add --whole"),
        (["--whole", "--accept", "no-reason", str(OVERRIDES)], 2, "--accept"),
    ],
)
def test_bad_arguments(rlcat: Rlcat, tmp_path: Path, args: list[str], code: int, words: str) -> None:
    result = rlcat("import", "-o", str(tmp_path), *args)
    assert result.code == code, result.err
    assert words in result.err
    assert "Traceback" not in result.err


def test_whole_without_the_release_s_tree_stops_before_writing(
    rlcat: Rlcat, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RLCAT_VERL_TREES", str(tmp_path / "no-trees"))
    result = rlcat("import", "-o", str(tmp_path / "out"), "--whole", str(OVERRIDES))
    assert result.code == 2, result.err
    assert "RLC1309" in result.err and "rlcat dev fetch-verl" in result.err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("file_name", "content", "words"),
    [
        ("overrides.yaml", b"a: 1\n", "not a Hydra overrides.yaml"),
        ("overrides.yaml", b"- [unclosed\n", "RLC002"),
        ("overrides.yaml", b"- 1\n- 2\n", "not a Hydra overrides.yaml"),
        ("run.sh", b"\x89PNG\r\n\x1a\n\x00\x00binary", "RLC006"),
        ("run.sh", b"echo hello\n", "RLC1301"),
        ("run.sh", b"python3 -m verl.trainer.main_ppo $(touch SHOULD_NOT_EXIST) `touch NEITHER`\n", ""),
    ],
)
def test_bad_sources(rlcat: Rlcat, tmp_path: Path, file_name: str, content: bytes, words: str) -> None:
    source = tmp_path / file_name
    source.write_bytes(content)
    result = rlcat("import", str(source), "-o", str(tmp_path / "out"))
    assert result.code in (0, 1, 2)
    assert words in result.err
    assert "Traceback" not in result.err
    assert not (tmp_path / "SHOULD_NOT_EXIST").exists() and not (tmp_path / "NEITHER").exists()
    assert not Path("SHOULD_NOT_EXIST").exists() and not Path("NEITHER").exists()


def test_hostile_values_are_written_escaped(rlcat: Rlcat, tmp_path: Path) -> None:
    """A value with a line break or a bidi control cannot start a line of the recipe or its comment."""
    source = tmp_path / "run.sh"
    source.write_text(
        "python3 -m verl.trainer.main_ppo 'trainer.project_name=x\u202e' "
        "$'trainer.experiment_name=a\\nb: 1'\n"
    )
    result = rlcat("import", str(source), "-o", str(tmp_path / "out"))
    assert "Traceback" not in result.err
    recipe = tmp_path / "out" / "recipes" / "run.yaml"
    if recipe.exists():  # written only when YAML can show the values as they are
        text = recipe.read_text()
        assert "\u202e" not in text
        assert "\nb: 1" not in text
    else:
        assert "RLC405" in result.err


def test_a_value_only_running_would_tell_differs(rlcat: Rlcat, tmp_path: Path) -> None:
    """`$(date …)` reaches verl as the date; the recipe can only write the text, so the report says
    `differs` with the reason (docs/import.md), for a key and for the environment alike. A `$HOME`
    path stays `same`: the recipe leaves it to `${oc.env:HOME}`, resolved where the shell would."""
    source = tmp_path / "run.sh"
    source.write_text(
        "export RUN_ID=$(date +%s)\n"
        "python3 -m verl.trainer.main_ppo data.train_batch_size=64 "
        "data.train_files=$HOME/data/train.parquet trainer.default_local_dir=/ckpt/$(date +%Y%m%d) \\\n"
        '  trainer.experiment_name="$EXP_NAME"\n'
    )
    result = rlcat("import", str(source), "-o", str(tmp_path / "out"))
    assert "Traceback" not in result.err and "UNEXPLAINED" not in result.out, result.out
    why = "(only known by running the script: kept as written)"
    assert "differs line 2: trainer.default_local_dir: source /ckpt/$(date +%Y%m%d), " in result.out
    assert f"differs line 2: env RUN_ID: source $(date +%s), recipe $(date +%s) {why}" in result.out
    assert "same    line 2: data.train_files=$HOME/data/train.parquet  [dataset]" in result.out
    assert result.out.count(why) == 2, result.out
    # a variable neither the script nor --env sets is read as unset, and said so at its line
    assert f"{source}:3 RLC1102 warning: $EXP_NAME is neither set by the script nor given" in result.err


def test_an_overrides_yaml_alias_is_parsed_once(
    rlcat: Rlcat, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Hydra writes no aliases; one repeated 2,000 times is read once (each used to be parsed
    again: 110 KB took half a minute), and Hydra keeps the last of the repeated key, as the import
    does (RLC1113)."""
    from rlcat.importer import source as source_module

    parsed: list[str] = []

    def counting(text: str) -> Any:
        parsed.append(text)
        return parse(text)

    parse = source_module.parse_hydra_value
    monkeypatch.setattr(source_module, "parse_hydra_value", counting)
    folder = tmp_path / "run" / ".hydra"
    folder.mkdir(parents=True)
    logger = "trainer.logger=[" + ",".join(f"console{i}" for i in range(50)) + "]"
    (folder / "overrides.yaml").write_text(
        f"- data.train_batch_size=64\n- &a '{logger}'\n" + "- *a\n" * 2000, encoding="utf-8"
    )
    result = rlcat("import", str(folder / "overrides.yaml"), "-o", str(tmp_path / "out"))
    assert "Traceback" not in result.err
    assert sorted(parsed) == ["64", logger.partition("=")[2]]
    assert result.err.count("RLC1113") == 2000


def test_an_overrides_yaml_alias_bomb_is_refused_at_the_alias(rlcat: Rlcat, tmp_path: Path) -> None:
    """What aliases expand to is bounded as in every YAML file rlcat reads (RLC007, exit 2)."""
    source = tmp_path / "overrides.yaml"
    big = "trainer.project_name=" + "x" * (1024 * 1024)
    source.write_text(f"- &a {big}\n" + "- *a\n" * 20, encoding="utf-8")
    result = rlcat("import", str(source), "-o", str(tmp_path / "out"))
    assert result.code == 2 and " RLC007 error: " in result.err and "alias" in result.err, result.err
    assert not (tmp_path / "out").exists()


def test_the_importer_names_no_verl_key() -> None:
    """Which field sets which verl key is learnt from the lowering (Origin.field), never listed:
    fields added to the schema flow into the import untouched."""
    for path in (REPO / "compiler" / "rlcat" / "importer").glob("*.py"):
        code = path.read_text()
        assert not re.search(r"actor_rollout_ref|\"(data|trainer|critic|algorithm)\.\w", code), path


def test_typed_fields_are_the_ones_the_lowering_names(tmp_path: Path) -> None:
    """Each typed key is carried by the field its lowered setting names (Origin.field)."""
    done = import_reference(QUICK[0], tmp_path)
    fields = {s.origin.field for s in done.imported.solution.typed.values()}
    assert {"batch.mini_batch_size", "actor.optim.lr", "trainer.epochs", "dataset", "model"} <= fields


def test_a_local_model_folder_gives_the_new_entry_its_shape(rlcat: Rlcat, tmp_path: Path) -> None:
    """A model path that is a folder here with a config.json: the new catalog entry takes the
    model's heads and positions from it (read, never fetched) instead of a guess."""
    folder = tmp_path / "my-7b"
    folder.mkdir()
    config = {"num_attention_heads": 28, "num_key_value_heads": 4, "max_position_embeddings": 32768}
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    out = tmp_path / "cat"
    command = (*MEGATRON_COMMAND, f"actor_rollout_ref.model.path={folder}")
    result = rlcat("import", "-o", str(out), "--name", "local_run", "--", *command)
    assert result.code == 0, result.out + result.err
    entries = [yaml.safe_load(p.read_text()) for p in (out / "catalog" / "models").glob("*.yaml")]
    assert [(e["hf_id"], e["num_attention_heads"], e["num_key_value_heads"]) for e in entries] == [
        (str(folder), 28, 4)
    ]
    assert entries[0]["max_position_embeddings"] == 32768
    assert entries[0]["facts_source"] == str(folder / "config.json")
    # the model's family and size, and the whole dataset, are left to fill in: the import says which
    # entries, and validate refuses them until then
    assert "RLC1307 warning: new model entry catalog/models/my_7b.yaml needs filling in" in result.err
    assert "new dataset entry catalog/datasets/local_run_dataset.yaml needs filling in" in result.err
    refused = rlcat("validate", str(out))
    assert refused.code == 1 and "my_7b.yaml:6:1 RLC107 error: family is left to fill in" in refused.out


# --- keys the entrypoint never reads: left out, or moved with --migrate --------------------------

DAPO = "verl-recipe__dapo__test_dapo_7b_math"  # verl.trainer.main_ppo with the legacy reward_model.*


def _compiled_key(rlcat: Rlcat, catalog: Path, recipe: str, key: str) -> str:
    """The override text the compiled plan gives `key` (after any `+`), or "<not set>"."""
    plan = json.loads(rlcat("compile", recipe, "--catalog", str(catalog), "--format", "json").out)
    values = dict(o.lstrip("+").split("=", 1) for o in plan["overrides"])
    return values.get(key, "<not set>")


def test_keys_main_ppo_never_reads_are_left_out_as_the_run_ignored_them(rlcat: Rlcat, tmp_path: Path) -> None:
    """Upstream's DAPO script sets `reward_model.reward_manager=dapo` and the overlong buffer, which
    verl 0.9.1's main_ppo never reads (RLC802): the script trains with the default manager. The
    import reproduces that run: the keys are left out, each with its reason, and nothing promotes
    them to `reward.*` (which would change the loss and still say `same`)."""
    result = rlcat("import", str(DATA / f"{DAPO}.sh"), "-o", str(tmp_path))
    assert result.code == 0, result.err
    assert "RLC1303" in result.err and "never reads it (RLC802)" in result.err
    assert "as the run it came from ignored it; `rlcat import --migrate` moves it to reward." in result.err
    assert "RLC1308" not in result.err
    assert "6 differ with a reason, 0 unexplained" in result.out
    assert "differs line 113: reward_model.reward_manager: source dapo, recipe (left out)" in result.out
    recipe = yaml.safe_load((tmp_path / "recipes" / f"{DAPO}.yaml").read_text())
    assert "overlong_buffer" not in recipe.get("algorithm_settings", {})
    assert _compiled_key(rlcat, tmp_path, DAPO, "reward.reward_manager.name") != "dapo"


def test_migrate_moves_them_where_verls_migration_puts_them(rlcat: Rlcat, tmp_path: Path) -> None:
    result = rlcat("import", str(DATA / f"{DAPO}.sh"), "-o", str(tmp_path), "--migrate")
    assert result.code == 0, result.err
    moved = [line for line in result.err.splitlines() if " RLC1308 info: " in line]
    assert len(moved) == 6 and "is moved to reward.reward_manager.name" in moved[0], moved
    assert "6 differ with a reason, 0 unexplained" in result.out
    assert (
        "differs line 113: reward_model.reward_manager: source dapo, recipe dapo (moved to "
        "reward.reward_manager.name (--migrate): it takes effect; in the source it did not)"
    ) in result.out
    assert _compiled_key(rlcat, tmp_path, DAPO, "reward.reward_manager.name") == "dapo"
    assert _compiled_key(rlcat, tmp_path, DAPO, "reward.reward_kwargs.overlong_buffer_cfg.len") == "4096"


# --- keys verl renamed between releases: rewritten with --migrate ---------------------------------

LINT_DATA = REPO / "tests" / "data" / "lint"
# (script, platform, {old key: new key}): one script per release pair with renames
RENAMED = {
    "0.7.1_to_0.9.0": (
        "renamed_keys.sh",
        "rocm",
        {
            "actor_rollout_ref.rollout.skip_rollout": "skip.rollout.enable",
            "actor_rollout_ref.rollout.skip_dump_dir": "skip.rollout.dump_dir",
            "critic.model.fsdp_config.fsdp_size": "critic.fsdp.fsdp_size",
            "critic.model.fsdp_config.forward_prefetch": "critic.fsdp.forward_prefetch",
        },
    ),
    "0.9.0_to_0.9.1": (
        "renamed_router_replay.sh",
        "cuda",
        {
            f"actor_rollout_ref.{role}.router_replay.{leaf}": (
                f"actor_rollout_ref.{role}.megatron.router_replay.{leaf}"
            )
            for role, leaf in (("actor", "mode"), ("actor", "record_file"), ("ref", "replay_file"))
        },
    ),
}


def _line_of(script: Path, key: str) -> int:
    return next(n for n, text in enumerate(script.read_text().splitlines(), 1) if f"{key}=" in text)


@pytest.mark.slow  # two imports of about a second each
@pytest.mark.parametrize("pair", RENAMED)
def test_migrate_rewrites_a_renamed_key_to_the_releases_name(rlcat: Rlcat, tmp_path: Path, pair: str) -> None:
    """A script written for an older release: each old name becomes the target release's, the
    value unchanged; the report lists each rewrite with its script line and why; the recipe
    compiles clean and gives verl the new key."""
    script, platform, moves = RENAMED[pair]
    source = LINT_DATA / script
    result = rlcat("import", str(source), "-o", str(tmp_path), "-p", platform, "--migrate")
    assert result.code == 0, result.out + result.err
    assert " error: " not in result.err, result.err
    assert f"--migrate rewrote {len(moves)} key(s):" in result.out
    assert "0 unexplained" in result.out
    notes = [line for line in result.err.splitlines() if " RLC1308 info: " in line]
    assert len(notes) == len(moves), notes
    text = (tmp_path / "recipes" / f"{source.stem}.yaml").read_text()
    recipe = yaml.safe_load(text)
    assert text.count("(--migrate: the key as verl renamed it)") == len(moves)
    values = dict(line.split("=", 1) for line in source.read_text().split() if "=" in line)
    for old, new in moves.items():
        assert f"    line {_line_of(source, old)}: {old} -> {new} (verl " in result.out
        assert old not in recipe["overrides"] and str(recipe["overrides"][new]).lower() == values[old].lower()
        assert _compiled_key(rlcat, tmp_path, source.stem, new).lower() == values[old].lower()


@pytest.mark.slow
def test_without_migrate_a_renamed_key_is_left_out_with_the_hint(rlcat: Rlcat, tmp_path: Path) -> None:
    script, platform, moves = RENAMED["0.7.1_to_0.9.0"]
    result = rlcat("import", str(LINT_DATA / script), "-o", str(tmp_path), "-p", platform)
    assert result.code == 0, result.err
    assert "RLC1308" not in result.err and "--migrate rewrote" not in result.out
    for old, new in moves.items():
        assert f"{old}: source " in result.out and f"renamed it {new})" in result.out
    hints = [line for line in result.err.splitlines() if line.startswith("  hint: `rlcat import --migrate`")]
    assert [h.split(" rewrites it to ")[1].split(":")[0] for h in hints] == list(moves.values())


def _moves_legacy_reward(name: str) -> bool:
    """Does the script set a legacy reward key its entrypoint never reads on verl 0.9.1 (RLC802),
    which --migrate moves? (The fully-async scripts' entrypoint migrates them itself.)"""
    from rlcat.guards.drift.unread_keys import unread

    if not launches_verl(name):
        return False
    run = read_source(DATA / f"{name}.sh", env=environment(name), outputs=outputs)
    return any(
        (found := unread(key, run.entrypoint or "", "0.9.1")) is not None and found.home is not None
        for key in run.settings
    )


@pytest.mark.slow
def test_migrate_on_every_legacy_reward_script(tmp_path: Path) -> None:
    """Every reference script with the legacy reward keys, imported with --migrate: each key verl
    0.9.1's entrypoint never reads (RLC802) is moved where verl's own migration puts it, the
    report lists it, and the recipe compiles with nothing unexplained; its only error-level
    findings are guard refusals of upstream's own settings (RLC713, docs/import.md)."""
    from rlcat.guards.drift.unread_keys import unread
    from rlcat.importer import render_report

    legacy_reward = [name for name in SCRIPTS if _moves_legacy_reward(name)]
    assert len(legacy_reward) >= 5, legacy_reward
    for name in legacy_reward:
        done = import_reference(name, tmp_path / name, migrate=True)
        report, solution = done.report, done.imported.solution
        assert report.compiled is not None, (name, [d.headline() for d in report.diagnostics])
        assert not report.unexplained, (name, report.unexplained)
        assert {d.code for d in report.findings} <= {"RLC713"}, (
            name,
            [d.headline() for d in report.findings],
        )
        expected = {
            key: found.home
            for key in done.run.settings
            if (found := unread(key, solution.entrypoint, "0.9.1")) is not None and found.home is not None
        }
        assert solution.migrated == expected, name
        text = render_report(report, done.run, solution, done.folder / "recipe.yaml")
        assert expected and f"--migrate rewrote {len(expected)} key(s):" in text, name
        for key, home in expected.items():
            assert f"line {done.run.settings[key].line}: {key} -> {home} (verl's own migration" in text
