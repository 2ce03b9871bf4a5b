"""The static reader of launch scripts (rlcat.scripts): what it finds equals what execution gave.

tests/data/upstream_scripts/ holds 68 upstream launch scripts beside what each delivered to verl
when executed with its defaults (see the README there). Each is read statically with the same
placeholders the recording used ($HOME, $PWD, `date` pinned, the variables it requires) and must
give exactly the same entrypoint, launcher, Hydra flags, override list and exported env; the 36
with a `torch_npu` probe are read again as if the probe said "npu", against the recorded variant.
The rest are the shell features, one by one, and bad input.
"""

from __future__ import annotations

import datetime
import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rlcat.diagnostics import Severity
from rlcat.scripts import Launch, ScriptReading, read_script, read_text

DATA = Path(__file__).parent.parent / "data" / "upstream_scripts"
RECORDS = sorted(DATA.glob("*.json"))
PINNED = datetime.datetime(2026, 1, 1, 0, 0, 0)  # what `date` said while the scripts ran
NPU_PROBE = "import torch_npu"  # $(python3 -c 'import torch_npu' … && echo npu || echo gpu)
GEO3K = "verl__experimental__fully_async_policy__shell__geo3k_qwen25vl_7b_megatron_4_4"


def recorded(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((DATA / f"{name}.json").read_text())
    return data


def outputs_as_recorded(device: str | None = "gpu") -> Any:
    """What the recorder's substitutions printed: `date` pinned, and the torch_npu probe (None:
    not known)."""

    def outputs(command: str) -> str | None:
        match = re.fullmatch(r"date \+(\S+)", command)
        if match:
            return PINNED.strftime(match.group(1))
        if NPU_PROBE in command:
            return device
        return None

    return outputs


def read_as_recorded(name: str, device: str = "gpu") -> ScriptReading:
    record = recorded(name)
    env = {"HOME": "$HOME", "PWD": "$PWD", **record["required_env_placeholders"]}
    return read_script(DATA / f"{name}.sh", env=env, outputs=outputs_as_recorded(device), name=f"{name}.sh")


def only_launch(reading: ScriptReading) -> Launch:
    assert len(reading.launches) == 1, [d.headline() for d in reading.diagnostics]
    return reading.launches[0]


def read(source: str, **options: Any) -> ScriptReading:
    return read_text(source, file="run.sh", **options)


def launch_of(source: str, **options: Any) -> Launch:
    return only_launch(read(source, **options))


def texts(launch: Launch) -> list[str]:
    return [o.text for o in launch.overrides]


def codes(reading: ScriptReading) -> list[str]:
    return [d.code for d in reading.diagnostics]


# --- the 68 upstream scripts ---------------------------------------------------------------------


def test_all_reference_scripts_are_here() -> None:
    assert len(RECORDS) == 68
    assert all(r.with_suffix(".sh").is_file() for r in RECORDS)


@pytest.mark.parametrize("name", [r.stem for r in RECORDS])
def test_reads_what_execution_delivered(name: str) -> None:
    record = recorded(name)
    reading = read_as_recorded(name)
    if record["extraction"] == "no_launch":
        assert reading.launches_nothing
        assert "RLC1104" in codes(reading)
        return
    launch = only_launch(reading)
    assert launch.entrypoint == record["entrypoint"]
    assert list(launch.launcher) == record["launcher"]
    raw = record["config_cli_raw"]
    assert launch.flag("--config-path", "-cp") == raw.get("config_path")
    assert launch.flag("--config-name", "-cn") == raw.get("config_name")
    assert [list(f) for f in launch.hydra_flags] == record["hydra_flags"]
    assert texts(launch) == record["overrides"]
    assert dict(launch.env) == record["env"]
    assert launch.assumptions == ()  # with the recorded outputs nothing is left undecided
    assert all(o.known for o in launch.overrides)
    assert not [d for d in reading.diagnostics if d.severity == Severity.ERROR and d.code != "RLC1101"]


NPU_VARIANTS = [
    r.stem for r in RECORDS if "DEVICE=npu (torch_npu importable)" in recorded(r.stem).get("variants", {})
]


@pytest.mark.parametrize("name", NPU_VARIANTS)
def test_reads_the_npu_variant_when_the_probe_says_npu(name: str) -> None:
    variant = recorded(name)["variants"]["DEVICE=npu (torch_npu importable)"]
    launch = only_launch(read_as_recorded(name, device="npu"))
    assert (launch.entrypoint, list(launch.launcher)) == (variant["entrypoint"], variant["launcher"])
    assert texts(launch) == variant["overrides"]
    assert dict(launch.env) == variant["env"]


def test_npu_variants_cover_the_probing_scripts() -> None:
    assert len(NPU_VARIANTS) == 36


PROBING = [name for name in NPU_VARIANTS if NPU_PROBE in (DATA / f"{name}.sh").read_text()]


@pytest.mark.parametrize("name", PROBING)
def test_an_unknown_probe_reads_both_devices(name: str) -> None:
    """Without the probe's output the device is undecidable: both branches are read, and the
    recorded gpu and npu launches are both found, each saying what it assumed."""
    record = recorded(name)
    env = {"HOME": "$HOME", "PWD": "$PWD", **record["required_env_placeholders"]}
    reading = read_script(DATA / f"{name}.sh", env=env, outputs=outputs_as_recorded(None), name="x")
    found = {tuple(texts(launch)): launch for launch in reading.launches}
    npu = record["variants"]["DEVICE=npu (torch_npu importable)"]["overrides"]
    assert tuple(record["overrides"]) in found
    assert tuple(npu) in found
    assert "RLC1103" in codes(reading)
    if npu != record["overrides"]:
        assert all(launch.assumptions for launch in reading.launches)


def test_geo3k_blank_line_cuts_the_command() -> None:
    record = recorded(GEO3K)
    reading = read_as_recorded(GEO3K)
    launch = only_launch(reading)
    fixed = record["overrides_if_continuation_fixed"]
    assert (len(launch.overrides), len(fixed)) == (34, 69)
    assert texts(launch) == fixed[:34]
    cut = launch.cut
    assert cut is not None
    assert (cut.line, cut.reason, cut.resumes) == (73, "blank line", 75)
    assert (DATA / f"{GEO3K}.sh").read_text().splitlines()[72][cut.col - 1 :] == "\\"
    assert [o.text for o in cut.lost] == fixed[34:]
    assert cut.lost[0].line == 75
    finding = next(d for d in reading.diagnostics if d.code == "RLC1101")
    assert (finding.line, finding.col, finding.severity) == (73, cut.col, Severity.ERROR)
    assert "35 overrides from line 75" in finding.message


@pytest.mark.parametrize("name", [r.stem for r in RECORDS])
def test_every_override_points_where_the_script_wrote_it(name: str) -> None:
    """The line and column of an override start the word that wrote it: its key (perhaps built
    from variables, `+${ACTOR_TURBO}.x=…`), or the expansion that gave it (`"$@"` inside a
    function, `$ACTOR_CONFIG` built from other variables)."""
    lines = (DATA / f"{name}.sh").read_text().splitlines()
    for launch in read_as_recorded(name).launches:
        for override in launch.overrides:
            line = lines[override.line - 1]
            written = line[override.col - 1 :].lstrip("\"'+~")
            assert override.col == 1 or line[override.col - 2] in " \t(", (override, line)
            assert written.startswith((override.text.lstrip("+~")[:1], "$")), (override, written)


def test_most_overrides_point_at_their_key() -> None:
    at_key = total = 0
    for record in RECORDS:
        lines = record.with_suffix(".sh").read_text().splitlines()
        for launch in read_as_recorded(record.stem).launches:
            for override in launch.overrides:
                total += 1
                written = lines[override.line - 1][override.col - 1 :].lstrip("\"'")
                at_key += written.startswith(override.text.split("=", 1)[0])
    assert total > 4000
    assert at_key / total > 0.95


def test_knobs_are_the_defaults_the_script_reads() -> None:
    reading = read_as_recorded("examples__grpo_trainer__run_qwen3_8b_fsdp")
    knobs = {k.name: k.default for k in reading.knobs}
    assert knobs["INFER_BACKEND"] == "vllm"
    assert knobs["MODEL_PATH"] == "Qwen/Qwen3-8B"
    assert knobs["EXPERIMENT_NAME"] == "qwen3_8b_grpo_${INFER_BACKEND}_fsdp_$(date +%Y%m%d_%H%M)"


# --- shell features ------------------------------------------------------------------------------

MAIN = "python3 -m verl.trainer.main_ppo"


def test_assignments_exports_and_defaults() -> None:
    launch = launch_of(
        "set -xeuo pipefail\n"
        "export A=1 B\nB=2\nC=3\n"
        "X=${X:-fallback} Y=${Y:=assigned}\n"
        'Z="${UNSET:-}" W=${W-}\n'
        f'{MAIN} x="$X" y=${{Y}} z=$Z{{}} w=${{W:+set}} c=$C\n'
    )
    assert texts(launch) == ["x=fallback", "y=assigned", "z={}", "w=", "c=3"]
    assert dict(launch.env) == {"A": "1", "B": "2"}


def test_caller_env_sets_what_the_caller_would() -> None:
    script = f"MODEL=${{MODEL_PATH:-Qwen/Qwen3-8B}}\n{MAIN} m=$MODEL h=$HOME/x\n"
    assert texts(launch_of(script)) == ["m=Qwen/Qwen3-8B", "h=$HOME/x"]
    assert texts(launch_of(script, env={"MODEL_PATH": "/m", "HOME": "/home/u"})) == ["m=/m", "h=/home/u/x"]
    launch = launch_of(script)
    assert [o.known for o in launch.overrides] == [True, False]  # $HOME: only the caller knows


def test_arithmetic() -> None:
    launch = launch_of(
        "P=1024\nR=$((1024 * 2))\nN=8\n"
        f"{MAIN} a=$((P + R)) b=$(((P + R) * N)) c=$(( 7 / 2 )) d=$((2**10)) e=$((N > 4 ? 1 : 0)) "
        "f=${T:-$((P * 3))} g=$((0x10 + 010))\n"
    )
    assert texts(launch) == ["a=3072", "b=24576", "c=3", "d=1024", "e=1", "f=3072", "g=24"]


def test_arrays_quoting_and_concatenation() -> None:
    launch = launch_of(
        "DATA=(\n  data.a=1\n  'data.b=two words'\n  data.c=\"$HOME\"/x\n)\n"
        "DATA+=(data.d=4)\nEMPTY=()\n"
        f'{MAIN} "${{DATA[@]}}" "${{EMPTY[@]}}" k="a b"\'c\'$\'\\t\' "${{DATA[0]}}" n=${{#DATA[@]}}\n'
    )
    assert texts(launch) == [
        "data.a=1",
        "data.b=two words",
        "data.c=$HOME/x",
        "data.d=4",
        "k=a bc\t",
        "data.a=1",
        "n=4",
    ]
    assert [(o.line, o.col) for o in launch.overrides[:4]] == [(2, 3), (3, 3), (4, 3), (6, 8)]


def test_line_continuations_and_noise() -> None:
    launch = launch_of(
        "#!/bin/bash\nset -x\nulimit -n 65535\necho start\n"
        f"{MAIN} \\\n    a=1 \\\n    b=2\\\n3 \\\n    c=4\n"
        "echo done\n"
    )
    assert texts(launch) == ["a=1", "b=23", "c=4"]
    assert launch.cut is None


def test_unquoted_variables_split_into_words_where_written() -> None:
    launch = launch_of(f'COMMON="a.x=1\n  a.y=2"\n{MAIN} $COMMON "$COMMON"\n')
    assert texts(launch) == ["a.x=1", "a.y=2", "a.x=1\n  a.y=2"]
    assert [(o.line, o.col) for o in launch.overrides[:2]] == [(1, 9), (2, 3)]


def test_brace_expansion_and_tilde() -> None:
    launch = launch_of(f"{MAIN} k={{a:1,b:2}} s=x{{1..3}} q='{{c,d}}' p=~/data\n", env={"HOME": "/h"})
    # `p=~/…` is an assignment-shaped word: bash expands its tilde; `a.b=~/…` is not
    assert texts(launch) == ["k=a:1", "k=b:2", "s=x1", "s=x2", "s=x3", "q={c,d}", "p=/h/data"]
    assert texts(launch_of(f"{MAIN} a.b=~/data\n", env={"HOME": "/h"})) == ["a.b=~/data"]
    assert texts(launch_of(f"D=~/data\n{MAIN} d=$D\n", env={"HOME": "/h"})) == ["d=/h/data"]


def test_parameter_operators() -> None:
    launch = launch_of(
        "P=/models/Qwen/Qwen3-8B.tar.gz\n"
        f"{MAIN} a=${{P##*/}} b=${{P%%.*}} c=${{P#/models/}} d=${{P%.gz}} e=${{P/Qwen/qwen}} "
        "f=${P//Qwen/q} g=${P:8:4} h=${P: -2} i=${#P} j=${P^^} \n"
    )
    assert texts(launch) == [
        "a=Qwen3-8B.tar.gz",
        "b=/models/Qwen/Qwen3-8B",
        "c=Qwen/Qwen3-8B.tar.gz",
        "d=/models/Qwen/Qwen3-8B.tar",
        "e=/models/qwen/Qwen3-8B.tar.gz",
        "f=/models/q/q3-8B.tar.gz",
        "g=Qwen",
        "h=gz",
        "i=28",
        "j=/MODELS/QWEN/QWEN3-8B.TAR.GZ",
    ]


def test_if_and_case_over_known_values() -> None:
    script = (
        'ENGINE=${ENGINE:-vllm}\nif [ "$ENGINE" = vllm ]; then TP=2; elif [[ $ENGINE == sg* ]]; then TP=4; '
        "else TP=1; fi\n"
        'case "$ENGINE" in\n  vllm) MEM=0.6 ;;\n  sglang|trtllm) MEM=0.8 ;;\n  *) exit 1 ;;\nesac\n'
        f"{MAIN} tp=$TP mem=$MEM\n"
    )
    assert texts(launch_of(script)) == ["tp=2", "mem=0.6"]
    assert texts(launch_of(script, env={"ENGINE": "sglang"})) == ["tp=4", "mem=0.8"]
    assert read(script, env={"ENGINE": "other"}).launches_nothing  # `exit 1` first


def test_undecidable_conditions_report_both_branches() -> None:
    reading = read(
        f"if [ -f /etc/npu ]; then DEVICE=npu; else DEVICE=gpu; fi\n{MAIN} trainer.device=$DEVICE\n"
    )
    by_value = {texts(launch)[0]: launch for launch in reading.launches}
    assert set(by_value) == {"trainer.device=npu", "trainer.device=gpu"}
    assumed = by_value["trainer.device=npu"].assumptions
    assert [(a.line, a.condition, a.holds) for a in assumed] == [(1, "[ -f /etc/npu ]", True)]
    assert "RLC1103" in codes(reading)


def test_a_case_over_an_unknown_value_fixes_the_value_on_each_branch() -> None:
    reading = read(
        "DEVICE=$(detect_device)\n"
        'case "$DEVICE" in\n  gpu|npu) ;;\n  *) exit 1 ;;\nesac\n'
        'if [ "$DEVICE" = npu ]; then TP=4; else TP=2; fi\n'
        f"{MAIN} d=$DEVICE tp=$TP\n"
    )
    assert sorted(texts(launch) for launch in reading.launches) == [["d=gpu", "tp=2"], ["d=npu", "tp=4"]]


def test_numeric_tests_read_as_bash_does() -> None:
    """`[` takes integers as written (010 is ten, 0x10 and "x y" fail the whole test, status 2, `!`
    or not); `[[` takes arithmetic, where an expression bash rejects makes the comparison false."""
    reading = read(
        'S="x y"\nZ=010\n'
        '[ "$Z" -eq 10 ] && a=1 || a=2\n[ ! "$S" -gt 1 ] && b=1 || b=2\n[ +4 -ge " 4" ] && c=1 || c=2\n'
        "[[ $Z -eq 8 ]] && d=1 || d=2\n[[ ! $S -gt 1 ]] && e=1 || e=2\ntest 0x10 -eq 16 && f=1 || f=2\n"
        '[ ! "$S" = "x y" ] && g=1 || g=2\n'
        f"{MAIN} t=$a$b$c$d$e$f$g\n"
    )
    assert texts(only_launch(reading)) == ["t=1211122"]
    assert [(d.code, d.line) for d in reading.diagnostics if d.code != "RLC1104"] == [
        ("RLC1106", 4),
        ("RLC1106", 7),
        ("RLC1106", 8),
    ]
    assert "integer expression expected" in reading.diagnostics[0].message


def test_logical_tests_group_as_bash_does() -> None:
    """Comparisons bind tighter than `!`, `!` than `-a`/`&&`, and those than `-o`/`||`; `[[` stops at
    the first operand that decides, `[` reads (and rejects) them all."""
    reading = read(
        'S="x y"\nT=\n'
        "[[ $S = x && $S = y ]] && a=1 || a=2\n"
        '[ "$S" = 1 -o "$S" = "x y" ] && b=1 || b=2\n'
        '[ "$S" = "x y" -a ! -z "$T" ] && c=1 || c=2\n'
        "[[ -z $T || $S -gt 1 ]] && d=1 || d=2\n"
        '[ 3 -gt 1 -o "$S" -gt 1 ] && e=1 || e=2\n'
        f"{MAIN} t=$a$b$c$d$e\n"
    )
    assert texts(only_launch(reading)) == ["t=21212"]
    assert [(d.code, d.line) for d in reading.diagnostics if d.code != "RLC1104"] == [("RLC1106", 7)]


def test_a_condition_every_path_agrees_on_is_no_assumption() -> None:
    launch = launch_of(f"if command -v nvidia-smi; then echo gpu; fi\n{MAIN} a=1\n")
    assert launch.assumptions == ()


def test_command_substitutions_are_unknown_and_never_run() -> None:
    reading = read(f"STAMP=$(date +%Y%m%d)\n{MAIN} trainer.experiment_name=run_$STAMP h=`hostname`\n")
    launch = only_launch(reading)
    assert texts(launch) == ["trainer.experiment_name=run_$(date +%Y%m%d)", "h=`hostname`"]
    assert [o.known for o in launch.overrides] == [False, False]
    assert [d.line for d in reading.diagnostics if d.code == "RLC1102"] == [2, 2]
    assert launch.unknown == ("$(date +%Y%m%d)", "`hostname`")
    said = launch_of(f"{MAIN} t=$(date +%Y)\n", outputs={"date +%Y": "2030"}.get)
    assert texts(said) == ["t=2030"]


def test_a_partly_unknown_variable_splits_at_its_known_blanks() -> None:
    reading = read(f'ARGS="a.b=1 $(date +%Y) c.d=2"\n{MAIN} $ARGS e.f="x $(hostname)"\n')
    launch = only_launch(reading)
    # the substitution's own blank does not split; a quoted unknown value is not split at all
    assert texts(launch) == ["a.b=1", "$(date +%Y)", "c.d=2", "e.f=x $(hostname)"]
    assert [o.known for o in launch.overrides] == [True, False, True, False]
    assert [(o.line, o.col) for o in launch.overrides[:3]] == [(1, 7), (1, 13), (1, 25)]
    (split,) = [d for d in reading.diagnostics if d.code == "RLC1102" and "split" in d.message]
    assert (split.line, split.col) == (2, len(MAIN) + 2)
    assert "'$(date +%Y)'" in split.message
    # a variable of the caller's environment, as upstream's veomni scripts use it in $ACTOR_CONFIG
    config = launch_of(f'CONFIG="a.b=1 c.d=$HOME/x"\n{MAIN} $CONFIG\n')
    assert [(o.text, o.known) for o in config.overrides] == [("a.b=1", True), ("c.d=$HOME/x", False)]


def test_nothing_named_is_ever_run(tmp_path: Path) -> None:
    """A `$(touch FILE)`, a backtick, `eval`, `bash -c`, a pipeline and a plain command: the
    reader starts none of them."""
    made = [tmp_path / name for name in ("dollar", "backtick", "eval", "bash_c", "plain", "pipe")]
    script = (
        f"A=$(touch {made[0]})\n"
        f"B=`touch {made[1]}`\n"
        f"eval 'touch {made[2]}'\n"
        f"bash -c 'touch {made[3]}'\n"
        f"touch {made[4]}\n"
        f"echo x | touch {made[5]}\n"
        f"{MAIN} a=$A b=$B c=$(touch {made[0]})\n"
    )
    path = tmp_path / "run.sh"
    path.write_text(script)
    reading = read_script(path)
    assert texts(only_launch(reading)) == [
        f"a=$(touch {made[0]})",
        f"b=`touch {made[1]}`",
        f"c=$(touch {made[0]})",
    ]
    assert not [p for p in made if p.exists()]


def test_launchers_and_wrappers() -> None:
    reading = read(
        "ray job submit --address http://h:8265 --runtime-env=r.yaml -- "
        "python3 -m verl.trainer.main_ppo a=1\n"
        "srun -N 2 --gpus 8 torchrun --nproc_per_node=8 --nnodes 2 -m verl.trainer.fsdp_sft_trainer b=2\n"
        "env -u FOO BAR=1 uv run --extra vllm python verl/trainer/main_ppo.py c=3\n"
        "nohup python3 -X faulthandler -u -m recipe.dapo.main_dapo d=4 2>&1 |& tee log.txt &\n"
        'bash -c "python -m verl.trainer.main_ppo e=5"\n'
        "LAUNCH=(uv run --frozen python3)\n"
        'RAY_DEDUP_LOGS=0 "${LAUNCH[@]}" -m verl.trainer.main_ppo f=6\n'
        "python -m torch.distributed.run --nproc_per_node 8 -m verl.trainer.fsdp_sft_trainer g=7\n"
        "python -c 'import torch_npu'\npython get_model.py\necho python -m verl.trainer.main_ppo h=8\n"
    )
    found = [
        (launch.launcher, launch.entrypoint, launch.entry_kind, texts(launch)) for launch in reading.launches
    ]
    assert found == [
        (
            ("ray", "job", "submit", "--address", "http://h:8265", "--runtime-env=r.yaml", "--", "python3"),
            "verl.trainer.main_ppo",
            "module",
            ["a=1"],
        ),
        (
            ("srun", "-N", "2", "--gpus", "8", "torchrun", "--nproc_per_node=8", "--nnodes", "2", "-m"),
            "verl.trainer.fsdp_sft_trainer",
            "module",
            ["b=2"],
        ),
        (
            ("env", "-u", "FOO", "BAR=1", "uv", "run", "--extra", "vllm", "python"),
            "verl/trainer/main_ppo.py",
            "script",
            ["c=3"],
        ),
        (("nohup", "python3", "-X", "faulthandler", "-u"), "recipe.dapo.main_dapo", "module", ["d=4"]),
        (("python",), "verl.trainer.main_ppo", "module", ["e=5"]),
        (("uv", "run", "--frozen", "python3"), "verl.trainer.main_ppo", "module", ["f=6"]),
        (
            ("python", "-m", "torch.distributed.run", "--nproc_per_node", "8", "-m"),
            "verl.trainer.fsdp_sft_trainer",
            "module",
            ["g=7"],
        ),
    ]
    assert dict(reading.launches[2].env) == {"BAR": "1"}
    assert reading.launches[2].env_unset == ("FOO",)
    assert dict(reading.launches[5].env) == {"RAY_DEDUP_LOGS": "0"}


def test_hydra_flags_are_not_overrides() -> None:
    launch = launch_of(
        f"{MAIN} --config-path=config --config-name 'ppo_megatron_trainer.yaml' "
        "-m a=1 --cfg job +b.c=2 ~d.e\n"
    )
    assert launch.hydra_flags == (
        ("--config-path", "config"),
        ("--config-name", "ppo_megatron_trainer.yaml"),
        ("-m", None),
        ("--cfg", "job"),
    )
    assert (launch.config_path, launch.config_name) == ("config", "ppo_megatron_trainer")
    assert texts(launch) == ["a=1", "+b.c=2", "~d.e"]
    assert [(o.prefix, o.key, o.value_text) for o in launch.overrides] == [
        ("", "a", "1"),
        ("+", "b.c", "2"),
        ("~", "d.e", None),
    ]
    assert launch.overrides[1].value() == 2


def test_script_arguments_functions_and_loops() -> None:
    reading = read(
        'run() {\n  local engine=$1; shift\n  python -m verl.trainer.main_ppo rollout.name=$engine "$@"\n}\n'
        "run vllm a=1 'b=2 2'\n"
        "for n in 4 8; do python -m verl.trainer.main_ppo trainer.n_gpus_per_node=$n; done\n"
        f'{MAIN} "$@" x=${{1:-none}}\n',
        args=["first=1", "second=2"],
    )
    assert [texts(launch) for launch in reading.launches] == [
        ["rollout.name=vllm", "a=1", "b=2 2"],
        ["trainer.n_gpus_per_node=4"],
        ["trainer.n_gpus_per_node=8"],
        ["first=1", "second=2", "x=first=1"],
    ]
    assert [(o.line, o.col) for o in reading.launches[0].overrides[1:]] == [(5, 10), (5, 14)]


def test_cut_by_a_comment_and_by_trailing_whitespace() -> None:
    by_comment = launch_of(f"{MAIN} \\\n  a.b=1 \\\n  # batch sizes\n  c.d=2 \\\n  e.f=3\n")
    assert texts(by_comment) == ["a.b=1"]
    assert by_comment.cut is not None
    assert (by_comment.cut.reason, by_comment.cut.line, by_comment.cut.resumes) == ("comment", 2, 4)
    assert [(o.text, o.line) for o in by_comment.cut.lost] == [("c.d=2", 4), ("e.f=3", 5)]
    blank = launch_of(f"{MAIN} \\\n  a.b=1 \\ \n  c.d=2\n")
    assert texts(blank) == ["a.b=1", " "]  # bash passes the escaped blank as a word of its own
    assert blank.cut is not None
    assert (blank.cut.reason, [o.text for o in blank.cut.lost]) == ("trailing whitespace", ["c.d=2"])
    assert (blank.cut.line, blank.cut.col) == (2, 9)  # the `\` before the blank


def test_a_continuation_into_an_unrelated_command_loses_nothing() -> None:
    reading = read(f"{MAIN} a=1 \\\n\necho done\n")
    launch = only_launch(reading)
    assert launch.cut is not None
    assert launch.cut.lost == ()
    assert next(d for d in reading.diagnostics if d.code == "RLC1101").severity == Severity.WARNING


def test_a_script_that_launches_nothing_says_so() -> None:
    reading = read("echo 'moved to another repository'\nexit 1\n")
    assert reading.launches_nothing
    assert [(d.code, d.line) for d in reading.diagnostics] == [("RLC1104", 1)]


def test_set_u_with_a_missing_variable() -> None:
    reading = read(f"set -u\n{MAIN} data.path=$DATA_ROOT/x\n")
    assert texts(only_launch(reading)) == ["data.path=$DATA_ROOT/x"]
    finding = next(d for d in reading.diagnostics if d.code == "RLC1105")
    assert (finding.line, finding.col) == (2, 44)  # the `$` of $DATA_ROOT


def test_set_u_with_a_missing_variable_in_arithmetic() -> None:
    """In `$((…))` a variable's value names another variable; under `set -u` an unset one is where
    bash stops ("npu: unbound variable"), as with `$NAME`; without it, it is 0."""
    script = f"N=npu\n{MAIN} m=$((N * 2)) k=$((1 + 2))\n"
    assert texts(launch_of(script)) == ["m=0", "k=3"]
    reading = read("set -u\n" + script)
    assert texts(only_launch(reading)) == ["m=$((N * 2))", "k=3"]
    finding = next(d for d in reading.diagnostics if d.code == "RLC1105")
    assert (finding.line, finding.col) == (3, len(MAIN) + 4)
    assert finding.message.startswith("npu is not set")


def test_source_is_reported_not_read() -> None:
    reading = read(f"source /opt/env.sh\n. ./more.sh\n{MAIN} a=1\n")
    assert [d.line for d in reading.diagnostics if d.code == "RLC1106"] == [1, 2]


# --- bad input -----------------------------------------------------------------------------------


def test_unparsable_bash() -> None:
    reading = read(f'{MAIN} a=1\nif [ "$X" = 1 ]; then\n  echo "unterminated\n')
    problems = [d for d in reading.diagnostics if d.code == "RLC050"]
    assert problems
    assert all(d.file == "run.sh" and d.line is not None for d in problems)


def test_a_binary_file(tmp_path: Path) -> None:
    path = tmp_path / "model.bin"
    path.write_bytes(b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)))
    reading = read_script(path, name="model.bin")
    assert [(d.code, d.file, d.line) for d in reading.diagnostics] == [("RLC006", "model.bin", 1)]
    latin = tmp_path / "latin.sh"
    latin.write_bytes(b"echo ok\necho caf\xe9\n")
    assert [(d.code, d.line) for d in read_script(latin).diagnostics] == [("RLC006", 2)]


