"""Runs: `compile --run-dir`, a metrics file written by verl's own FileLogger, `runs add`, `runs list |
show | compare`, `results`, and bad metrics files (line numbers, live runs, nothing overwritten)."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml

from rlcat.dev.trees import VERL_VERSIONS, tree_dir
from rlcat.emit.formats import plan_fingerprint
from rlcat.runs.metrics import MAX_REPORTED, SERIES_POINTS, read_metrics

from conftest import REPO, Result

Run = Callable[..., Result]


def _verl_file_logger() -> Any:
    """verl's FileLogger class, loaded from the fetched release tree (verl/utils/tracking.py needs
    only orjson and packaging, not verl's package), or None where the tree is missing."""
    tracking = tree_dir(VERL_VERSIONS[-1]) / "verl" / "utils" / "tracking.py"
    if not tracking.is_file():
        return None
    spec = importlib.util.spec_from_file_location("verl_tracking_for_tests", tracking)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.FileLogger


class _SameFormat:
    """Byte for byte what FileLogger.log writes (`orjson.dumps({"step": step, "data": data},
    option=orjson.OPT_SERIALIZE_NUMPY) + b"\\n"`), for machines without verl's tree: compact JSON,
    UTF-8, NaN and infinities as null. orjson is one of rlcat's own dependencies."""

    def __init__(self, project_name: str, experiment_name: str) -> None:
        self.fp = open(os.environ["VERL_FILE_LOGGER_PATH"], "wb", buffering=0)  # noqa: SIM115

    def log(self, data: dict[str, Any], step: int) -> None:
        record = {"step": step, "data": data}
        self.fp.write(orjson.dumps(record, option=orjson.OPT_SERIALIZE_NUMPY) + b"\n")

    def finish(self) -> None:
        self.fp.close()


FileLogger = _verl_file_logger() or _SameFormat


def training(
    steps: int, *, val_every: int = 5, base: float = 0.3, step_time: float = 200.0
) -> Iterator[tuple[int, dict[str, Any]]]:
    """What verl's trainer logs: validation before training, then per step its timings and
    throughput, with validation every `val_every` steps on lines of their own."""
    yield 0, {"val-core/openai/gsm8k/reward/mean@1": base}
    for step in range(1, steps + 1):
        yield (
            step,
            {
                "timing_s/step": step_time + step % 3,
                "perf/throughput": 1000.0 + step,
                "actor/pg_loss": float("nan"),  # orjson writes null, as verl's logger does
                "training/global_step": step,
            },
        )
        if step % val_every == 0:
            yield step, {"val-core/openai/gsm8k/reward/mean@1": base + step / 100}


def write_metrics(
    run_dir: Path,
    records: Iterator[tuple[int, dict[str, Any]]],
    monkeypatch: pytest.MonkeyPatch,
    logger_class: Any = FileLogger,
) -> Path:
    path = run_dir / "metrics.jsonl"
    monkeypatch.setenv("VERL_FILE_LOGGER_PATH", str(path))
    logger = logger_class("project", "experiment")
    for step, data in records:
        logger.log(data=data, step=step)
    logger.finish()
    return path


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "team").mkdir()
    return tmp_path


def compile_run(rlcat: Run, run_dir: str, *extra: str, recipe: str = "gsm8k_qwen3_8b_fsdp") -> Result:
    r = rlcat("compile", recipe, "--platform", "rocm", "--run-dir", run_dir, "--format", "shell", *extra)
    assert r.code == 0, r.err
    return r


def test_verl_file_logger_is_the_real_one_where_the_tree_is_fetched() -> None:
    if os.environ.get("CI"):
        assert FileLogger is not _SameFormat, "verl's tree is fetched in CI: the real FileLogger must be used"


