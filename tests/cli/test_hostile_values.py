"""Values that would break or change at launch: keys Hydra cannot read inside open dicts, `${...}`
interpolation text, non-finite numbers. Each is refused with a diagnostic, or written so that verl
receives exactly the text the recipe holds (tests/verl/test_hostile_compose.py composes them with
real verl trees)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import REPO, Result

Run = Callable[..., Result]
PARENT = "gsm8k_qwen3_8b_fsdp"


def child_recipe(tmp_path: Path, body: str, name: str = "hostile", parent: str = PARENT) -> Path:
    """A recipe in a user catalog folder that extends a shipped one and adds `body` (YAML)."""
    path = tmp_path / "recipes" / f"{name}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"name: {name}\nextends: {parent}\nsummary: hostile values\n{body}", encoding="utf-8")
    return path


def errors_of(result: Result, code: str) -> list[str]:
    return [line for line in result.err.splitlines() if f" {code} error: " in line]


# (id, where the key goes in the recipe, the key as YAML writes it)
# fmt: off
BAD_KEYS = [
    ("equals", "actor:\n  model_override_config:\n    'a=b': 1\n", "a=b"),
    ("space", "actor:\n  model_override_config:\n    'a b': 1\n", "a b"),
    ("colon", "actor:\n  model_override_config:\n    'x:y': 1\n", "x:y"),
    ("empty", "actor:\n  model_override_config:\n    '': 1\n", ""),
    ("newline", "actor:\n  model_override_config:\n    \"a\\nb\": 1\n", "a\\nb"),
    ("global-package", "actor:\n  model_override_config:\n    '@_global_': 1\n", "@_global_"),
    ("nul", "actor:\n  model_override_config:\n    \"a\\0b\": 1\n", "a\\x00b"),
    ("leading-digit", "actor:\n  model_override_config:\n    '1st': 1\n", "1st"),
    ("engine-kwargs", "rollout:\n  engine_kwargs:\n    vllm:\n      'swap space': 4\n", "swap space"),
]
MEGATRON_PARENT = "gsm8k_qwen3_8b_megatron"
# fmt: on


@pytest.mark.parametrize(("body", "shown"), [c[1:] for c in BAD_KEYS], ids=[c[0] for c in BAD_KEYS])
def test_keys_hydra_cannot_read_are_refused(rlcat: Run, tmp_path: Path, body: str, shown: str) -> None:
    path = child_recipe(tmp_path, body)
    error = assert_refused(rlcat, tmp_path, path)
    assert f"'{shown}' is not a key segment" in error, error


def test_transformer_config_keys_are_checked_too(rlcat: Run, tmp_path: Path) -> None:
    body = "actor:\n  megatron:\n    override_transformer_config:\n      'a/b': 1\n"
    assert_refused(rlcat, tmp_path, child_recipe(tmp_path, body, parent=MEGATRON_PARENT))


def assert_refused(rlcat: Run, tmp_path: Path, path: Path) -> str:
    """Compile and validate both refuse the recipe with RLC406 at its file; the compile's error line."""
    compiled = rlcat("compile", str(path), "--format", "shell", "-o", str(tmp_path / "launch.sh"))
    assert compiled.code == 2
    assert not (tmp_path / "launch.sh").exists()
    errors = errors_of(compiled, "RLC406")
    assert errors, compiled.err
    assert errors[0].startswith(f"recipes/{path.name}:") or str(path) in errors[0], errors[0]
    assert "\x00" not in compiled.err and "\n" not in errors[0]
    report = rlcat("validate", str(path), "--format", "json")
    assert report.code == 1
    assert any(d["code"] == "RLC406" for d in json.loads(report.out)["diagnostics"])
    return errors[0]


@pytest.mark.parametrize(
    "override",
    [
        "actor_rollout_ref.model.override_config.a b=1",
        "actor_rollout_ref.model.override_config.@_global_=1",
        "actor_rollout_ref.model.override_config.x:y=1",
    ],
    ids=["space", "package", "colon"],
)
def test_override_keys_hydra_cannot_read_are_refused(rlcat: Run, override: str) -> None:
    result = rlcat("compile", PARENT, "--override", override)
    assert result.code == 2
    assert result.out == ""
    errors = errors_of(result, "RLC406")
    assert errors and errors[0].startswith(f"--override {override} RLC406"), result.err


@pytest.mark.parametrize(
    "text",
    ["${oc.env:SECRET}", "run-${oc.decode:'123'}", "${trainer.project_name}", "a \\${x}", "${"],
    ids=["env-secret", "decode", "reference", "escaped", "unclosed"],
)
def test_interpolation_text_in_a_recipe_is_written_escaped(rlcat: Run, tmp_path: Path, text: str) -> None:
    body = f"trainer:\n  experiment: {json.dumps(text)}\n"
    path = child_recipe(tmp_path, body)
    result = rlcat("compile", str(path), "--format", "json")
    assert result.code == 0, result.err
    warnings = [line for line in result.err.splitlines() if " RLC407 warning: " in line]
    assert warnings and "trainer.experiment_name" in warnings[0]
    overrides = json.loads(result.out)["overrides"]
    written = next(o for o in overrides if o.startswith("trainer.experiment_name="))
    assert "\\${" in written, written  # OmegaConf reads `\${` as the text `${`


