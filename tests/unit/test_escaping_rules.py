"""One place per rule: each escaping rule and the decision on live interpolations is one function of
rlcat.syntax, fed hostile text here; every output calls it (their own tests: tests/cli/test_hostile_*.py,
the goldens), and no other module of the package writes YAML or makes a string live."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from rlcat.diagnostics import RlcatError
from rlcat.read.document import parse_yaml
from rlcat.syntax.bash import sh_line
from rlcat.syntax.hydra_value import (
    Interpolation,
    RequestedInterpolation,
    as_config_value,
    render,
    with_live_interpolations,
)
from rlcat.syntax.yaml_text import FORMATS_HINT, yaml_document

from conftest import REPO

PACKAGE = REPO / "compiler" / "rlcat"

# Text a terminal or a CI log would act on (a colour, a bidi override, a line break YAML shows as
# none, a legacy workflow command, a NUL), and text that would start a line with a workflow command.
HIDDEN = {
    "escape": "a\x1b[31mb",
    "bidi-override": "a\u202eb",
    "next-line": "a\x85b",
    "line-separator": "a\u2028b",
    "legacy-command": "##[error]x",
    "nul": "a\x00b",
}
WORKFLOW = {"error": "a\n::error::x", "indented-warning": "run\n  ::warning file=x::b"}
PLACES = {
    "value": lambda t: {"k": t},
    "key": lambda t: {t: 1},
    "list-item": lambda t: {"k": ["x", t]},
    "nested": lambda t: {"a": {"b": [{"c": t}]}},
}


def _refusal(data: Any, **kw: Any) -> str:
    with pytest.raises(RlcatError) as refused:
        yaml_document(data, **kw)
    (found,) = refused.value.diagnostics
    assert found.code == "RLC405"
    assert found.hint == kw.get("hint", FORMATS_HINT)
    return found.message


@pytest.mark.parametrize("place", PLACES.values(), ids=PLACES.keys())
@pytest.mark.parametrize("text", HIDDEN.values(), ids=HIDDEN.keys())
def test_yaml_document_refuses_hidden_characters_anywhere(text: str, place: Any) -> None:
    message = _refusal(place(text), hint="use the json")
    assert "holds a hidden character or `##[`" in message
    assert message.isprintable()  # the refusal shows the text escaped


@pytest.mark.parametrize("place", PLACES.values(), ids=PLACES.keys())
@pytest.mark.parametrize("text", WORKFLOW.values(), ids=WORKFLOW.keys())
def test_yaml_document_never_starts_a_line_with_a_workflow_command(text: str, place: Any) -> None:
    """A line break in a value is the layout of its literal block, and the line it would begin
    with `::` is what is refused; in a key (no block) the line break is a hidden character."""
    message = _refusal(place(text))
    shown = text.split("\n")[1].strip()
    if place is not PLACES["key"]:
        assert message == f"{shown} would begin a line with `::`, a CI workflow command"
    else:
        assert message.startswith(text.split("\n", maxsplit=1)[0] + "\\n")


@pytest.mark.parametrize("text", ["::error::x", "  ::error::x", "::", "- ::x", "x: ::y"])
def test_workflow_command_text_on_one_line_is_quoted_or_refused(text: str) -> None:
    for data in ({text: 1}, {"k": text}, [text], {"k": {text: [text]}}):
        try:
            out = yaml_document(data)
        except RlcatError as exc:
            assert exc.diagnostics[0].code == "RLC405"
            continue
        assert not any(line.lstrip().startswith("::") for line in out.splitlines()), out
        assert yaml.safe_load(out) == data


def test_literal_blocks_keep_a_script_as_it_runs() -> None:
    script = "set -euo pipefail\nexport A='x y'\npython3 -m verl.trainer.main_ppo \\\n    a=1\n"
    data = {"run": script, "num_nodes": 2}
    out = yaml_document(data, header=["task"])
    assert out.startswith("# task\nrun: |\n  set -euo pipefail\n  export A='x y'\n")
    assert yaml.safe_load(out) == data


def test_header_lines_are_one_comment_each_whatever_they_hold() -> None:
    out = yaml_document({"k": 1}, header=["made from a\n::error::x", "b\u202ec"])
    assert out.splitlines() == ["# made from a\\n::error::x", "# b\\u202ec", "k: 1"]


def test_yaml_document_writes_requested_interpolations_with_their_tag() -> None:
    out = yaml_document({"k": RequestedInterpolation("${oc.env:HOME}")})
    assert out.startswith("k: !interp ")
    value = parse_yaml(out, "out.yaml").data["k"]  # rlcat's reader reads it back live
    assert type(value) is RequestedInterpolation and value == "${oc.env:HOME}"


LIVE_CASES = {
    "env": ("${oc.env:HOME}/data", True),
    "key": ("${trainer.n_gpus_per_node}", True),
    "escaped-by-the-writer": ("a\\${x}", True),  # as written: OmegaConf itself reads the backslash
    "in-the-middle": ("run_${now:%H}", True),
    "shell-variable": ("$HOME/data", False),
    "dollar-brace-apart": ("$ {x}", False),
    "plain": ("fsdp2", False),
}


@pytest.mark.parametrize(("text", "live"), LIVE_CASES.values(), ids=LIVE_CASES.keys())
@pytest.mark.parametrize("kind", [Interpolation, RequestedInterpolation])
def test_only_text_holding_an_interpolation_stays_live(
    text: str, live: bool, kind: type[Interpolation]
) -> None:
    value = with_live_interpolations(text, kind)
    assert value == text
    assert type(value) is (kind if live else str)
    # live text reaches verl as written; every other string is rendered inert (its `${` escaped)
    assert render(value) == render(Interpolation(text) if live else text)
    assert as_config_value(value) == (text if live else as_config_value(text))


def test_live_interpolations_inside_lists_and_mappings() -> None:
    value = with_live_interpolations({"a": ["${x}", "y", 3], "b": {"c": "${oc.env:PWD}"}, "d": None})
    assert value == {"a": ["${x}", "y", 3], "b": {"c": "${oc.env:PWD}"}, "d": None}
    assert [type(v) for v in value["a"]] == [Interpolation, str, int]
    assert type(value["b"]["c"]) is Interpolation
    assert render(value["a"]) == '["${x}",y,3]'
    assert render(["${x}", "y", 3]) == '["\\${x}",y,3]'  # the same list as recipe data: inert


SH_WORDS = ["a b", "it's", 'say "hi"', "$(touch pwned)", "`touch pwned`", "x;touch pwned"]
SH_WORDS += ["line\nbreak", "", "*"]


@pytest.mark.skipif(shutil.which("sh") is None, reason="a POSIX sh is needed")
def test_sh_line_passes_every_word_exactly_to_a_posix_shell(tmp_path: Path) -> None:
    """Ray's job supervisor runs the entrypoint with `/bin/sh -c`: each word arrives as it was."""
    line = sh_line(["printf", "%s\\0", *SH_WORDS])
    run = subprocess.run(["sh", "-c", line], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert run.stdout.split("\0")[:-1] == SH_WORDS
    assert not (tmp_path / "pwned").exists()


def _sources() -> dict[str, str]:
    return {str(p.relative_to(PACKAGE)): p.read_text(encoding="utf-8") for p in sorted(PACKAGE.rglob("*.py"))}


def test_yaml_is_written_in_one_place() -> None:
    writers = [name for name, text in _sources().items() if re.search(r"\byaml\.(safe_)?dump(_all)?\(", text)]
    assert writers == ["syntax/yaml_text.py"]


def test_strings_are_made_live_in_one_place_per_kind_of_text() -> None:
    """`!interp` recipe data (read/nodes.py), paths under `~`, `$HOME`, `$PWD` (lower/common.py),
    and text written for verl's command line (with_live_interpolations): nowhere else."""
    made = re.compile(r"(?<!class )\b(?:Requested)?Interpolation\(")
    makers = [name for name, text in _sources().items() if made.search(text)]
    assert makers == ["lower/common.py", "read/nodes.py"]
    callers = [name for name, text in _sources().items() if "with_live_interpolations(" in text]
    assert callers == [
        "compile/assemble.py",
        "importer/solve.py",
        "survey/lint_scripts.py",
        "syntax/hydra_value.py",
    ]
