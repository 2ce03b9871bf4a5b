"""Hostile files behind every reader (rlcat.files.open_regular, the one bounded reader): a metrics
file linked to /dev/zero or made a FIFO, a project file or a Ray token file that is a FIFO, a
`--config-name` that is a path to a planted index or to /dev/zero; and the findings around them: a
metric key with a line break, text YAML cannot show in `runs add` and `import`, an import of a model
path Hydra cannot read, an entry name longer than a name may be.

What could hang or run out of memory before the fix runs in a subprocess with a timeout and an
address-space limit, so the suite never hangs whatever the code does.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from import_helpers import MEGATRON_COMMAND

from rlcat.catalog import schemas_dir
from rlcat.diagnostics import ExitCode, RlcatError
from rlcat.importer import MAX_FILE_NAME_BYTES, Imported, write_files
from rlcat.verl.index import load_index

from conftest import Result

Run = Callable[..., Result]
Proc = subprocess.CompletedProcess[str]
TIMEOUT = 60  # seconds: a refusal takes one or two; a read that never ends is cut here
ADDRESS_SPACE = 2 * 1024**3  # a read of /dev/zero ends in MemoryError here, not in the machine's swap
DEV_ZERO = pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero on this system")


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


def bounded_process(argv: list[str], *, cwd: Path | None = None, env: dict[str, str] | None = None) -> Proc:
    """ARGV (after the Python interpreter) in a subprocess, bounded in time and memory, with no
    standard input."""
    try:
        return subprocess.run(
            [sys.executable, *argv],
            check=False,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            preexec_fn=_limited,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"{' '.join(argv)} did not end in {TIMEOUT} s: it read a file that never ends")


def rlcat_process(*args: str, cwd: Path) -> Proc:
    return bounded_process(["-m", "rlcat", *args], cwd=cwd)


def no_crash(proc: subprocess.CompletedProcess[str]) -> str:
    said = proc.stdout + proc.stderr
    assert "Traceback" not in said and "MemoryError" not in said, said
    assert proc.returncode != ExitCode.INTERNAL, said
    return said


@pytest.fixture
def run_dir(rlcat: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A run folder as `compile --run-dir` writes it (plan.json), and a team catalog to record into."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "team").mkdir()
    r = rlcat("compile", "gsm8k_qwen3_8b_fsdp", "--platform", "rocm", "--run-dir", "runs/one", "-f", "shell")
    assert r.code == 0, r.err
    return tmp_path / "runs" / "one"


def write_records(path: Path, records: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


TRAINING = [{"step": s, "data": {"timing_s/step": 2.0, "perf/throughput": 3.0}} for s in range(1, 4)]


# --- metrics files that never end ---------------------------------------------------------------


# each with the first rule that refuses it: the bounded reader (a regular file only), or the rule
# that no link leads out of the run folder (inside.link_out)
NEVER_ENDING: dict[str, tuple[Callable[[Path], None], str]] = {
    "fifo": (os.mkfifo, "RLC012 error: not a regular file"),
    "link-to-dev-zero": (
        lambda path: path.symlink_to("/dev/zero"),
        "RLC011 error: runs/one/metrics.jsonl is a link",
    ),
}


@DEV_ZERO
@pytest.mark.parametrize(("make", "refusal"), NEVER_ENDING.values(), ids=NEVER_ENDING.keys())
def test_runs_add_refuses_a_metrics_file_that_never_ends(
    run_dir: Path, make: Callable[[Path], None], refusal: str
) -> None:
    """`runs add` read a metrics file linked to /dev/zero forever and waited forever on a FIFO."""
    make(run_dir / "metrics.jsonl")
    proc = rlcat_process("runs", "add", "runs/one", "--catalog", "team", cwd=run_dir.parent.parent)
    said = no_crash(proc)
    assert proc.returncode == ExitCode.INPUT, said
    assert f"runs/one/metrics.jsonl {refusal}" in said, said
    assert not (run_dir.parent.parent / "team" / "catalog").exists()  # nothing recorded


def test_a_project_file_that_is_a_fifo_is_refused(tmp_path: Path) -> None:
    """The project file was opened without O_NONBLOCK: a FIFO swapped in for it after the search
    (which looks for regular files) hung the command."""
    fifo = tmp_path / "rlcat.toml"
    os.mkfifo(fifo)
    code = (
        "from pathlib import Path\n"
        "from rlcat.diagnostics import RlcatError\n"
        "from rlcat.project import read_project\n"
        f"try: read_project(Path({str(fifo)!r}))\n"
        "except RlcatError as e: print(e.diagnostics[0].code)"
    )
    proc = bounded_process(["-c", code])
    assert proc.stdout.strip() == "RLC012", proc.stderr


def test_a_ray_token_file_that_is_a_fifo_is_no_token(tmp_path: Path) -> None:
    """RAY_AUTH_TOKEN_PATH naming a FIFO hung `launch --target ray`; it is no token file."""
    fifo = tmp_path / "token"
    os.mkfifo(fifo)
    code = "from rlcat.launch.ray_rest import auth_token; print(repr(auth_token()))"
    env = {**os.environ, "RAY_AUTH_TOKEN_PATH": str(fifo)}
    env.pop("RAY_AUTH_TOKEN", None)
    proc = bounded_process(["-c", code], env=env)
    assert proc.returncode == 0 and proc.stdout.strip() == "None", proc.stderr


def test_a_slurm_output_file_that_is_a_fifo_prints_nothing(tmp_path: Path) -> None:
    """The job's output file (as scontrol names it) was read with read_text: a FIFO there hung
    `launch --target slurm --wait`; it prints nothing, and the job is still followed."""
    fifo = tmp_path / "slurm-1.out"
    os.mkfifo(fifo)
    code = (
        "from rlcat.launch.base import Console\n"
        "from rlcat.launch.slurm_submit import JobOutput\n"
        "printed = []\n"
        "output = JobOutput(Console(printed.append, printed.append))\n"
        f"output.path = {str(fifo)!r}\n"
        "output.print_new()\n"
        "output.end()\n"
        "print(len(printed))"
    )
    proc = bounded_process(["-c", code])
    assert proc.returncode == 0 and proc.stdout.strip() == "0", proc.stderr


# --- --config-name is a name, never a path --------------------------------------------------------

VERSION = "0.9.1"


def _script(tmp_path: Path, config_name: str) -> Path:
    script = tmp_path / "run.sh"
    script.write_text(
        f"python3 -m verl.trainer.main_ppo --config-name={config_name} trainer.no_such_key=1\n",
        encoding="utf-8",
    )
    return script


def _relative_to_index(target: Path) -> str:
    """`target` (without .json) as a path from the release's key-index folder, as a script could name it."""
    return os.path.relpath(target.with_suffix(""), schemas_dir() / "verl" / VERSION)