def test_the_stand_in_writes_what_verls_file_logger_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = _verl_file_logger()
    if real is None:
        pytest.skip("needs verl's tree to compare with (`rlcat dev fetch-verl`); tests never download it")
    written = {}
    for name, logger_class in (("real", real), ("stand-in", _SameFormat)):
        (tmp_path / name).mkdir()
        path = write_metrics(tmp_path / name, training(6, val_every=2), monkeypatch, logger_class)
        written[name] = path.read_bytes()
    assert b'"actor/pg_loss":null' in written["real"]
    assert written["stand-in"] == written["real"]


def test_compile_run_dir_adds_the_file_logger_and_writes_the_plan(rlcat: Run, workspace: Path) -> None:
    r = compile_run(rlcat, "runs/one")
    metrics = workspace / "runs" / "one" / "metrics.jsonl"
    assert f"export VERL_FILE_LOGGER_PATH={metrics}" in r.out
    assert "'trainer.logger=[console,wandb,file]'" in r.out
    assert "--run-dir runs/one" in r.out  # the regenerate line makes the same run folder again
    plan = json.loads((workspace / "runs" / "one" / "plan.json").read_text())
    assert plan["recipe"] == "gsm8k_qwen3_8b_fsdp" and plan["mode"] == "colocate" and plan["gpus"] == 8
    assert plan["env"]["VERL_FILE_LOGGER_PATH"] == str(metrics)
    assert plan["origins"]["env"]["VERL_FILE_LOGGER_PATH"]["label"] == "--run-dir runs/one"
    # the fingerprint is the plan's, wherever its metrics go: the same as a compile without --run-dir
    plain = json.loads(rlcat("compile", "gsm8k_qwen3_8b_fsdp", "--platform", "rocm", "--format", "json").out)
    assert plan["fingerprint"] == plain["fingerprint"] == plan_fingerprint(plain)
    assert plain["fingerprint"].startswith("sha256:") and len(plain["fingerprint"]) == 71


def test_compile_run_dir_keeps_the_plan_of_another_run(rlcat: Run, workspace: Path) -> None:
    compile_run(rlcat, "runs/one")
    again = rlcat("compile", "gsm8k_qwen3_8b_fsdp", "-p", "rocm", "--run-dir", "runs/one")
    assert again.code == 0, again.err  # the same plan: nothing changes
    other = rlcat("compile", "dapo_math_fsdp2_4_4", "-p", "rocm", "--run-dir", "runs/one")
    assert other.code == 2 and "RLC1206" in other.err
    assert json.loads((workspace / "runs/one/plan.json").read_text())["recipe"] == "gsm8k_qwen3_8b_fsdp"