def test_interpolation_on_the_command_line_stays_live(rlcat: Run) -> None:
    """The operator's own --override keeps the meaning it has on verl's command line."""
    result = rlcat(
        "compile", PARENT, "--format", "json", "--override", "trainer.experiment_name=${oc.env:USER}"
    )
    assert result.code == 0, result.err
    assert 'trainer.experiment_name="${oc.env:USER}"' in json.loads(result.out)["overrides"]
    assert "RLC407" not in result.err


def test_an_interpolation_in_a_dataset_path_is_refused_where_it_is_written(
    rlcat: Run, tmp_path: Path
) -> None:
    """A path reaches verl as written: `${...}` in it would be a file name, never the variable. The
    one placeholder rule (model/paths.py) refuses it at the entry's file, line and key."""
    dataset = tmp_path / "catalog" / "datasets" / "hostile_data.yaml"
    dataset.parent.mkdir(parents=True)
    shipped = (REPO / "catalog" / "datasets" / "gsm8k.yaml").read_text(encoding="utf-8")
    hostile = shipped.replace("name: gsm8k", "name: hostile_data").replace(
        "train_files: [~/data/gsm8k/train.parquet]", "train_files: ['~/data/${oc.env:SECRET}.parquet']"
    )
    assert hostile != shipped
    dataset.write_text(hostile, encoding="utf-8")
    path = child_recipe(tmp_path, "dataset: hostile_data\n")
    result = rlcat("compile", str(path), "--format", "json", "--catalog", str(tmp_path))
    assert result.code == 2, result.err
    assert (
        "hostile_data.yaml:3:" in result.err
        and " RLC103 error: '${oc.env:SECRET}' is not expanded" in result.err
    )
    assert "[train_files[0]]" in result.err and result.out == ""


@pytest.mark.parametrize(
    ("body", "key"),
    [
        ("rollout:\n  temperature: .nan\n", "rollout.temperature"),
        ("rollout:\n  temperature: .inf\n", "rollout.temperature"),
        ("rollout:\n  top_p: -.inf\n", "rollout.top_p"),
        ("actor:\n  optim:\n    lr: .nan\n", "actor.optim.lr"),
        ("rollout:\n  val:\n    temperature: .NaN\n", "rollout.val.temperature"),
    ],
    ids=["nan-temperature", "inf-temperature", "negative-inf-top-p", "nan-lr", "nan-val-temperature"],
)
def test_non_finite_numbers_are_refused(rlcat: Run, tmp_path: Path, body: str, key: str) -> None:
    path = child_recipe(tmp_path, body)
    result = rlcat("compile", str(path))
    assert result.code == 2
    errors = errors_of(result, "RLC103")
    assert errors and errors[0].endswith(f"[{key}]"), result.err
    set_result = rlcat("compile", PARENT, "--set", f"{key}=.nan")
    assert set_result.code == 2
    assert f"--set {key}=.nan RLC103 error" in set_result.err


def test_a_string_ending_in_a_newline_is_quoted(rlcat: Run, tmp_path: Path) -> None:
    path = child_recipe(tmp_path, 'trainer:\n  experiment: "run\\n"\n')
    result = rlcat("compile", str(path), "--format", "json")
    assert result.code == 0, result.err
    overrides = json.loads(result.out)["overrides"]
    assert 'trainer.experiment_name="run\n"' in overrides


def test_interp_asks_for_a_live_interpolation_visibly(rlcat: Run, tmp_path: Path) -> None:
    """`!interp` under `overrides:` is the one way recipe data asks verl to resolve something; it is
    written live and reported (RLC407), so validate --strict refuses it and reviewers see it."""
    body = 'overrides:\n  trainer.experiment_name: !interp "${oc.env:USER}-run"\n'
    path = child_recipe(tmp_path, body)
    result = rlcat("compile", str(path), "--format", "json")
    assert result.code == 0, result.err
    assert 'trainer.experiment_name="${oc.env:USER}-run"' in json.loads(result.out)["overrides"]
    (warning,) = [line for line in result.err.splitlines() if " RLC407 warning: " in line]
    assert "asked for with !interp" in warning and f"recipes/{path.name}:5:3 RLC407" in warning
    assert rlcat("validate", str(path), "--platform", "cuda").code == 0
    assert rlcat("validate", str(path), "--platform", "cuda", "--strict").code == 1


def test_interp_on_a_typed_field_is_still_text(rlcat: Run, tmp_path: Path) -> None:
    """A typed field keeps only the text (the schema reads a string), so it is written escaped."""
    path = child_recipe(tmp_path, 'trainer:\n  project: !interp "${oc.env:HOME}"\n')
    result = rlcat("compile", str(path), "--format", "json")
    assert result.code == 0, result.err
    assert 'trainer.project_name="\\${oc.env:HOME}"' in json.loads(result.out)["overrides"]
    assert "writes it escaped" in result.err


