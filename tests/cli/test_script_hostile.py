"""Hostile launch scripts for the static bash reader (`rlcat lint`, `rlcat import`): each is read in a
process of its own, with a time limit and a 1 GiB address-space limit, so that a reader that
backtracks or grows without bound fails the test instead of hanging the suite or the machine.

- patterns (`#`, `##`, `%`, `%%`, `case`, `[[ == ]]`) that a backtracking regular expression takes
  minutes on, and `${x//a/b}` over 16 KiB (130 s when each position was tried against every end):
  read at once, each value what bash itself prints for the same lines (bash is the oracle);
- a value past the reader's bounds (MAX_TEXT, MAX_PATTERN, brace words): the value is unknown, an
  RLC1106 warning names the file and line, the reading goes on, and `rlcat lint` exits 0, as for any
  value only running would tell (1 with --strict);
- a script past MAX_WORK (gigabytes of copies of a large value from 100 KB of script): refused as a
  file too large is (RLC007 at the line that crossed it, exit 2). Never a traceback, a MemoryError,
  exit 1 or exit 3.

How long the reader takes as inputs double is measured in bench/script_reader.py, not here.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from rlcat.scripts.glob import MAX_PATTERN
from rlcat.scripts.words import MAX_TEXT, MAX_WORK

from conftest import REPO

LIMIT_SECONDS = 60  # the fixed reader takes well under a second on each; the old one minutes
LIMIT_BYTES = 1024 * 1024 * 1024
LAUNCH = "python3 -m verl.trainer.main_ppo"
CLEAN = (REPO / "tests" / "data" / "lint" / "clean.sh").read_text(encoding="utf-8")
_READ = """
import json, sys
from rlcat.scripts import read_text
reading = read_text(sys.stdin.read(), file="hostile.sh")
print(json.dumps({
    "overrides": [[o.text, o.known] for launch in reading.launches for o in launch.overrides],
    "diagnostics": [[d.code, d.file, d.line, d.message] for d in reading.diagnostics],
}))
"""


def _limits() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT_BYTES, LIMIT_BYTES))


def _bounded(argv: list[str], stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=LIMIT_SECONDS,
        preexec_fn=_limits,
        check=False,
    )


def read(script: str) -> dict[str, Any]:
    """What the reader finds in `script`, read in a bounded process of its own."""
    done = _bounded([sys.executable, "-c", _READ], script)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def bash_prints(lines: str, name: str = "y") -> str:
    """What bash holds in `$name` after `lines` (the oracle: nothing but assignments is run)."""
    done = subprocess.run(
        ["bash", "-s"],
        input=f'{lines}\nprintf %s "${name}"\n',
        capture_output=True,
        text=True,
        timeout=LIMIT_SECONDS,
        check=True,
    )
    return done.stdout


A256 = "a" * 256
NEAR_MISS = "*a" * 64 + "*b"  # 130 characters: backtracks through every way to place 64 `a`s
NEAR_HIT = "*a" * 64 + "*"
SIXTEEN_K = ("a" * 15 + "b") * 1024


@pytest.mark.parametrize(
    "assignment",
    [
        f"y=${{x#{NEAR_MISS}}}",
        f"y=${{x##{NEAR_MISS}}}",
        f"y=${{x%{NEAR_MISS}}}",
        f"y=${{x%%{NEAR_MISS}}}",
        f"y=${{x##{NEAR_HIT}}}",
        f"y=${{x%{NEAR_HIT}}}",
        f"y=${{x/{NEAR_MISS}/c}}",
        f"y=${{x//{NEAR_HIT}/c}}",
        f"case $x in {NEAR_MISS}) y=miss;; {NEAR_HIT}) y=hit;; esac",
        f"[[ $x == {NEAR_MISS} ]] && y=equal || y=different",
    ],
    ids=["#", "##", "%", "%%", "##hit", "%hit", "/", "//hit", "case", "[["],
)
def test_patterns_that_backtrack_are_read_as_bash_reads_them(assignment: str) -> None:
    lines = f"x={A256}\n{assignment}"
    found = read(f"{lines}\n{LAUNCH} a.b=$y\n")
    assert found["overrides"] == [[f"a.b={bash_prints(lines)}", True]]
    assert not [d for d in found["diagnostics"] if d[0] == "RLC1106"], found["diagnostics"]


REPLACEMENTS = ["${x//a/bc}", "${x//b/}", "${x//a*b/c}", "${x//?/c}", "${x//[ab]a/_}", "${x/#a*b/c}",
                "${x/%b*/c}", "${x/b/c}"]  # fmt: skip


@pytest.mark.parametrize("operation", REPLACEMENTS)
def test_replacing_in_sixteen_kib_is_read_as_bash_reads_it(operation: str) -> None:
    lines = f"x={SIXTEEN_K}\ny={operation}"
    found = read(f"{lines}\n{LAUNCH} a.b=$y\n")
    assert found["overrides"] == [[f"a.b={bash_prints(lines)}", True]]


@pytest.mark.slow  # big inputs: thousands of parts, each case seconds of reading
@pytest.mark.parametrize(("distinct", "count", "uses"), [(False, 7000, 24), (True, 4500, 40)],
                         ids=["one part", "distinct parts"])  # fmt: skip
def test_a_value_of_many_unknown_parts_is_split_in_one_pass(distinct: bool, count: int, uses: int) -> None:
    """`X="b $(c) …"` (60 KB), then `echo $X` again and again: each blank was tested against every
    unknown part, and the parts of the value merged pairwise (3 s a use). One part repeated splits
    at its known blanks (RLC1102 says so at each use); past state.MAX_UNKNOWN distinct parts, where
    the words fall is not guessed and the value stays one word."""
    parts = "".join(f"b $(c{i if distinct else ''}) " for i in range(count))
    found = read(f'X="{parts}"\n' + "echo $X\n" * uses + f"{LAUNCH} a.b=1\n")
    assert found["overrides"] == [["a.b=1", True]]
    split_around = sorted(line for code, _, line, _ in found["diagnostics"] if code == "RLC1102")
    assert split_around == ([] if distinct else list(range(2, uses + 2)))


BIG = "v" * (MAX_TEXT - 100)


@pytest.mark.parametrize(
    ("lines", "line", "words"),
    [
        (f"x={BIG}\ny=$x$x", 2, f"a value longer than {MAX_TEXT} characters"),
        (f"x={BIG}\ny=${{x//v/vv}}", 2, f"a value longer than {MAX_TEXT} characters"),
        (f'x={BIG}\nset -- "$x" "$x"\ny="$*"', 3, f"a value longer than {MAX_TEXT} characters"),
        (f"x={A256}\ny=${{x##{'?' * (MAX_PATTERN + 1)}}}", 2, f"a pattern longer than {MAX_PATTERN}"),
        (f"x={A256}\ny=${{x:=$x}}\n" + "y=$y$y\n" * 12, 11, f"a value longer than {MAX_TEXT} characters"),
    ],
    ids=["concatenation", "replacement", "$*", "pattern", "doubling"],
)
def test_a_value_past_a_bound_is_unknown_and_said(lines: str, line: int, words: str) -> None:
    found = read(f"{lines}\n{LAUNCH} a.b=$y\n")
    [[text, known]] = found["overrides"]
    assert not known and text.startswith("a.b="), text[:100]
    assert any(
        (code, file, at) == ("RLC1106", "hostile.sh", line) and words in message
        for code, file, at, message in found["diagnostics"]
    ), found["diagnostics"]


def _memory_hog(copies: int) -> str:
    """~97 KB of script that, read without bounds, holds gigabytes: many copies of a 60 KB value
    through brace expansion and assignments."""
    braces = "{a,b}" * 10
    lines = [f"x={'v' * 60_000}"]
    lines += [f"echo {braces}$x"]
    lines += [f'y{i}="{"$x" * 8}"' for i in range(copies)]
    return "\n".join(lines) + "\n"


def test_many_copies_of_a_large_value_are_refused_with_a_diagnostic() -> None:
    found = read(_memory_hog(4000) + f"{LAUNCH} a.b=1\n")
    assert found["overrides"] == []  # refused whole, as a file too large is: nothing half-read
    [(code, file, line, message)] = found["diagnostics"]
    assert (code, file) == ("RLC007", "hostile.sh") and 3 <= line < 4000, found["diagnostics"]
    assert f"more than {MAX_WORK} characters of work" in message


def test_paths_that_never_merge_are_refused_with_a_diagnostic() -> None:
    """Six undecidable conditions keep 64 paths apart; every statement after them compared the paths
    pairwise, each comparison as long as the names set so far (past a minute for 3,000 lines). What
    merging compares counts as work: the script is refused at the line that crossed MAX_WORK."""
    names = "".join(f"x{i}=1\n" for i in range(2000))
    forks = "".join(f"if [ -f /f{i} ]; then V{i}=1; else W{i}=1; fi\n" for i in range(6))
    after = "".join(f"y{i}=1\n" for i in range(3000))
    found = read(names + forks + after + f"{LAUNCH} a.b=1\n")
    [(code, file, line, message)] = found["diagnostics"]
    assert (code, file) == ("RLC007", "hostile.sh") and 2006 < line < 5007, found["diagnostics"]
    assert f"more than {MAX_WORK} characters of work" in message


@pytest.mark.slow  # a big input: a process that reads until its memory bound
def test_lint_of_a_memory_hog_exits_2_with_the_bound_named(tmp_path: Path) -> None:
    """The console script (`lint`, and `import` for the refused script) under a 1 GiB memory limit:
    a value past MAX_TEXT is a warning at its line (the script is read, exit 0), a script past
    MAX_WORK is refused at the line that crossed it (exit 2, as a file too large): never a
    MemoryError, a traceback, a crash or exit 1."""
    console = Path(sys.executable).parent / "rlcat"
    command = [str(console)] if console.is_file() else [sys.executable, "-m", "rlcat"]
    results = {}
    for copies in (1, 400):
        script = tmp_path / f"hog{copies}.sh"
        script.write_text(_memory_hog(copies) + CLEAN, encoding="utf-8")
        done = _bounded([*command, "lint", str(script), "--format", "json"])
        assert "Traceback" not in done.stderr and "internal error" not in done.stderr, done.stderr[-3000:]
        diagnostics = json.loads(done.stdout)["diagnostics"]
        results[copies] = (
            done.returncode,
            [(d["code"], d["file"], d["line"]) for d in diagnostics if d["code"] in ("RLC007", "RLC1106")],
        )
    read_with_warnings = [("RLC1106", str(tmp_path / "hog1.sh"), line) for line in (2, 3)]
    assert results[1] == (0, read_with_warnings)  # the brace words cut, the 480 KB value unknown
    code, refused = results[400]
    assert code == 2 and len(refused) == 1 and refused[0][:2] == ("RLC007", str(tmp_path / "hog400.sh"))
    imported = _bounded([*command, "import", str(tmp_path / "hog400.sh"), "-o", str(tmp_path / "out")])
    codes = [line.split()[1] for line in imported.stderr.splitlines() if " error: " in line]
    assert imported.returncode == 2 and codes == ["RLC007"], imported.stderr[-3000:]
    assert not (tmp_path / "out").exists()
