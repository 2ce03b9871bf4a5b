"""Bash is the oracle of the static script reader: generated scripts, run by real bash with
`python3` replaced by a recorder, and read by rlcat; both must give the same launch.

The scripts are built from the constructs launch scripts use (assignments in every quoting, arrays,
defaults, exports, comments, `set -x`, here-documents, continuations, a comment or a blank line that
cuts a command, a `\\` at the end of the file). Their values are all knowable without running
anything, so the reader must know every one of them: the same argv, the same exported env, never an
"only known when it runs" where bash had a value, and never a refusal (RLC050) of what bash runs.
150 scripts per run (about 10 s); RLCAT_BASH_EXAMPLES=N asks for more (600 passed when written).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rlcat.scripts import read_script

pytestmark = pytest.mark.slow  # a bash process per example

NAMES = ("V0", "V1", "V2")
# no glob characters: bash would match them against the files of the folder the script runs in
VALUE = st.text(alphabet="abcXYZ019_./:-=,@%+ ", max_size=10)
PLAIN = st.text(alphabet="abcXYZ019_./:-=,@%+", min_size=1, max_size=10)
HOME = "/h"


def _single(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def _double(text: str) -> str:
    return '"' + "".join("\\" + c if c in '"\\$`' else c for c in text) + '"'


@st.composite
def quoted(draw: Any) -> str:
    """A value written the ways scripts write one."""
    text = draw(VALUE)
    form = draw(st.sampled_from(["single", "double", "plain", "ansi", "mixed"]))
    if form == "single":
        return _single(text)
    if form == "double":
        return _double(text)
    if form == "ansi":
        return "$'" + text.replace("\\", "\\\\").replace("'", "\\'") + "\\tz'"
    if form == "mixed":
        return _single(text) + _double(draw(VALUE)) + draw(PLAIN)
    return draw(PLAIN)


@st.composite
def statement(draw: Any) -> str:
    """One line (or block) before the launch."""
    name = draw(st.sampled_from(NAMES))
    kind = draw(
        st.sampled_from(
            [
                "assign",
                "export",
                "default",
                "array",
                "append",
                "comment",
                "blank",
                "trace",
                "heredoc",
                "if",
                "positional",
                "function",
            ]
        )
    )
    if kind == "assign":
        return f"{name}={draw(quoted())}"
    if kind == "export":
        return f"export {name}={draw(quoted())}"
    if kind == "default":
        op = draw(st.sampled_from([":=", "="]))
        return f': "${{{name}{op}{draw(PLAIN)}}}"'
    if kind == "array":
        return f"A=({' '.join(draw(st.lists(quoted(), max_size=3)))})"
    if kind == "append":
        return f"A+=({draw(quoted())})"
    if kind == "comment":
        return f"# {draw(VALUE)} \\"  # a `\` at the end of a comment continues nothing
    if kind == "blank":
        return ""
    if kind == "positional":
        return f"set -- {' '.join(draw(st.lists(quoted(), max_size=3)))}"
    if kind == "function":
        return f'f() {{ {name}="$1-$#"; }}\nf {draw(quoted())} {draw(quoted())}'
    if kind == "trace":
        return draw(st.sampled_from(["set -x", "set +x", "set -eu", "set +eu"]))
    if kind == "heredoc":
        quote = draw(st.sampled_from(["'EOF'", "EOF"]))
        return f"cat > /dev/null <<{quote}\n${name} {draw(VALUE)} \\\n)(\nEOF"
    test = draw(st.sampled_from(['[ -n "${V0:-}" ]', '[ -z "${V1:-}" ]', "true", "false"]))
    return f"if {test}; then\n  {name}={draw(quoted())}\nelse\n  {name}={draw(quoted())}\nfi"


@st.composite
def argument(draw: Any, index: int) -> str:
    """One override of the launch, its value written the ways scripts write one."""
    name = draw(st.sampled_from(NAMES))
    value = draw(
        st.sampled_from(
            [
                f"${{{name}:-{draw(PLAIN)}}}",
                f'"${{{name}-{draw(PLAIN)}}}"',
                f'"${{{name}:+set}}"',
                f'"${name}"',
                f'"${{{name}}}x"',
                draw(quoted()),
                f'"${{#{name}}}"',
                f'"${{{name}#*.}}"',
                f'"${{{name}%%=*}}"',
                f'"${{{name}//a/b}}"',
                f'"${{{name}/#X/y}}"',
                f'"${{{name}:1:3}}"',
                f'"${{{name}^^}}"',
                '"$1"',
                '"$@"',
                "$#",
            ]
        )
    )
    return f"k{index}.a={value}"


@st.composite
def script(draw: Any) -> str:
    lines = [f"{n}={draw(quoted())}" for n in NAMES] + ["A=(a 'b c')"]
    lines += draw(st.lists(statement(), max_size=6))
    words = ["python3 -m verl.trainer.main_ppo"]
    words += [draw(argument(i)) for i in range(draw(st.integers(0, 6)))]
    if draw(st.booleans()):
        words.append('"${A[@]}"')
    out = words[0]
    for word in words[1:]:
        joint = draw(st.sampled_from([" ", " \\\n    ", " \\\n    ", " \\\n# cut here\n    ", " \\\n\n    "]))
        out += joint + word
    ending = draw(st.sampled_from(["\n", " \\\n", " \\", " # trailing comment\n", "\nV0=after\n"]))
    return "\n".join(lines) + "\n" + out + ending


@pytest.fixture(scope="module")
def recorder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder whose `python3` writes its argv and env to RECORD (the env variable) as JSON."""
    bin_dir = tmp_path_factory.mktemp("bin")
    stub = bin_dir / "python3"
    stub.write_text(
        f"#!{os.path.realpath('/usr/bin/env')} -S /usr/bin/python3 -I\n"
        "import json, os, sys\n"
        "json.dump({'argv': sys.argv[1:], 'env': dict(os.environ)}, open(os.environ['RECORD'], 'w'))\n"
    )
    stub.chmod(0o755)
    return bin_dir


