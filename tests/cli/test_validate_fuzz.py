"""Property tests: mutated seed recipes never crash `rlcat validate` or `rlcat compile`.

Every example starts from a shipped recipe (recipes/*.yaml), damages it, writes it to a fresh temp
folder and runs, in-process,

    rlcat validate FILE --format json --platform cuda
    rlcat compile FILE --platform cuda -o OUT

Whatever the damage, both must exit 0, 1 or 2 without a traceback or an "internal error"; validate's
stdout must be the documented JSON report with well-formed diagnostics whose lines lie inside the
file they name; a failed compile must leave no OUT; and the two commands must agree on whether the
recipe is good (validate with no error-level finding on cuda ⇔ compile exits 0), except for the
findings only validate looks for (a `platforms:` block naming an unknown platform).

Damage comes in two kinds:

- data: the seed parsed, then keys deleted, renamed (typos) or added at any depth, values retyped,
  numbers pushed to 0/-1/huge/float/inf/nan, values replaced by random JSON-ish trees, references
  (`extends`, `model`, `dataset`, ...) pointed at random or path-like names; dumped with
  yaml.safe_dump;
- text: the seed's bytes with characters and lines inserted, deleted, replaced, swapped or
  re-indented (tabs, colons, brackets, quotes, anchors and aliases, `!!python/object` tags, NUL,
  invalid UTF-8, BOMs, document markers), or truncated.

The file is written either into `<tmp>/recipes/` under the name its `name:` field declares, so that
the name check passes and the later stages (schema, references, lowering, guards, verl keys) are
reached, or under a fixed name that usually stops at the name check (RLC103), or outside any catalog
folder. `--hypothesis-show-statistics` shows how deep the mutants got (the first code and the compile
exit code of each example).

A last property: a path in `extends` (relative, absolute, `..`-laden) is refused at the extends line
and the file it names is never opened (checked with an audit hook on `open`).
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import math
import os
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import event, given, settings
from hypothesis import strategies as st

from rlcat.cli import main
from rlcat.model.axes import ALGORITHMS, BACKENDS, ENGINES, MODES

from conftest import REPO

pytestmark = pytest.mark.slow

SEED_BYTES = {p.stem: p.read_bytes() for p in sorted((REPO / "recipes").glob("*.yaml"))}
SEED_DATA = {name: yaml.safe_load(raw) for name, raw in SEED_BYTES.items()}
CATALOG_NAMES = sorted(
    p.stem for kind in ("models", "datasets", "platforms") for p in (REPO / "catalog" / kind).glob("*.yaml")
)
REPORT_KEYS = {"version", "tool", "files", "summary", "diagnostics"}
DIAGNOSTIC_KEYS = {"code", "severity", "message", "file", "line", "col", "key", "hint", "notes", "platforms"}
CODE = re.compile(r"RLC\d{3}")
SAFE_STEM = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]{0,80}")
NAME_LINE = re.compile(rb"^name:[ \t]*([^\s#]+)[ \t]*$", re.MULTILINE)

# An example costs ~30 ms (one validate and one compile on cuda): these keep the file near 20 s.
# RLCAT_FUZZ_EXAMPLES=5000 pytest tests/cli/test_validate_fuzz.py runs a longer hunt.
DATA_EXAMPLES = TEXT_EXAMPLES = int(os.environ.get("RLCAT_FUZZ_EXAMPLES", "300"))
EXTENDS_EXAMPLES = 25


# --- running the CLI -------------------------------------------------------------------------------


def run_cli(*args: str) -> tuple[int, str, str]:
    """`rlcat ARGS...` in-process (no pytest fixture: hypothesis re-runs the test body many times)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


def assert_no_crash(code: int, out: str, err: str) -> None:
    assert code in (0, 1, 2), f"exit code {code}\nstdout:\n{out[:2000]}\nstderr:\n{err[:2000]}"
    for stream in (out, err):
        assert "Traceback" not in stream, stream[:3000]
        assert "internal error" not in stream, stream[:3000]