def test_a_config_name_that_is_a_path_to_a_planted_index_is_refused(rlcat: Run, tmp_path: Path) -> None:
    """A planted index (every key open) named by a relative path turned the key check off."""
    planted = tmp_path / "planted.json"
    planted.write_text(json.dumps({"keys": {}, "open": ["trainer"], "groups": {}}), encoding="utf-8")
    script = _script(tmp_path, _relative_to_index(planted))
    r = rlcat("lint", str(script), "--verl", VERSION, "--format", "json")
    found = json.loads(r.out)["diagnostics"]
    assert r.code == ExitCode.FINDINGS, r.out + r.err
    assert [(d["code"], d["file"], d["line"]) for d in found] == [("RLC1115", str(script), 1)], found


@DEV_ZERO
def test_a_config_name_that_is_a_path_to_dev_zero_is_refused(tmp_path: Path) -> None:
    """A config name naming a link to /dev/zero was read until MemoryError, exit 3."""
    (tmp_path / "zero.json").symlink_to("/dev/zero")
    script = _script(tmp_path, _relative_to_index(tmp_path / "zero.json"))
    proc = rlcat_process("lint", str(script), "--verl", VERSION, cwd=tmp_path)
    said = no_crash(proc)
    assert proc.returncode == ExitCode.FINDINGS, said
    assert "run.sh:1:1 RLC1115 error: --config-name" in said and "not a path" in said, said


@pytest.mark.parametrize(
    "name", ["../ppo_trainer", "/etc/passwd", "a/b", "..", "", "x" * 200, "ppo_trainer\n"]
)
def test_the_key_index_loads_only_a_name_its_manifest_lists(name: str) -> None:
    with pytest.raises(RlcatError) as refused:
        load_index(VERSION, name)
    assert [d.code for d in refused.value.diagnostics] == ["RLC1115"]


def test_a_name_the_manifest_does_not_list_has_no_index() -> None:
    """A file in the index folder that the manifest does not list (the manifest itself) is no index."""
    with pytest.raises(RlcatError) as refused:
        load_index(VERSION, "manifest")
    assert [d.code for d in refused.value.diagnostics] == ["RLC404"]


# --- metric keys, and text YAML cannot show -------------------------------------------------------