def run_bash(source: str, folder: Path, bin_dir: Path) -> dict[str, Any] | None:
    """What bash's `python3` received (argv, env) when it ran `source`; None when it never ran."""
    path = folder / "run.sh"
    path.write_text(source)
    record = folder / "argv.json"
    record.unlink(missing_ok=True)
    caller = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": HOME, "RECORD": str(record)}
    bash = ["/bin/bash", str(path)]
    subprocess.run(bash, env=caller, cwd=folder, capture_output=True, timeout=30, check=False)
    if not record.exists():
        return None
    ran: dict[str, Any] = json.loads(record.read_text())
    ran["env"] = {
        k: v
        for k, v in ran["env"].items()
        if k not in caller and k not in ("PWD", "SHLVL", "_", "OLDPWD", "LC_CTYPE")
    }
    return ran


@settings(
    max_examples=int(os.environ.get("RLCAT_BASH_EXAMPLES", "150")),
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(source=script())
def test_the_reader_gives_what_bash_runs(source: str, recorder: Path, tmp_path: Path) -> None:
    ran = run_bash(source, tmp_path, recorder)
    reading = read_script(tmp_path / "run.sh", env={"HOME": HOME})
    assert not [d for d in reading.diagnostics if d.code == "RLC050"], (source, reading.diagnostics)
    if ran is None:  # `set -eu` with a failing test stopped the script before the launch
        assert not [launch for launch in reading.launches if launch.assumptions == ()], source
        return
    assert len(reading.launches) == 1, (source, [d.headline() for d in reading.diagnostics])
    launch = reading.launches[0]
    assert all(o.known for o in launch.overrides), (source, [o.text for o in launch.overrides if not o.known])
    assert ["-m", launch.entrypoint, *(o.text for o in launch.overrides)] == ran["argv"], source
    assert dict(launch.env) == ran["env"], source