def line_limit(raw: bytes) -> int:
    """The last line a diagnostic may name: the file's line count + 1 (YAML also breaks lines on
    \\r, NEL, LS and PS, which str.splitlines counts too)."""
    return max(raw.count(b"\n"), len(raw.decode("utf-8", "replace").splitlines())) + 1


def raw_of(name: str, mutant: Path, raw: bytes) -> bytes | None:
    """The bytes of the file a diagnostic names: the mutant, or a catalog file shown relative to the
    checkout."""
    given = Path(name)
    for candidate in [given] if given.is_absolute() else [Path.cwd() / given, REPO / given]:
        if candidate.resolve() == mutant.resolve():
            return raw
        with contextlib.suppress(OSError):
            return candidate.read_bytes()
    return None


def check_validate(path: Path, raw: bytes) -> dict[str, Any]:
    code, out, err = run_cli("validate", str(path), "--format", "json", "--platform", "cuda")
    assert_no_crash(code, out, err)
    report = json.loads(out)
    assert set(report) == REPORT_KEYS, sorted(report)
    assert report["version"] == 3 and report["tool"]["name"] == "rlcat"
    assert report["files"] == 1
    diagnostics = report["diagnostics"]
    assert isinstance(diagnostics, list)
    for severity in ("error", "warning", "info"):
        assert report["summary"][severity] == sum(d["severity"] == severity for d in diagnostics)
    for d in diagnostics:
        assert set(d) == DIAGNOSTIC_KEYS, d
        assert CODE.fullmatch(d["code"]), d
        assert d["severity"] in ("error", "warning", "info"), d
        assert isinstance(d["message"], str) and d["message"], d
        if d["line"] is not None:
            assert isinstance(d["line"], int) and d["line"] >= 1, d
            assert d["file"] is not None, d
            named = raw_of(d["file"], path, raw)
            assert named is not None, f"diagnostic names a file that does not exist: {d}"
            assert d["line"] <= line_limit(named), d
        if d["col"] is not None:
            assert isinstance(d["col"], int) and d["col"] >= 1, d
    errors = report["summary"]["error"]
    assert (code == 0) == (errors == 0), (code, report["summary"])
    return report


def check_compile(path: Path, out_dir: Path) -> int:
    """Compile the mutant to a file in the default format (one override per line); its exit code,
    with 0 for a plan refused only because that format cannot show one of its values as it is (a
    control character in a value: RLC405, which names the formats that can, and validate, which
    judges the recipe and not a format, does not report)."""
    target = out_dir / "out.txt"
    code, out, err = run_cli("compile", str(path), "--platform", "cuda", "-o", str(target))
    assert_no_crash(code, out, err)
    errors = [line for line in err.splitlines() if re.search(r"RLC\d+ error:", line)]
    format_only = all("RLC405 error:" in e and "this format prints one override" in e for e in errors)
    if code and errors and format_only:
        assert not target.exists(), f"exit {code} but {target} was written"
        again = run_cli("compile", str(path), "--platform", "cuda", "--format", "json")
        assert again[0] == 0, again[2][:2000]  # a format that can carry the value takes the plan
        return 0
    assert out == "", out[:2000]
    if code:
        assert not target.exists(), f"exit {code} but {target} was written"
        leftovers = sorted(p.name for p in out_dir.iterdir()) if out_dir.exists() else []
        assert leftovers == [], leftovers
    else:
        assert target.is_file() and target.read_text(encoding="utf-8"), "exit 0 but no output"
    return code


