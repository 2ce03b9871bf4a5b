"""Results as catalog entries: the seed figures from AMD's material, what `rlcat validate` checks in a
result, `rlcat results`, and hostile text in result files (escaped in every output)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from rlcat.catalog import Catalog
from rlcat.model.results import UNITS

from conftest import REPO, Result

Run = Callable[..., Result]
RESULTS = REPO / "catalog" / "results"


def test_seed_results_validate(rlcat: Run) -> None:
    r = rlcat("validate", str(RESULTS))
    assert r.code == 0, r.out + r.err
    assert f"{len(list(RESULTS.glob('*.yaml')))} files checked: 0 error(s), 0 warning(s)" in r.out


def _figures() -> dict[str, dict[tuple[str, str | None], tuple[float, float | None]]]:
    out = {}
    for path in RESULTS.glob("*.yaml"):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        out[data["name"]] = {
            (m["metric"], m.get("dataset")): (m["value"], m.get("high")) for m in data["metrics"]
        }
    return out


def test_every_figure_of_the_amd_material_is_in_the_catalog() -> None:
    """The figures of seeds 004 (AMD's measurements, as the article reports them), each on the
    recipe of the run it is about, with its source."""
    figures = _figures()
    assert figures["gsm8k_qwen3_8b_fsdp-sglang-amd"] == {
        ("val_score_initial", "gsm8k"): (0.82, None),
        ("val_score_final", "gsm8k"): (0.955, 0.956),
        ("val_score_initial", "math"): (0.37, None),
        ("val_score_final", "math"): (0.835, 0.839),
    }
    assert figures["dapo_math_fsdp2_16_16-mi300-amd"] == {
        ("val_score_max", None): (0.34, None),
        ("step_time_median", None): (219, None),
    }
    assert figures["dapo_math_fsdp2_16_16-upstream-reference"] == {("val_score_max", None): (0.33, None)}
    assert figures["dapo_math_fsdp2_colocate_32-mi300-amd"] == {("step_time_median", None): (394, None)}
    assert figures["qwen3_5_35b_megatron_async-mi350-amd"] == {("throughput", None): (310, None)}
    assert figures["qwen3_5_35b_megatron-mi350-amd"] == {("throughput", None): (216, None)}
    ratios = {}
    for path in RESULTS.glob("*.yaml"):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        assert data["kind"] == "reported" and data["source"]["title"] and data["source"]["quote"]
        if "baseline" in data:
            ratios[data["name"]] = (data["baseline"]["result"], data["baseline"]["ratio"])
    assert ratios == {
        "dapo_math_fsdp2_16_16-mi300-amd": ("dapo_math_fsdp2_colocate_32-mi300-amd", 1.8),
        "qwen3_5_35b_megatron_async-mi350-amd": ("qwen3_5_35b_megatron-mi350-amd", 1.4),
    }
    # the numbers appear in the quoted sentence of the source, as written there
    for path in RESULTS.glob("*.yaml"):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        for metric in data["metrics"]:
            for number in (metric["value"], metric.get("high")):
                if number is not None:
                    assert f"{number:g}".replace(".", ",") in data["source"]["quote"], (path.name, number)


def test_results_lists_the_seeds(rlcat: Run) -> None:
    r = rlcat("results", "--platform", "rocm-7.14", "-f", "json")
    assert r.code == 0, r.err
    rows = json.loads(r.out)
    assert {"recipe", "platform", "kind", "source", "metrics"} <= set(rows[0])
    assert {row["platform"] for row in rows} == {"rocm-7.14"}
    table = rlcat("results", "--recipe", "dapo_math_fsdp2_16_16")
    assert "≈219 s" in table.out and "0.33" in table.out and "qwen3_5" not in table.out


GOOD = {
    "name": "r1",
    "summary": "a run",
    "recipe": "gsm8k_qwen3_8b_fsdp",
    "platform": "rocm",
    "hardware": {"gpus": 8},
    "mode": "colocate",
    "kind": "reported",
    "source": {"title": "somewhere"},
    "metrics": [{"metric": "step_time_median", "value": 10, "unit": "s"}],
}


def _write(root: Path, data: dict[str, object] | str, name: str = "r1") -> Path:
    folder = root / "catalog" / "results"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.yaml"
    path.write_text(
        data if isinstance(data, str) else yaml.safe_dump(data, allow_unicode=True), encoding="utf-8"
    )
    return path


BAD = {
    "unit_outside_the_closed_set": (
        {"metrics": [{"metric": "step_time_median", "value": 1, "unit": "min"}]},
        "RLC103",
    ),
    "unit_of_another_metric": (
        {"metrics": [{"metric": "step_time_median", "value": 1, "unit": "fraction"}]},
        "RLC103",
    ),
    "not_finite": ("metrics:\n  - {metric: throughput, value: .nan, unit: tokens/s/GPU}\n", "RLC103"),
    "infinite": ("metrics:\n  - {metric: throughput, value: .inf, unit: tokens/s/GPU}\n", "RLC103"),
    "steps_not_increasing": (
        {"series": [{"key": "timing_s/step", "unit": "s", "steps": [1, 3, 2], "values": [1, 2, 3]}]},
        "RLC103",
    ),
    "series_of_unequal_length": (
        {"series": [{"key": "timing_s/step", "unit": "s", "steps": [1, 2], "values": [1]}]},
        "RLC103",
    ),
    "reported_without_source": ({"source": None}, "RLC103"),
    "measured_without_run": ({"kind": "measured"}, "RLC103"),
    "unknown_recipe": ({"recipe": "no_such_recipe"}, "RLC201"),
    "unknown_platform": ({"platform": "rocm-99"}, "RLC204"),
    "mode_the_recipe_does_not_allow": ({"mode": "fully_async"}, "RLC205"),
    "unknown_baseline": ({"baseline": {"result": "nope", "metric": "throughput", "ratio": 2}}, "RLC202"),
    "not_a_date": ({"date": "2026-02-31"}, "RLC103"),
    "range_upside_down": (
        {"metrics": [{"metric": "throughput", "value": 3, "high": 2, "unit": "tokens/s/GPU"}]},
        "RLC103",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_validate_checks_results(rlcat: Run, tmp_path: Path, case: str) -> None:
    change, code = BAD[case]
    if isinstance(change, str):
        text = yaml.safe_dump({k: v for k, v in GOOD.items() if k != "metrics"}) + change
        path = _write(tmp_path, text)
    else:
        data = {**GOOD, **change}
        path = _write(tmp_path, {k: v for k, v in data.items() if v is not None})
    r = rlcat("validate", str(path), "--catalog", str(tmp_path))
    assert r.code in (1, 2), r.out
    assert code in r.out, r.out
    assert ".yaml:" in r.out  # every finding has its file and line


def test_a_good_result_validates(rlcat: Run, tmp_path: Path) -> None:
    path = _write(tmp_path, GOOD)
    r = rlcat("validate", str(path), "--catalog", str(tmp_path))
    assert r.code == 0, r.out
    assert set(UNITS) == {"fraction", "s", "tokens/s/GPU", "steps", "ratio"}
    assert "r1" in Catalog([tmp_path]).names("result")


HOSTILE = "evil\x1b[31m red ##[error]forged \u202e rtl \x07"


def test_hostile_text_in_a_result_is_escaped_in_every_output(rlcat: Run, tmp_path: Path) -> None:
    data = {
        **GOOD,
        "summary": HOSTILE,
        "hardware": {"gpus": 8, "gpu": HOSTILE},
        "source": {"title": HOSTILE, "quote": HOSTILE},
        "notes": HOSTILE,
        "metrics": [{"metric": "throughput", "value": 1, "unit": "tokens/s/GPU", "dataset": HOSTILE}],
    }
    _write(tmp_path, json.dumps(data))  # JSON is YAML: the escapes reach the file as characters
    for args in (
        ("results",),
        ("results", "-f", "json"),
        ("runs", "show", "r1"),
        ("runs", "show", "r1", "-f", "json"),
    ):
        r = rlcat(*args, "--catalog", str(tmp_path))
        assert r.code == 0, (args, r.err)
        for raw in ("\x1b", "\u202e", "\x07", "##[error]"):
            assert raw not in r.out, (args, raw)
    shown = rlcat("runs", "show", "r1", "--catalog", str(tmp_path)).out
    assert "evil\\x1b[31m red ##\\x5berror]forged \\u202e rtl \\x07" in shown
    parsed = json.loads(rlcat("results", "-f", "json", "--catalog", str(tmp_path)).out)
    assert [row["summary"] for row in parsed if row["name"] == "r1"] == [HOSTILE]  # the same value


def test_a_broken_result_file_is_reported_and_the_rest_listed(rlcat: Run, tmp_path: Path) -> None:
    _write(tmp_path, GOOD)
    _write(tmp_path, "name: r2\nsummary: [\n", name="r2")
    r = rlcat("results", "--catalog", str(tmp_path), "-f", "json")
    assert r.code == 1
    assert "r2.yaml:" in r.err and "RLC002" in r.err
    assert "r1" in [row["name"] for row in json.loads(r.out)]