def test_a_10_mb_script_is_not_read(tmp_path: Path) -> None:
    path = tmp_path / "huge.sh"
    path.write_bytes(b"echo padding\n" * (10 * 1024 * 1024 // 13))
    reading = read_script(path, name="huge.sh")
    assert [(d.code, d.file, d.line) for d in reading.diagnostics] == [("RLC007", "huge.sh", 1)]


def test_missing_and_special_files(tmp_path: Path) -> None:
    assert [d.code for d in read_script(tmp_path / "nope.sh").diagnostics] == ["RLC001"]
    assert [d.code for d in read_script(tmp_path).diagnostics] == ["RLC001"]  # a folder, not a file


def test_deeply_nested_substitutions() -> None:
    depth = 2000
    reading = read(f"{MAIN} a=" + "$(echo " * depth + "x" + ")" * depth + "\n")
    assert [d.code for d in reading.diagnostics] == ["RLC007"]
    assert reading.diagnostics[0].line == 1


def test_nesting_the_reader_can_walk_is_read() -> None:
    launch = launch_of(f"{MAIN} a=" + "$(echo " * 20 + "x" + ")" * 20 + "\n")
    assert not launch.overrides[0].known


def test_exponential_strings_and_paths_are_bounded() -> None:
    doubling = "X=ab\n" + 'X="$X$X"\n' * 40 + f"{MAIN} a=1\n"
    assert texts(launch_of(doubling)) == ["a=1"]
    branches = "".join(f"if [ -f /f{i} ]; then V{i}=1; fi\n" for i in range(12))
    reading = read(branches + f"{MAIN} a=1\n")
    assert [texts(launch) for launch in reading.launches] == [["a=1"]]
    assert "RLC1106" in codes(reading)  # past 64 paths the rest are not read, and the reader says so
    loop = read(f"while true; do X=1; done\n{MAIN} a=1\n")
    assert "RLC1106" in codes(loop)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("$(){}[]\"'`\\ \n=;|&<>#~*?!-+:.,@%^aAz09\t")), max_size=200))
def test_any_text_reads_without_an_exception(source: str) -> None:
    reading = read(source)
    # the alphabet cannot spell an entry point (no `python`, `verl`, ...): nothing is launched, the
    # reader says why (RLC1104 or worse), on lines of the source, and reads it again the same way
    assert reading.launches == ()
    lines = source.count("\n") + 1
    assert reading.diagnostics and all(1 <= d.line <= lines for d in reading.diagnostics if d.line)
    assert read(source) == reading


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300))
def test_any_bytes_read_without_an_exception(tmp_path_factory: Any, data: bytes) -> None:
    path = tmp_path_factory.mktemp("bytes") / "x.sh"
    path.write_bytes(data)
    read_script(path)