def check_both(path: Path, raw: bytes) -> None:
    """Write the mutant, validate it, compile it, and check that the two agree."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(raw)
    report = check_validate(path, raw)
    compiled = check_compile(path, path.parent.parent / "out")
    # --hypothesis-show-statistics shows how deep the mutants reach
    event(f"compile exit {compiled}")
    event("first code " + min((d["code"] for d in report["diagnostics"]), default="none"))
    errors = [d for d in report["diagnostics"] if d["severity"] == "error"]
    why = f"compile exited {compiled}; validate found: " + json.dumps(errors, indent=1)[:3000]
    if not errors:
        assert compiled == 0, why
    elif compiled == 0:  # only findings that validate alone looks for
        assert all(validate_only(d) for d in errors), why


def validate_only(d: dict[str, Any]) -> bool:
    """A `platforms:` block for an unknown platform: validate reports it (RLC204), while compile for
    one platform ignores the blocks of the others."""
    return d["code"] == "RLC204" and (d["key"] or "").startswith("platforms.")


# --- where the mutant goes -------------------------------------------------------------------------

# most mutants are named after their `name:` so that they get past the name check
PLACES = ("catalog-named", "catalog-named", "catalog-named", "catalog-fixed", "loose")


def mutant_path(root: Path, place: str, name: object) -> Path:
    """catalog-named: <root>/recipes/<name>.yaml, so that the name check passes; catalog-fixed:
    <root>/recipes/mutant.yaml; loose: <root>/mutant.yaml (no catalog folder implied)."""
    if place == "catalog-named" and isinstance(name, str) and SAFE_STEM.fullmatch(name):
        return root / "recipes" / f"{name}.yaml"
    if place == "loose":
        return root / "mutant.yaml"
    return root / "recipes" / "mutant.yaml"


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[], Path]]:
    """A fresh folder per example (module-scoped: hypothesis and function-scoped fixtures clash)."""
    base = tmp_path_factory.mktemp("fuzz")
    counter = iter(range(10**9))
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("RLCAT_PATH", raising=False)
        mp.delenv("RLCAT_TRACEBACK", raising=False)
        mp.chdir(base)
        yield lambda: base / f"ex{next(counter)}"


# --- data-level mutations --------------------------------------------------------------------------

Tree = Any
Path_ = tuple[str | int, ...]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=12,
)
# edge values, and plausible ones that pass the schema and reach lowering, layout checks and guards
NUMBERS = [0, -1, 2**31, 2**63, 10**30, -(10**30), -0.5, 1e-300, 1e300, math.inf, -math.inf, math.nan]
NUMBERS += [1, 2, 3, 4, 7, 8, 16, 64, 100, 1024, 4096, 65536, 0.1, 0.5, 0.9, 1.0, 1.5]
REF_FIELDS = ("extends", "model", "dataset", "name", "engine", "backend", "mode", "algorithm")
PATHLIKE = [
    "../../etc/passwd",
    "/etc/passwd",
    "../recipes/gsm8k_qwen3_8b_fsdp",
    "recipes/gsm8k_qwen3_8b_fsdp.yaml",
    "gsm8k_qwen3_8b_fsdp.yaml",
    "~/x",
    ".",
    "..",
    "",
    "x" * 150,
    "GSM8K",
    "gsm8k qwen",
]
names = st.sampled_from(sorted(SEED_DATA) + CATALOG_NAMES + PATHLIKE) | st.text(max_size=15)
# valid values of the recipe's axes and references: mutants that stay schema-valid reach lowering,
# layout checks, guards and the verl key check
VALID = {
    "algorithm": ALGORITHMS,
    "backend": BACKENDS,
    "engine": ENGINES,
    "mode": MODES,
    "model": tuple(p.stem for p in (REPO / "catalog" / "models").glob("*.yaml")),
    "dataset": tuple(p.stem for p in (REPO / "catalog" / "datasets").glob("*.yaml")),
    "extends": tuple(SEED_DATA),
}


def paths_in(tree: Tree, prefix: Path_ = ()) -> Iterator[Path_]:
    yield prefix
    if isinstance(tree, dict):
        for key, value in tree.items():
            yield from paths_in(value, (*prefix, key))
    elif isinstance(tree, list):
        for i, value in enumerate(tree):
            yield from paths_in(value, (*prefix, i))


def get(tree: Tree, path: Path_) -> Tree:
    for part in path:
        tree = tree[part]
    return tree


def put(tree: Tree, path: Path_, value: Tree) -> Tree:
    """Set the value at `path` (the root is replaced when the path is empty); returns the root."""
    if not path:
        return value
    get(tree, path[:-1])[path[-1]] = value
    return tree


def retyped(value: Tree) -> list[Tree]:
    """Values of another type standing in for `value` (int→str, list→scalar, dict→list, bool→int...)."""
    if isinstance(value, bool):
        return [int(value), str(value).lower(), "yes", [value]]
    if isinstance(value, int):
        return [str(value), float(value) + 0.5, value != 0, [value], {"value": value}]
    if isinstance(value, float):
        return [str(value), int(value) if math.isfinite(value) else 0, [value], True]
    if isinstance(value, str):
        return [
            [value],
            {value: value},
            len(value),
            value == "",
            None,
            value.encode("utf-8", "replace").hex(),
        ]
    if isinstance(value, list):
        return [
            value[0] if value else None,
            {str(i): v for i, v in enumerate(value)},
            ", ".join(map(str, value)),
            len(value),
        ]
    if isinstance(value, dict):
        return [list(value.values()), list(value), None, str(value), 1]
    return ["", 0, [], {}]


def typo(key: str, draw: st.DrawFn) -> str:
    if not key:
        return "x"
    i = draw(st.integers(0, len(key) - 1))
    kind = draw(st.sampled_from(["drop", "double", "swap", "upper", "suffix", "dash"]))
    if kind == "drop" and len(key) > 1:
        return key[:i] + key[i + 1 :]
    if kind == "double":
        return key[:i] + key[i] + key[i:]
    if kind == "swap" and i + 1 < len(key):
        return key[:i] + key[i + 1] + key[i] + key[i + 2 :]
    if kind == "upper":
        return key.upper() if key.upper() != key else key + "X"
    if kind == "dash":
        return key.replace("_", "-") if "_" in key else key + "-"
    return key + "_"


def mutate_data(tree: Tree, draw: st.DrawFn) -> Tree:
    op = draw(
        st.sampled_from(
            [
                *("delete", "retype", "number", "number", "number", "rename", "insert", "replace"),
                *("reference", "valid", "valid", "nest"),
            ]
        )
    )
    paths = list(paths_in(tree))
    inner = [p for p in paths if p]
    if op == "delete" and inner:
        path = draw(st.sampled_from(inner))
        parent = get(tree, path[:-1])
        del parent[path[-1]]
        return tree
    if op == "retype" and inner:
        path = draw(st.sampled_from(inner))
        return put(tree, path, draw(st.sampled_from(retyped(get(tree, path)))))
    if op == "number":
        numeric = [
            p for p in inner if isinstance(get(tree, p), (int, float)) and not isinstance(get(tree, p), bool)
        ]
        if numeric:
            return put(tree, draw(st.sampled_from(numeric)), draw(st.sampled_from(NUMBERS)))
    if op == "rename":
        keyed = [p for p in inner if isinstance(p[-1], str)]
        if keyed:
            path = draw(st.sampled_from(keyed))
            parent = get(tree, path[:-1])
            new = typo(path[-1], draw)
            items = [(new if k == path[-1] else k, v) for k, v in parent.items()]
            parent.clear()
            parent.update(items)  # a typo that hits an existing key merges the two: fine too
            return tree
    if op == "insert":
        mappings = [p for p in paths if isinstance(get(tree, p), dict)]
        if mappings:
            where = get(tree, draw(st.sampled_from(mappings)))
            key = draw(
                st.sampled_from(["nmae", "extend", "overide", "x", "__class__", "batch", "env"])
                | st.text(min_size=1, max_size=12)
            )
            where[key] = draw(json_values)
            return tree
    if op == "reference" and isinstance(tree, dict):
        tree[draw(st.sampled_from(REF_FIELDS))] = draw(names)
        return tree
    if op == "valid" and isinstance(tree, dict):
        field = draw(st.sampled_from(sorted(VALID)))
        tree[field] = draw(st.sampled_from(VALID[field]))
        return tree
    if op == "nest" and inner:
        path = draw(st.sampled_from(inner))
        value = get(tree, path)
        for _ in range(draw(st.integers(1, 80))):
            value = draw(st.sampled_from([[value], {"k": value}]))
        return put(tree, path, value)
    # "replace", and the fallback for ops that found nothing to work on
    return put(tree, draw(st.sampled_from(paths)), draw(json_values))


@settings(max_examples=DATA_EXAMPLES, deadline=None)
@given(data=st.data())
def test_data_mutations_never_crash(workdir: Callable[[], Path], data: st.DataObject) -> None:
    seed = data.draw(st.sampled_from(sorted(SEED_DATA)), label="seed")
    tree = copy.deepcopy(SEED_DATA[seed])
    for _ in range(data.draw(st.integers(1, 3), label="mutations")):
        tree = mutate_data(tree, data.draw)
    raw = yaml.safe_dump(
        tree,
        sort_keys=False,
        allow_unicode=data.draw(st.booleans(), label="allow_unicode"),
        default_flow_style=data.draw(st.sampled_from([False, None, True]), label="flow"),
    ).encode("utf-8")
    name = tree.get("name") if isinstance(tree, dict) else None
    place = data.draw(st.sampled_from(PLACES), label="place")
    check_both(mutant_path(workdir(), place, name), raw)


# --- text-level mutations --------------------------------------------------------------------------

# fmt: off
TOKENS = [
    b"\t", b":", b": ", b"[", b"]", b"{", b"}", b'"', b"'", b",", b"#", b"|", b">", b"-", b"- ", b"? ",
    b"&a ", b"*a", b" &a [1]", b"*a ", b"<<: *a", b"!!python/object:os.system ",
    b"!!python/object/apply:os.system ['true'] ", b"!!python/name:os.system ", b"!!binary ", b"!!set ",
    b"!!str ", b"!!int ", b"!!float ", b"!!map ", b"!custom ", b"\x00", b"\n", b"\r", b"\r\n", b"\n\n",
    b"---\n", b"...\n", b"%YAML 1.1\n", b"%TAG ! tag:x,2000:\n", b"\xff", b"\xc3", b"\xe9", b"\xc0\x80",
    b"\xed\xa0\x80", b"\x89PNG\r\n\x1a\n", b"\xef\xbb\xbf", b'"\\0"', b'"\\ud800"', b'"\\x1b"',
    "\u2028".encode(), "\u0085".encode(), "\u00e9".encode(), "\U0001f600".encode(), b"~", b"null",
    b"1e999", b"-.inf", b".nan", b"0x1F", b"0o17", b"1_000", b"yes", b"=", b"@", b"`", b"%", b"!", b"\\",
    b"        ", b"\x1b[31m", b"[" * 70, b"{a: " * 70,
]
# fmt: on


def mutate_text(raw: bytes, draw: st.DrawFn) -> bytes:
    op = draw(st.sampled_from(["insert", "delete", "replace", "line", "truncate"]))
    at = draw(st.integers(0, len(raw)))
    token = draw(
        st.sampled_from(TOKENS)
        | st.binary(min_size=1, max_size=6)
        | st.text(min_size=1, max_size=6).map(str.encode)
    )
    if op == "insert":
        return raw[:at] + token + raw[at:]
    if op == "delete":
        return raw[:at] + raw[at + draw(st.integers(1, 40)) :]
    if op == "replace":
        return raw[:at] + token + raw[at + draw(st.integers(1, 8)) :]
    if op == "truncate":
        return raw[:at]
    lines = raw.splitlines(keepends=True) or [b""]
    i = draw(st.integers(0, len(lines) - 1))
    j = draw(st.integers(0, len(lines) - 1))
    how = draw(st.sampled_from(["delete", "duplicate", "swap", "indent", "tab", "dedent", "prefix"]))
    if how == "delete":
        del lines[i]
    elif how == "duplicate":
        lines.insert(j, lines[i])
    elif how == "swap":
        lines[i], lines[j] = lines[j], lines[i]
    elif how == "indent":
        lines[i] = b" " * draw(st.integers(1, 9)) + lines[i]
    elif how == "tab":
        lines[i] = b"\t" + lines[i]
    elif how == "dedent":
        lines[i] = lines[i].lstrip(b" ")
    else:
        lines[i] = token + lines[i]
    return b"".join(lines)


@settings(max_examples=TEXT_EXAMPLES, deadline=None)
@given(data=st.data())
def test_text_mutations_never_crash(workdir: Callable[[], Path], data: st.DataObject) -> None:
    seed = data.draw(st.sampled_from(sorted(SEED_BYTES)), label="seed")
    raw = SEED_BYTES[seed]
    for _ in range(data.draw(st.integers(1, 4), label="mutations")):
        raw = mutate_text(raw, data.draw)
    found = NAME_LINE.search(raw)
    name = found.group(1).decode("utf-8", "replace") if found else None
    place = data.draw(st.sampled_from(PLACES), label="place")
    check_both(mutant_path(workdir(), place, name), raw)


# --- `extends` never reaches outside the catalog ---------------------------------------------------

_recording: list[list[str]] = []  # the paths opened, while a test records them


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if _recording and event == "open" and isinstance(args[0], (str, bytes, Path)):
        _recording[-1].append(str(Path(args[0].decode() if isinstance(args[0], bytes) else args[0])))


sys.addaudithook(_audit)  # cannot be removed; it does nothing unless a test is recording


@settings(max_examples=EXTENDS_EXAMPLES, deadline=None)
@given(
    spelling=st.sampled_from(
        [
            "../../outside/secret",
            "../../outside/secret.yaml",
            "../outside/secret",
            "{outside}/secret",
            "{outside}/secret.yaml",
            "recipes/../../outside/secret",
            "../../../../../../../../etc/passwd",
            "/etc/passwd",
            "file://{outside}/secret.yaml",
            "~/../../etc/passwd",
            "..\\..\\outside\\secret",
        ]
    ),
    place=st.sampled_from(["catalog-named", "loose"]),
)
def test_extends_never_opens_a_path_outside_the_catalog(
    workdir: Callable[[], Path], spelling: str, place: str
) -> None:
    """`extends` names a recipe; a path in it is rejected at the extends line, and the file it points
    at is never opened (a readable recipe sits there, so opening it would make the compile pass)."""
    root = workdir()
    outside = root / "outside"
    outside.mkdir(parents=True)
    secret = outside / "secret.yaml"
    secret.write_bytes(
        SEED_BYTES["gsm8k_qwen3_8b_fsdp"].replace(b"name: gsm8k_qwen3_8b_fsdp", b"name: secret")
    )
    target = spelling.format(outside=outside)
    raw = f"name: child\nsummary: reaches out\nextends: {json.dumps(target)}\n".encode()
    path = (
        mutant_path(root / "cat", place, "child") if place == "catalog-named" else root / "cat" / "child.yaml"
    )
    path.parent.mkdir(parents=True)
    path.write_bytes(raw)
    opened: list[str] = []
    _recording.append(opened)
    try:
        report = check_validate(path, raw)
        compiled = check_compile(path, root / "out")
    finally:
        _recording.clear()
    assert compiled != 0 and report["summary"]["error"] >= 1
    at_extends = [d for d in report["diagnostics"] if d["key"] == "extends" and d["line"] == 3]
    assert at_extends and at_extends[0]["code"] in ("RLC103", "RLC201"), report["diagnostics"]
    touched = {Path(p).resolve() for p in opened}
    assert secret.resolve() not in touched
    assert Path("/etc/passwd") not in touched