def test_a_metric_key_with_a_line_break_is_named_not_blamed_on_the_plan(rlcat: Run, run_dir: Path) -> None:
    """A validation key ending in a newline passed the key pattern (`$` matches before a final
    newline), then the result failed validation and the finding blamed plan.json."""
    val = "val-core/openai/gsm8k/reward/mean@1"
    write_records(run_dir / "metrics.jsonl", [{"step": 0, "data": {val + "\n": 0.3, val: 0.25}}, *TRAINING])
    r = rlcat("runs", "add", "runs/one", "--catalog", "team")
    assert r.code == 0, r.err
    assert "plan.json" not in r.err
    (line,) = [x for x in r.err.splitlines() if "RLC1202" in x]
    assert line.startswith("runs/one/metrics.jsonl:1 RLC1202 warning: ") and line.endswith(f"[{val}\\n]"), (
        line
    )
    recorded = yaml.safe_load(next((run_dir.parent.parent / "team").rglob("*.yaml")).read_text())
    assert {s["key"] for s in recorded["series"]} >= {val}


def test_runs_add_names_the_plan_and_key_of_text_yaml_cannot_show(rlcat: Run, run_dir: Path) -> None:
    plan = json.loads((run_dir / "plan.json").read_text())
    plan["verl_version"] = "0.9.0\x1b[31m"
    (run_dir / "plan.json").write_text(json.dumps(plan))
    write_records(run_dir / "metrics.jsonl", TRAINING)
    r = rlcat("runs", "add", "runs/one", "--catalog", "team")
    assert r.code == ExitCode.INPUT
    (line,) = [x for x in r.err.splitlines() if "RLC405" in x]
    assert line.startswith("runs/one/plan.json RLC405 error: ") and line.endswith("[verl_version]"), line
    assert "--format" not in r.err and "rlcat runs add" in r.err
    assert not (run_dir.parent.parent / "team" / "catalog").exists()


def test_import_names_the_source_line_of_text_yaml_cannot_show(rlcat: Run, tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_text("python3 -m verl.trainer.main_ppo \"trainer.experiment_name='a\x1b[31mb'\"\n")
    r = rlcat("import", str(script), "-o", str(tmp_path / "out"))
    assert r.code == ExitCode.INPUT, r.err
    (line,) = [x for x in r.err.splitlines() if "RLC405" in x]
    assert line.startswith(f"{script}:1:34 RLC405 error: "), line
    assert "--format" not in r.err and f"line 1 of {script}" in r.err
    assert not (tmp_path / "out").exists()  # refused before anything is written


# --- import: a model path Hydra cannot read, entry names -------------------------------------------


def test_an_unreadable_model_path_is_unexplained_not_the_first_model(rlcat: Run, tmp_path: Path) -> None:
    """The recipe's model was silently the first built-in one, with `0 unexplained` and exit 0."""
    r = rlcat(
        "import", "-o", str(tmp_path), "--", *MEGATRON_COMMAND, "actor_rollout_ref.model.path=~/models/x,y"
    )
    assert r.code == ExitCode.FINDINGS, r.out + r.err
    assert "RLC1304" in r.err and "actor_rollout_ref.model.path" in r.err
    (line,) = [x for x in r.out.splitlines() if "actor_rollout_ref.model.path" in x]
    assert "source ~/models/x,y (not readable)" in line and line.endswith("(UNEXPLAINED)"), line
    assert "1 unexplained" in r.out


def test_the_same_run_with_a_readable_model_path_imports_cleanly(rlcat: Run, tmp_path: Path) -> None:
    r = rlcat(
        "import", "-o", str(tmp_path), "--", *MEGATRON_COMMAND, "actor_rollout_ref.model.path=Qwen/Qwen3-8B"
    )
    assert r.code == 0, r.out + r.err
    assert "0 unexplained" in r.out


def test_an_entry_named_after_a_long_model_folder_is_written_whole(rlcat: Run, tmp_path: Path) -> None:
    """A 300-character model folder name made a file name too long: the recipe was written, the
    entry failed (a half-written import)."""
    out = tmp_path / "out"
    r = rlcat(
        "import", "-o", str(out), "--", *MEGATRON_COMMAND, "actor_rollout_ref.model.path=/m/" + "q" * 300
    )
    assert "RLC106" not in r.err and "Traceback" not in r.err, r.err
    (model,) = (out / "catalog" / "models").glob("*.yaml")
    assert len(model.stem) <= 100 and yaml.safe_load(model.read_text())["name"] == model.stem
    assert yaml.safe_load((out / "recipes" / "imported.yaml").read_text())["model"] == model.stem


def test_write_files_refuses_a_long_file_name_before_writing_anything(tmp_path: Path) -> None:
    long_name = Path("catalog") / "models" / ("m" * MAX_FILE_NAME_BYTES + ".yaml")
    files = {Path("recipes") / "a.yaml": "name: a\n", long_name: "name: m\n"}
    imported = Imported(None, None, "a", files=files)  # type: ignore[arg-type]
    with pytest.raises(RlcatError) as refused:
        write_files(imported, tmp_path, force=False)
    assert [d.code for d in refused.value.diagnostics] == ["RLC106"]
    assert list(tmp_path.iterdir()) == []