@pytest.mark.parametrize(
    "body",
    [
        "actor:\n  model_override_config:\n    x: .nan\n",
        "actor:\n  model_override_config:\n    x:\n      y: -.inf\n",
        "overrides:\n  trainer.total_training_steps: .nan\n",
        "rollout:\n  engine_kwargs:\n    vllm:\n      a: .inf\n",
    ],
    ids=["open-dict", "nested-open-dict", "overrides", "engine-kwargs"],
)
def test_non_finite_numbers_in_free_form_values_are_refused(rlcat: Run, tmp_path: Path, body: str) -> None:
    path = child_recipe(tmp_path, body)
    result = rlcat("compile", str(path))
    assert result.code == 2
    assert any("holds NaN or an infinity" in line for line in errors_of(result, "RLC103")), result.err
    assert rlcat("validate", str(path), "--platform", "cuda").code == 1


def test_show_writes_an_interp_value_back_with_its_tag(rlcat: Run, tmp_path: Path) -> None:
    path = child_recipe(tmp_path, 'overrides:\n  trainer.project_name: !interp "${oc.env:USER}"\n')
    result = rlcat("show", str(path))
    assert result.code == 0, result.err
    assert "trainer.project_name: !interp ${oc.env:USER}" in result.out


def test_a_platform_profile_that_sets_ld_preload_is_reported_by_validate(rlcat: Run, tmp_path: Path) -> None:
    """Every launch on a platform gets its env: validate reports it on the profile file itself."""
    profile = tmp_path / "catalog" / "platforms" / "evp.yaml"
    profile.parent.mkdir(parents=True)
    shipped = (REPO / "catalog" / "platforms" / "cuda.yaml").read_text(encoding="utf-8")
    hostile = shipped.replace("name: cuda\n", "name: evp\n", 1).replace(
        "env: []\n", "env:\n  - {name: LD_PRELOAD, value: /tmp/x.so, reason: perf}\n", 1
    )
    assert hostile.count("LD_PRELOAD") == 1
    profile.write_text(hostile, encoding="utf-8")
    loose = rlcat("validate", str(tmp_path), "--format", "json")
    assert loose.code == 0, loose.out
    (finding,) = [d for d in json.loads(loose.out)["diagnostics"] if d["code"] == "RLC901"]
    assert (
        finding["file"].endswith("catalog/platforms/evp.yaml")
        and finding["line"] == hostile.split("LD_PRELOAD")[0].count("\n") + 1
    )
    assert rlcat("validate", str(tmp_path), "--strict").code == 1


@pytest.mark.parametrize(
    "body",
    [
        "actor:\n  model_override_config:\n    rope_scaling.type: x\n    rope_scaling: {factor: 2}\n",
        "rollout:\n  engine_kwargs:\n    vllm:\n      a.b: 1\n",
        "actor:\n  model_override_config:\n    outer:\n      in.ner: 1\n",
    ],
    ids=["beside-its-nested-form", "engine-kwargs", "nested"],
)
def test_a_dotted_key_in_a_free_form_mapping_is_refused(rlcat: Run, tmp_path: Path, body: str) -> None:
    """Each key of such a mapping is one segment of a verl key: a dotted one would write a path
    twice (or silently nest), so it is refused where it is written."""
    result = rlcat("compile", str(child_recipe(tmp_path, body)))
    assert result.code == 2
    assert any("holds a '.'" in line for line in errors_of(result, "RLC103")), result.err


def test_an_entry_hiding_another_user_folders_entry_is_reported(rlcat: Run, tmp_path: Path) -> None:
    """Two catalog folders (say a pull request's and a team's shared RLCAT_PATH one) with the same
    model: the first wins, and the one it hides is named (RLC206), not silently replaced."""
    shipped = (REPO / "catalog" / "models" / "qwen3_8b.yaml").read_text(encoding="utf-8")
    for folder, positions in (("pr", 1111), ("team", 2222)):
        model = tmp_path / folder / "catalog" / "models" / "mymodel.yaml"
        model.parent.mkdir(parents=True)
        text = shipped.replace("name: qwen3_8b", "name: mymodel")
        model.write_text(text + f"# {positions}\n", encoding="utf-8")
    recipe = child_recipe(tmp_path / "pr", "model: mymodel\n")
    result = rlcat(
        "compile", str(recipe), "--catalog", str(tmp_path / "pr"), "--catalog", str(tmp_path / "team")
    )
    assert result.code == 0, result.err
    (warning,) = [line for line in result.err.splitlines() if " RLC206 warning: " in line]
    assert "pr/catalog/models/mymodel.yaml" in warning
    assert str(tmp_path / "team" / "catalog" / "models" / "mymodel.yaml") in warning