def test_runs_add_records_a_measured_result(
    rlcat: Run, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    compile_run(rlcat, "runs/one")
    write_metrics(workspace / "runs" / "one", training(20), monkeypatch)
    r = rlcat("runs", "add", "runs/one", "--catalog", "team", "--gpu", "MI300X")
    assert r.code == 0, r.err
    path = workspace / "team" / "catalog" / "results" / "gsm8k_qwen3_8b_fsdp-rocm-one.yaml"
    assert "recorded gsm8k_qwen3_8b_fsdp-rocm-one" in r.out
    data = yaml.safe_load(path.read_text())
    assert data["kind"] == "measured" and data["hardware"] == {"gpu": "MI300X", "gpus": 8, "nodes": 1}
    plan = json.loads((workspace / "runs/one/plan.json").read_text())
    assert data["fingerprint"] == plan["fingerprint"]
    scalars = {(m["metric"], m.get("key")): m for m in data["metrics"]}
    val = "val-core/openai/gsm8k/reward/mean@1"
    assert scalars[("val_score_initial", val)]["value"] == 0.3
    assert scalars[("val_score_max", val)] == {
        "metric": "val_score_max",
        "value": 0.5,
        "unit": "fraction",
        "at_step": 20,
        "dataset": "openai/gsm8k",
        "key": val,
    }
    assert scalars[("step_time_median", "timing_s/step")]["value"] == 201.0
    assert scalars[("throughput", "perf/throughput")]["value"] == 1010.5
    assert scalars[("steps", None)]["value"] == 20
    series = {s["key"]: s for s in data["series"]}
    assert series[val]["steps"] == [0, 5, 10, 15, 20]
    assert len(series["timing_s/step"]["steps"]) == 20
    # the recorded file is an entry of the catalog like any other
    v = rlcat("validate", str(path), "--catalog", "team")
    assert v.code == 0, v.out + v.err
    listed = json.loads(
        rlcat("results", "--catalog", "team", "--recipe", "gsm8k_qwen3_8b_fsdp", "-f", "json").out
    )
    mine = [x for x in listed if x["kind"] == "measured"]
    assert [x["name"] for x in mine] == ["gsm8k_qwen3_8b_fsdp-rocm-one"]
    assert {"recipe", "platform", "kind", "source", "metrics"} <= set(mine[0])
    runs = rlcat("runs", "list", "--catalog", "team")
    assert "gsm8k_qwen3_8b_fsdp-rocm-one" in runs.out and "201 s" in runs.out
    shown = rlcat("runs", "show", "gsm8k_qwen3_8b_fsdp-rocm-one", "--catalog", "team")
    assert shown.code == 0 and "val_score_max" in shown.out and plan["fingerprint"] in shown.out


def test_nothing_in_the_catalog_is_overwritten_without_force(
    rlcat: Run, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, path = record_one(rlcat, workspace, monkeypatch, training(10))
    before = path.read_bytes()
    write_metrics(workspace / "runs" / "one", training(15), monkeypatch)
    again = rlcat("runs", "add", "runs/one", "--catalog", "team")
    assert again.code == 2 and "RLC1206" in again.err and "--force" in again.err
    assert path.read_bytes() == before
    forced = rlcat("runs", "add", "runs/one", "--catalog", "team", "--force")
    assert forced.code == 0, forced.err
    assert yaml.safe_load(path.read_text())["run"]["lines"] > yaml.safe_load(before)["run"]["lines"]


def test_runs_compare_shows_plan_and_metric_differences(
    rlcat: Run, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    compile_run(rlcat, "runs/a")
    compile_run(rlcat, "runs/b", "--set", "batch.mini_batch_size=128")
    write_metrics(workspace / "runs" / "a", training(10, step_time=200.0), monkeypatch)
    write_metrics(workspace / "runs" / "b", training(10, step_time=150.0, base=0.4), monkeypatch)
    r = rlcat("runs", "compare", "runs/a", "runs/b")
    assert r.code == 0, r.err
    changed = "~ actor_rollout_ref.actor.ppo_mini_batch_size: 256 -> 128"
    assert f"{changed}    # command-line: --set batch.mini_batch_size=128" in r.out
    assert "VERL_FILE_LOGGER_PATH" not in r.out  # where each run logs is no difference of plans
    rows = {
        line.split()[0]: line.split()
        for line in r.out.splitlines()
        if line.startswith(("step_time", "val_score_max"))
    }
    assert rows["step_time_median"][2:] == ["201", "s", "151", "s", "-50", "s"]
    assert rows["val_score_max"][2:] == ["0.4", "0.5", "+0.1"]
    data = json.loads(rlcat("runs", "compare", "runs/a", "runs/b", "-f", "json").out)
    assert data["same_plan"] is False
    (change,) = data["plan"]
    assert change["key"] == "actor_rollout_ref.actor.ppo_mini_batch_size"
    assert (
        change["origin_before"].startswith("recipe: ")
        and change["origin_after"] == "command-line: --set batch.mini_batch_size=128"
    )
    # a recorded run compares by name, its plan read from the folder it was recorded from
    assert rlcat("runs", "add", "runs/a", "--catalog", "team").code == 0
    by_name = rlcat("runs", "compare", "gsm8k_qwen3_8b_fsdp-rocm-a", "runs/b", "--catalog", "team")
    assert by_name.code == 0 and "ppo_mini_batch_size: 256 -> 128" in by_name.out
    same = rlcat("runs", "compare", "runs/a", "runs/a")
    assert "plan: the same (fingerprint sha256:" in same.out
    # a bare folder name (`r1` for runs/r1) or a run's own name: what it may have meant
    bare = rlcat("runs", "compare", "b", "runs/a")
    assert bare.code == 2 and "RLC202 error: 'b' is neither a run folder nor a recorded result" in bare.err
    assert "did you mean the run folder runs/b?" in bare.err
    short = rlcat("runs", "compare", "a", "runs/b", "--catalog", "team")
    assert "did you mean the run folder runs/a or the result gsm8k_qwen3_8b_fsdp-rocm-a?" in short.err
    nothing = rlcat("runs", "compare", "zz", "runs/b")
    assert "give a run folder (runs/NAME" in nothing.err and "rlcat runs list" in nothing.err


NOISY = 0.9600000000000001  # 0.3 + 0.66 in floating point: what a trainer's mean can log


def record_one(
    rlcat: Run,
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
    records: Iterator[tuple[int, dict[str, Any]]],
    *compile_args: str,
) -> tuple[Result, Path]:
    """runs/one compiled with `compile_args`, its metrics `records`, recorded into team/: what
    `runs add` said, and the results file."""
    compile_run(rlcat, "runs/one", *compile_args)
    write_metrics(workspace / "runs" / "one", records, monkeypatch)
    added = rlcat("runs", "add", "runs/one", "--catalog", "team")
    assert added.code == 0, added.err
    return added, workspace / "team" / "catalog" / "results" / "gsm8k_qwen3_8b_fsdp-rocm-one.yaml"


def _noisy() -> Iterator[tuple[int, dict[str, Any]]]:
    return iter([*training(10), (10, {"val-core/openai/gsm8k/reward/mean@1": NOISY})])


def test_a_results_file_travels_with_its_catalog(
    rlcat: Run, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, result = record_one(rlcat, workspace, monkeypatch, training(10))
    name = result.stem
    assert yaml.safe_load(result.read_text())["run"]["folder"] == "../runs/one"
    # the catalog and its runs moved together to another checkout: the plan is found from the file
    moved = workspace / "elsewhere"
    moved.mkdir()
    for folder in ("team", "runs"):
        shutil.move(str(workspace / folder), str(moved / folder))
    monkeypatch.chdir(moved / "team")
    by_name = rlcat("runs", "compare", name, "../runs/one", "--catalog", ".")
    assert by_name.code == 0 and "RLC1201" not in by_name.err, by_name.err
    assert "plan: the same (fingerprint sha256:" in by_name.out
    # a file written by an older rlcat holds an absolute path: still read as it is
    moved_result = moved / "team" / "catalog" / "results" / f"{name}.yaml"
    data = yaml.safe_load(moved_result.read_text())
    data["run"]["folder"] = str(moved / "runs" / "one")
    moved_result.write_text(yaml.safe_dump(data, sort_keys=False))
    old = rlcat("runs", "compare", name, "../runs/one", "--catalog", ".")
    assert old.code == 0 and "RLC1201" not in old.err and "plan: the same" in old.out, old.err
    assert rlcat("validate", str(moved_result), "--catalog", ".").code == 0
    # an absolute path that no longer leads to the run: compared without the plan, with a warning
    data["run"]["folder"] = str(workspace / "runs" / "one")
    moved_result.write_text(yaml.safe_dump(data, sort_keys=False))
    gone = rlcat("runs", "compare", name, "../runs/one", "--catalog", ".")
    assert gone.code == 0 and "RLC1201 warning" in gone.err and "run.folder" in gone.err


def test_numbers_are_stored_as_measured_and_shown_rounded(
    rlcat: Run, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    added, result = record_one(rlcat, workspace, monkeypatch, _noisy())
    name = result.stem
    data = yaml.safe_load(result.read_text())
    best = next(m for m in data["metrics"] if m["metric"] == "val_score_max")
    assert best["value"] == NOISY  # the file keeps what the run logged, bit for bit
    val = next(s for s in data["series"] if s["key"].startswith("val-core/"))
    assert val["values"][-1] == NOISY
    shown = [
        added.out,
        rlcat("runs", "show", name, "--catalog", "team").out,
        rlcat("runs", "show", "runs/one").out,
        rlcat("runs", "list", "--catalog", "team").out,
        rlcat("results", "--catalog", "team", "--recipe", "gsm8k_qwen3_8b_fsdp").out,
        rlcat("runs", "compare", name, "runs/one", "--catalog", "team").out,
    ]
    for text in shown:
        assert "0.96" in text and repr(NOISY) not in text, text
    as_json = json.loads(rlcat("runs", "show", name, "--catalog", "team", "-f", "json").out)
    assert NOISY in [m["value"] for m in as_json["metrics"]]  # for programs: as stored


def test_a_result_records_how_its_plan_was_compiled(
    rlcat: Run, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    override = "trainer.val_before_train=False"
    args = ("--set", "batch.mini_batch_size=128", "--override", override)
    added, result = record_one(rlcat, workspace, monkeypatch, _noisy(), *args)
    name = result.stem
    run = yaml.safe_load(result.read_text())["run"]
    assert run["sets"] == ["batch.mini_batch_size=128"] and run["overrides"] == [override]
    command = [
        "rlcat", "compile", "gsm8k_qwen3_8b_fsdp", "--platform", "rocm",
        "--set", "batch.mini_batch_size=128", "--override", override, "--run-dir", "runs/one",
    ]  # fmt: skip
    assert run["command"] == command
    compiled_with = "compiled with: " + " ".join(command)
    assert compiled_with in rlcat("runs", "show", name, "--catalog", "team").out
    # the summary of `runs add`: a label on every figure, which set it is of, and the command
    lines = added.out.splitlines()
    assert lines[0] == f"recorded {name} in team/catalog/results/{name}.yaml:"
    rows = {line.split("  ")[1].strip(): line for line in lines[1:] if line.startswith("  ")}
    assert re.fullmatch(
        r"  best validation score +0\.96 +openai/gsm8k, at step 10", rows["best validation score"]
    )
    assert re.fullmatch(r"  median step time +201 s +timing_s/step", rows["median step time"])
    assert re.fullmatch(r"  training steps +10 steps", rows["training steps"].rstrip())
    assert {"figure", "last validation score", "median throughput"} <= set(rows)
    assert lines[-1] == compiled_with
    # a plan.json that holds no command (written by hand, or by another tool) records none
    plan_path = workspace / "runs" / "one" / "plan.json"
    plan = json.loads(plan_path.read_text())
    del plan["command"]
    plan_path.write_text(json.dumps(plan))
    bare = rlcat("runs", "show", "runs/one", "-f", "json")
    assert bare.code == 0 and json.loads(bare.out)["run"]["command"] == [], bare.err


def test_a_live_run_skips_its_half_written_line_with_a_note(
    rlcat: Run, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    compile_run(rlcat, "runs/live")
    path = write_metrics(workspace / "runs" / "live", training(6), monkeypatch)
    lines = len(path.read_bytes().splitlines())
    with open(path, "ab") as fh:
        fh.write(b'{"step":7,"data":{"timing_s/st')
    r = rlcat("runs", "show", "runs/live", "-f", "json")
    assert r.code == 0, r.err
    assert f"metrics.jsonl:{lines + 1} RLC1203 info: line {lines + 1} is half-written" in r.err
    data = json.loads(r.out)
    assert data["run"]["live"] is True
    assert {m["metric"]: m["value"] for m in data["metrics"]}["steps"] == 6


def test_bad_lines_are_reported_with_their_numbers_and_skipped(
    rlcat: Run, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    compile_run(rlcat, "runs/bad")
    path = write_metrics(workspace / "runs" / "bad", training(4), monkeypatch)
    good = path.read_bytes()
    bad_lines = [
        b"not json\n",
        b'{"step": "3", "data": {}}\n',
        b'{"step": 3, "data": [1, 2]}\n',
        b'{"step": 3, "data": {"timing_s/step": NaN}}\n',
        b'{"step": -1, "data": {}}\n',
        b"\xff\xfe\n",
        b"[" * 100_000 + b"\n",
    ]
    path.write_bytes(good + b"".join(bad_lines) + good)
    r = rlcat("runs", "show", "runs/bad")
    assert r.code == 0, r.err
    first = len(good.splitlines()) + 1
    for offset, why in enumerate(
        [
            "not JSON",
            'step "3" is not a step number',
            "data is not a mapping",
            "NaN is not a number",
            "step -1 is not a step number",
            "not UTF-8 text",
            "nested too deeply",
        ]
    ):
        assert f"metrics.jsonl:{first + offset} RLC1202 warning: line {first + offset}: {why}" in r.err, r.err
    assert "RLC1202" in r.err and "Traceback" not in r.err


def test_a_huge_metrics_file_is_read_in_bounded_memory(
    rlcat: Run, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    compile_run(rlcat, "runs/huge")
    path = write_metrics(workspace / "runs" / "huge", training(5000, val_every=1), monkeypatch)
    with open(path, "ab") as fh:  # one line past the size limit, and more bad lines than are shown
        fh.write(b'{"step": 1, "data": {"x": "' + b"a" * (5 * 1024 * 1024) + b'"}}\n')
        fh.write(b"junk\n" * (MAX_REPORTED + 5))
    summary = read_metrics(path)
    assert summary.train_steps == 5000
    assert all(len(t.series.points()[0]) <= SERIES_POINTS for t in summary.tracked.values())
    codes = [d.code for d in summary.diagnostics]
    assert codes.count("RLC1204") == 1 and codes.count("RLC1202") == MAX_REPORTED - 1 + 1
    # the long line and the junk lines: 26 bad lines, the first MAX_REPORTED shown one by one
    assert any(f"{26 - MAX_REPORTED} more bad lines" in d.message for d in summary.diagnostics)
    assert any(d.code == "RLC1205" and "thinned" in d.message for d in summary.diagnostics)
    r = rlcat("runs", "add", "runs/huge", "--catalog", "team")
    assert r.code == 0, r.err
    data = yaml.safe_load((workspace / "team/catalog/results/gsm8k_qwen3_8b_fsdp-rocm-huge.yaml").read_text())
    series = {s["key"]: s for s in data["series"]}
    assert series["timing_s/step"]["steps"][-1] == 5000  # the last point is always kept
    assert "every" in series["timing_s/step"]["note"]


def test_run_folders_without_a_plan_or_metrics_are_diagnosed(rlcat: Run, workspace: Path) -> None:
    (workspace / "empty").mkdir()
    r = rlcat("runs", "add", "empty", "--catalog", "team")
    assert r.code == 2 and "RLC1201" in r.err and "--run-dir" in r.err
    (workspace / "empty" / "plan.json").write_text('{"recipe": 1}')
    r = rlcat("runs", "add", "empty", "--catalog", "team")
    assert r.code == 2 and "not a plan rlcat wrote" in r.err
    # a file that is not JSON: the finding is at the line and column where the reader stopped
    (workspace / "empty" / "plan.json").write_text('{\n  "recipe": "a",\n  "platform" "cuda"\n}\n')
    r = rlcat("runs", "add", "empty", "--catalog", "team")
    assert r.code == 2 and "empty/plan.json:3:14 RLC1201 error: not a readable plan: not JSON" in r.err
    compile_run(rlcat, "runs/none")
    r = rlcat("runs", "add", "runs/none", "--catalog", "team")
    assert r.code == 2 and "RLC1209" in r.err
    (workspace / "runs/none/metrics.jsonl").write_text("")
    r = rlcat("runs", "add", "runs/none", "--catalog", "team")
    assert r.code == 2 and "RLC1209" in r.err and "Traceback" not in r.err
    assert not (workspace / "team" / "catalog").exists()


def test_an_edited_plan_is_recorded_under_what_it_holds(
    rlcat: Run, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    compile_run(rlcat, "runs/edit")
    write_metrics(workspace / "runs" / "edit", training(3), monkeypatch)
    plan_path = workspace / "runs/edit/plan.json"
    plan = json.loads(plan_path.read_text())
    plan["overrides"].append("trainer.total_epochs=99")
    plan_path.write_text(json.dumps(plan))
    r = rlcat("runs", "show", "runs/edit", "-f", "json")
    assert r.code == 0 and "RLC1208" in r.err
    assert json.loads(r.out)["fingerprint"] == plan_fingerprint(plan)


def test_hydra_overrides_that_differ_from_the_plan_are_reported(
    rlcat: Run, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    compile_run(rlcat, "runs/h")
    write_metrics(workspace / "runs" / "h", training(3), monkeypatch)
    plan = json.loads((workspace / "runs/h/plan.json").read_text())
    (workspace / "runs/h/.hydra").mkdir()
    launched = [*plan["overrides"][:-1], "trainer.total_epochs=1"]
    (workspace / "runs/h/.hydra/overrides.yaml").write_text(yaml.safe_dump(launched))
    r = rlcat("runs", "show", "runs/h", "-f", "json")
    assert r.code == 0 and "RLC1207" in r.err and "trainer.total_epochs" in r.err
    assert json.loads(r.out)["run"]["hydra"] is True


def test_runs_add_without_a_catalog_says_where_to_record(rlcat: Run, workspace: Path) -> None:
    r = rlcat("runs", "add", "anywhere")
    assert r.code == 2 and "RLC105" in r.err and "--catalog" in r.err


SITE_ENTRIES = (
    "recipes/gsm8k_qwen3_8b_fsdp.yaml",
    "catalog/models/qwen3_8b.yaml",
    "catalog/datasets/gsm8k_math.yaml",
    "catalog/platforms/rocm.yaml",
)


def test_recorded_runs_are_overlaid_on_their_recipe_page(
    rlcat: Run, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The whole loop: two runs logged by verl's FileLogger, recorded by `runs add` into a team
    catalog, and the recipe's docs page, generated for that catalog, draws both on its validation chart."""
    from rlcat.catalog import Catalog
    from rlcat.docsite.data import load_site
    from rlcat.docsite.recipes import recipe_page

    for name, base in (("a", 0.3), ("b", 0.45)):
        compile_run(rlcat, f"runs/{name}")
        write_metrics(workspace / "runs" / name, training(10, base=base), monkeypatch)
        assert rlcat("runs", "add", f"runs/{name}", "--catalog", "team", "--gpu", "MI300X").code == 0
    recorded = sorted(p.stem for p in (workspace / "team" / "catalog" / "results").glob("*.yaml"))
    assert recorded == ["gsm8k_qwen3_8b_fsdp-rocm-a", "gsm8k_qwen3_8b_fsdp-rocm-b"]

    # the team's results over the part of the built-in catalog their recipe needs (the whole one
    # would compile every built-in recipe on every platform for pages nobody reads here)
    for entry in SITE_ENTRIES:
        (workspace / "builtin" / entry).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / entry, workspace / "builtin" / entry)
    catalog = Catalog([workspace / "team", workspace / "builtin"])
    page = recipe_page(load_site(workspace / "site", catalog), "gsm8k_qwen3_8b_fsdp")
    results = page.split("## Results {#results}", 1)[1].split("\n## ", 1)[0]
    assert all(f"`{name}`" in results for name in recorded)
    svg = "{http://www.w3.org/2000/svg}"
    charts = [ET.fromstring(m) for m in re.findall(r"<svg\b.*?</svg>", results, flags=re.S)]
    val_key = "val-core/openai/gsm8k/reward/mean@1"
    (chart,) = [c for c in charts if val_key in ["".join(t.itertext()) for t in c.iter(svg + "text")]]
    labels = {"".join(t.itertext()) for t in chart.iter(svg + "text")}
    assert set(recorded) <= labels, labels  # both runs drawn, each with its legend entry
