"""The security guards beyond their YAML cases: which variables RLC901 flags and why, where each
finding points, what `validate --strict` does with them, and that no shipped recipe trips them.

tests/guards/RLC901.yaml and RLC902.yaml hold the pass / fail / allow cases."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import pytest

from rlcat.catalog import Catalog
from rlcat.compile.assemble import Request, compile_request
from rlcat.diagnostics import Diagnostic, RlcatError, Severity
from rlcat.guards import REGISTRY
from rlcat.guards.security.environment import (
    NAMED,
    PLUGIN_FILES,
    PREFIXES,
    EnvironmentThatChangesWhatRuns,
    hazard,
)
from rlcat.guards.security.remote_code import shipped_hf_id
from rlcat.model.plan import Layer, Origin, Plan, Setting
from rlcat.survey.recipes import matrix

from conftest import REPO, Result

Run = Callable[..., Result]


VARIABLES = [
    ("LD_PRELOAD", "./libx.so", True),
    ("LD_BIND_NOW", "1", True),  # every LD_ variable reaches the loader
    ("LD_TRACE_LOADED_OBJECTS", "1", True),
    ("DYLD_INSERT_LIBRARIES", "./libx.dylib", True),
    ("PATH", "/usr/bin:/bin", True),  # even an ordinary value: the recipe is not the place
    ("HOME", "/tmp/home", True),
    ("PYTHONUSERBASE", "/tmp/base", True),
    ("CC", "gcc", True),
    ("NCCL_NET_PLUGIN", "/opt/plugins/libnccl-net-x.so", True),
    ("NCCL_NET_PLUGIN", "ofi", False),  # a plugin installed in the library path, by its suffix
    ("NCCL_ENV_PLUGIN", "none", False),
    ("PYTHONSAFEPATH", "1", False),
    ("PYTHONINSPECT", "1", False),
    ("PYTHONBREAKPOINT", "pdb.set_trace", False),
    ("CUDA_VISIBLE_DEVICES", "0,1", False),
    ("NCCL_MIN_NCHANNELS", "112", False),
    ("OLD_PATH", "./bin", False),  # a prefix is only a prefix
    ("path", "./bin", False),
    ("XLD_PRELOAD", "./libx.so", False),
]


@pytest.mark.parametrize(("name", "value", "flagged"), VARIABLES, ids=[f"{n}={v}" for n, v, _ in VARIABLES])
def test_which_variables_change_what_runs(name: str, value: str, flagged: bool) -> None:
    assert (hazard(name, value) is not None) is flagged


def test_every_flagged_variable_is_on_the_docs_page_with_its_reference() -> None:
    docs = REGISTRY["RLC901"].docs()
    listed = [f"`{prefix}*`" for prefix in PREFIXES]
    listed += [f"`{name}`" for name in [*NAMED, *PLUGIN_FILES]]
    assert [entry for entry in listed if entry not in docs] == []
    for table in (NAMED, PREFIXES, PLUGIN_FILES):
        for found in table.values():
            assert found.effect and found.reference
            assert found.reference.split(" ", 1)[0] in docs


def _compile(
    tmp_path: Path, recipe_text: str, platform: str = "cuda", **request: list[str]
) -> list[Diagnostic]:
    recipe = tmp_path / "recipes" / "probe.yaml"
    recipe.parent.mkdir(parents=True, exist_ok=True)
    recipe.write_text(recipe_text)
    try:
        compiled = compile_request(Request(str(recipe), platform, **request), Catalog.default([tmp_path]))
    except RlcatError as exc:
        pytest.fail("\n".join(d.render() for d in exc.diagnostics))
    return compiled.diagnostics


PROBE = "name: probe\nextends: gsm8k_qwen3_8b_fsdp\nsummary: a probe\n"


@pytest.mark.parametrize(
    ("recipe_text", "platform", "sets", "names"),
    [
        (PROBE + "env:\n  NODE_OPTIONS: --require ./x.js\n", "cuda", [], "probe.yaml:5"),
        (
            PROBE + "platforms:\n  rocm:\n    env:\n      LD_PRELOAD: ./libx.so\n",
            "rocm",
            [],
            "recipe platforms.rocm block (",
        ),
        (PROBE, "cuda", ["env.BASH_ENV=./hook.sh"], "--set env.BASH_ENV=./hook.sh"),
    ],
    ids=["recipe_env", "platform_block", "set"],
)
def test_environment_finding_names_who_set_the_variable(
    tmp_path: Path, recipe_text: str, platform: str, sets: list[str], names: str
) -> None:
    (finding,) = [d for d in _compile(tmp_path, recipe_text, platform, sets=sets) if d.code == "RLC901"]
    assert finding.severity == Severity.WARNING
    assert names in finding.message


def test_environment_finding_names_the_platform_profile(tmp_path: Path) -> None:
    profile = tmp_path / "catalog" / "platforms" / "shim-cuda.yaml"
    profile.parent.mkdir(parents=True)
    profile.write_text(
        "name: shim-cuda\nfamily: cuda\nvendor: nvidia\nsummary: preloads a shim\n"
        "verl_version: 0.9.1\nverl_index: 0.9.1\n"
        "env:\n  - {name: GCONV_PATH, value: /opt/shim/gconv, reason: none}\n"
    )
    (finding,) = [d for d in _compile(tmp_path, PROBE, "shim-cuda") if d.code == "RLC901"]
    assert "platform shim-cuda (" in finding.message and "shim-cuda.yaml" in finding.message


@pytest.mark.parametrize(
    "value", ["./x.so\n::error::forged\u202e", "./x.so" + "a" * 10_000], ids=["controls", "long"]
)
def test_the_finding_shows_the_value_on_one_short_printable_line(value: str) -> None:
    """The message quotes the value, escaped and shortened, whatever reporter prints it."""
    plan = Plan("probe", "cuda", "verl.trainer.main_ppo", "ppo_trainer", "0.9.1", "0.9.1")
    origin = Origin(Layer.RECIPE, "recipes/probe.yaml:5", "recipes/probe.yaml", 5)
    plan.put(Setting("LD_PRELOAD", value, origin), env=True)
    # the guard reads nothing but the plan's environment and the profile's docker_run
    ctx = SimpleNamespace(plan=plan, profile=SimpleNamespace(name="cuda", docker_run=()))
    (finding,) = EnvironmentThatChangesWhatRuns().check(ctx)  # type: ignore[arg-type]
    assert finding.message.isprintable() and len(finding.message) < 500
    assert "from recipes/probe.yaml:5" in finding.message


def test_remote_code_finding_points_at_the_switch_and_names_the_path(tmp_path: Path) -> None:
    text = (
        "name: probe\nextends: qwen3_5_35b_megatron\nsummary: a fork\n"
        "actor:\n  model_path: someone/fork\n  trust_remote_code: true\n"
    )
    (finding,) = [d for d in _compile(tmp_path, text) if d.code == "RLC902"]
    assert (Path(str(finding.file)).name, finding.line) == ("probe.yaml", 6)
    assert finding.key == "actor_rollout_ref.model.trust_remote_code"
    assert "'someone/fork' (from " in finding.message and "probe.yaml:5)" in finding.message
    assert "rlcat ships Qwen/Qwen3.5-35B-A3B" in finding.message


def test_shipped_repository_comes_from_the_built_in_catalog_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    replacement = tmp_path / "catalog" / "models" / "qwen3_8b.yaml"
    replacement.parent.mkdir(parents=True)
    replacement.write_text(
        "name: qwen3_8b\nhf_id: someone/Qwen3-8B\nfamily: qwen3\nsize: 8B\nmax_position_embeddings: 40960\n"
    )
    monkeypatch.setenv("RLCAT_PATH", str(tmp_path))
    assert Catalog.default().find("model", "qwen3_8b") == replacement  # the user entry wins a compile
    assert shipped_hf_id("qwen3_8b") == "Qwen/Qwen3-8B"
    assert shipped_hf_id("no_such_model") is None


@pytest.mark.parametrize(
    ("recipe_text", "code"),
    [
        (PROBE + "env:\n  PYTHONPATH: ./patches\n", "RLC901"),
        (PROBE + "actor:\n  model_path: someone/fork\n  trust_remote_code: true\n", "RLC902"),
    ],
    ids=["RLC901", "RLC902"],
)
def test_validate_reports_a_warning_and_strict_fails_on_it(
    rlcat: Run, tmp_path: Path, recipe_text: str, code: str
) -> None:
    recipe = tmp_path / "recipes" / "probe.yaml"
    recipe.parent.mkdir(parents=True)
    recipe.write_text(recipe_text)
    relaxed = rlcat("validate", str(recipe), "--platform", "cuda", "--format", "json")
    assert relaxed.code == 0, relaxed.out
    found = [d for d in json.loads(relaxed.out)["diagnostics"] if d["code"] == code]
    assert found and all(d["severity"] == "warning" for d in found)
    strict = rlcat("validate", str(recipe), "--platform", "cuda", "--strict")
    assert strict.code == 1 and code in strict.out


@pytest.mark.parametrize("recipe", sorted(p.stem for p in (REPO / "recipes").rglob("*.yaml")))
def test_no_shipped_recipe_trips_a_security_guard(recipe: str) -> None:
    catalog = Catalog.default()
    cells = matrix(recipe, catalog)
    assert {cell.platform for cell in cells} == set(catalog.names("platform"))
    assert [(c.platform, c.engine, c.guards) for c in cells if {"RLC901", "RLC902"} & set(c.guards)] == []
