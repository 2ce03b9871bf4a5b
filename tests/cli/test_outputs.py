"""Where rlcat's output goes, and that it arrives whole or not at all.

`-o` writes a regular file (or a new path) only: a device, a pipe, a folder or a symbolic link is
refused (RLC106, exit 2) and left as it was, as root too, where a rename would have turned
/dev/null into a file. `-o -` is stdout. A rewritten file keeps its permissions and a launch script
is executable. Every write is checked: a full disk or /dev/full is RLC106 and exit 2, never a
short output with exit 0; a reader that went away is 141. SIGTERM and Ctrl-C in the middle of a
write leave no temporary file (143 and 130). Bad catalog folders and unknown keys of `explain`
are diagnostics.

The tests run as root (here and in CI); the unprivileged variants then take `nobody`'s effective
ids in-process (the interpreter lives under /root, where a `nobody` process cannot start it).
"""

from __future__ import annotations

import errno
import io
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

import pytest

from rlcat.diagnostics import ExitCode

from conftest import Result

Run = Callable[..., Result]
IS_ROOT = os.geteuid() == 0
NOBODY = 65534  # uid and gid of `nobody`
COMPILE = ["compile", "gsm8k_qwen3_8b_fsdp"]  # prints no notes on stderr: stderr holds only findings
TERMINATED = 128 + signal.SIGTERM


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Run from an empty folder, with no user catalog from the environment."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("RLCAT_PATH", raising=False)
    monkeypatch.delenv("RLCAT_TRACEBACK", raising=False)


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("RLCAT_PATH", "RLCAT_TRACEBACK")}
    return {**env, "PYTHONDONTWRITEBYTECODE": "1", **extra}


def _rlcat_process(
    args: list[str], cwd: Path, stdout: int | IO[str] = subprocess.PIPE
) -> subprocess.CompletedProcess[bytes]:
    """`python -m rlcat ARGS`: the console script's run(), with its signal handler and streams."""
    return subprocess.run(
        [sys.executable, "-m", "rlcat", *args],
        cwd=cwd,
        env=_env(),
        stdout=stdout,
        stderr=subprocess.PIPE,
        timeout=120,
        check=False,
    )


def _errors(err: str, code: str) -> list[str]:
    return [line for line in err.splitlines() if f" {code} error: " in line]


# --- -o refuses anything but a regular file or a new path ----------------------------------------


def _identity(path: Path) -> tuple[object, ...]:
    """What a path is, without opening it (a FIFO would block): its kind, device numbers, inode,
    a link's target, a regular file's bytes."""
    st = os.lstat(path)
    target = os.readlink(path) if stat.S_ISLNK(st.st_mode) else None
    content = path.read_bytes() if stat.S_ISREG(st.st_mode) else None
    return stat.S_IFMT(st.st_mode), stat.S_IMODE(st.st_mode), st.st_rdev, st.st_ino, target, content


SYSTEM_PATHS = (Path("/dev/null"), Path("/dev/full"), Path("/dev/stdout"))


@pytest.fixture
def system_paths_kept() -> Iterator[None]:
    """Fail if a test changed /dev/null, /dev/full or /dev/stdout, and put them back (as root) so that
    a regression does not break every later test on the machine."""
    before = {path: os.lstat(path) for path in SYSTEM_PATHS}
    links = {path: os.readlink(path) for path, st in before.items() if stat.S_ISLNK(st.st_mode)}
    yield
    changed = [path for path, st in before.items() if _identity(path)[:4] != _identity_of(st)]
    for path in changed if IS_ROOT else []:
        path.unlink()
        if path in links:
            os.symlink(links[path], path)
        else:
            os.mknod(path, before[path].st_mode, before[path].st_rdev)
            os.chmod(path, stat.S_IMODE(before[path].st_mode))
    assert changed == [], f"rlcat replaced {changed}"


def _identity_of(st: os.stat_result) -> tuple[object, ...]:
    return stat.S_IFMT(st.st_mode), stat.S_IMODE(st.st_mode), st.st_rdev, st.st_ino


def _make_fifo(folder: Path) -> Path:
    os.mkfifo(folder / "pipe")
    return folder / "pipe"


def _make_directory(folder: Path) -> Path:
    (folder / "plans").mkdir()
    return folder / "plans"


def _make_symlink(folder: Path) -> Path:
    (folder / "real.txt").write_text("the file the link names\n", encoding="utf-8")
    (folder / "link.txt").symlink_to("real.txt")
    return folder / "link.txt"


def _make_dangling_symlink(folder: Path) -> Path:
    (folder / "link.txt").symlink_to("nowhere.txt")
    return folder / "link.txt"


# (id, the path -o names (made in the given folder), the words RLC106 uses for it)
NOT_REGULAR: list[tuple[str, Callable[[Path], Path], str]] = [
    ("dev-null", lambda _: Path("/dev/null"), "a character device"),
    ("dev-full", lambda _: Path("/dev/full"), "a character device"),
    ("dev-stdout", lambda _: Path("/dev/stdout"), "a symbolic link"),
    ("fifo", _make_fifo, "a named pipe (FIFO)"),
    ("directory", _make_directory, "a directory"),
    ("symlink-to-a-file", _make_symlink, "a symbolic link"),
    ("dangling-symlink", _make_dangling_symlink, "a symbolic link"),
]


@pytest.fixture
def nobody_folder(tmp_path: Path) -> Iterator[Path]:
    """A folder `nobody` owns and can reach (tmp_path's parents are private to root)."""
    if not IS_ROOT:
        yield tmp_path
        return
    folder = Path(tempfile.mkdtemp(prefix="rlcat-outputs-"))
    try:
        os.chown(folder, NOBODY, NOBODY)
        yield folder
    finally:
        shutil.rmtree(folder)


@contextmanager
def _unprivileged() -> Iterator[None]:
    """Be `nobody` for file access: its effective uid and gid, no supplementary groups, and so no
    capabilities (they go with the effective uid 0, and come back with it)."""
    if not IS_ROOT:
        yield
        return
    groups = os.getgroups()
    os.setgroups([])
    os.setegid(NOBODY)
    os.seteuid(NOBODY)
    try:
        yield
    finally:
        os.seteuid(0)
        os.setegid(0)
        os.setgroups(groups)


def _refused(result: Result, target: Path, kind: str) -> None:
    assert result.code == ExitCode.INPUT, f"exit code {result.code}\nstderr:\n{result.err}"
    assert result.out == ""
    assert "Traceback" not in result.err and "internal error" not in result.err
    errors = _errors(result.err, "RLC106")
    assert len(errors) == 1, result.err
    assert errors[0].startswith(f"-o {target} RLC106 error: this is {kind}, not a regular file"), errors[0]
    assert "hint: " in result.err


@pytest.mark.skipif(not IS_ROOT, reason="the as-root case needs root; the unprivileged one runs")
@pytest.mark.usefixtures("system_paths_kept")
@pytest.mark.parametrize(("make", "kind"), [c[1:] for c in NOT_REGULAR], ids=[c[0] for c in NOT_REGULAR])
def test_output_that_is_not_a_regular_file_is_refused_as_root(
    rlcat: Run, tmp_path: Path, make: Callable[[Path], Path], kind: str
) -> None:
    folder = tmp_path / "out"
    folder.mkdir()
    target = make(folder)
    before = {p: _identity(p) for p in [target, *folder.iterdir()]}
    result = rlcat(*COMPILE, "-o", str(target))
    _refused(result, target, kind)
    assert {p: _identity(p) for p in [target, *folder.iterdir()]} == before


@pytest.mark.usefixtures("system_paths_kept")
@pytest.mark.parametrize(("make", "kind"), [c[1:] for c in NOT_REGULAR], ids=[c[0] for c in NOT_REGULAR])
def test_output_that_is_not_a_regular_file_is_refused_unprivileged(
    rlcat: Run, nobody_folder: Path, monkeypatch: pytest.MonkeyPatch, make: Callable[[Path], Path], kind: str
) -> None:
    """The same refusal, not a "permission denied" that depends on who runs rlcat."""
    target = make(nobody_folder)
    for path in nobody_folder.iterdir() if IS_ROOT else []:
        os.lchown(path, NOBODY, NOBODY)
    monkeypatch.chdir(nobody_folder)
    before = {p: _identity(p) for p in [target, *nobody_folder.iterdir()]}
    with _unprivileged():
        assert os.geteuid() == (NOBODY if IS_ROOT else os.getuid())
        result = rlcat(*COMPILE, "-o", str(target))
    _refused(result, target, kind)
    assert {p: _identity(p) for p in [target, *nobody_folder.iterdir()]} == before


def test_validate_report_output_is_refused_the_same_way(rlcat: Run, tmp_path: Path) -> None:
    """`rlcat validate -o` goes through the same writer as compile."""
    target = _make_fifo(tmp_path)
    result = rlcat("validate", "-o", str(target))
    _refused(result, target, "a named pipe (FIFO)")
    assert stat.S_ISFIFO(os.lstat(target).st_mode)


def test_long_file_name_is_written(rlcat: Run, tmp_path: Path) -> None:
    """The temporary file's name is made from the target's; it must stay a legal name too."""
    target = tmp_path / ("p" * 250)
    result = rlcat(*COMPILE, "-o", str(target))
    assert result.code == 0, result.err
    assert [p.name for p in tmp_path.iterdir()] == [target.name]


@pytest.mark.parametrize("flag", ["-o", "--output"])
def test_dash_is_stdout(rlcat: Run, tmp_path: Path, flag: str) -> None:
    printed = rlcat(*COMPILE)
    assert printed.code == 0, printed.err
    dashed = rlcat(*COMPILE, flag, "-")
    assert dashed.code == 0, dashed.err
    assert dashed.out == printed.out != ""
    assert list(tmp_path.iterdir()) == []  # no file named `-`


# --- permissions ---------------------------------------------------------------------------------


@pytest.fixture
def umask() -> Iterator[Callable[[int], None]]:
    """Set the process umask for one test (rlcat runs in-process), and put the old one back."""
    old = os.umask(0o022)

    def set_umask(mask: int) -> None:
        os.umask(mask)

    yield set_umask
    os.umask(old)


@pytest.mark.parametrize(
    ("fmt", "before", "after"),
    [
        ("overrides", 0o640, 0o640),
        ("json", 0o600, 0o600),
        ("overrides", 0o755, 0o755),  # a file that is executable stays so
        ("shell", 0o640, 0o750),  # execute wherever there is read
        ("shell", 0o644, 0o755),
        ("shell", 0o600, 0o700),
        ("shell", 0o200, 0o200),  # nobody may read it: nobody gains execute
    ],
    ids=["plan-0640", "json-0600", "plan-0755", "script-0640", "script-0644", "script-0600", "script-0200"],
)
def test_existing_file_keeps_its_permissions(
    rlcat: Run, tmp_path: Path, fmt: str, before: int, after: int
) -> None:
    target = tmp_path / "plan"
    target.write_text("the old plan\n", encoding="utf-8")
    target.chmod(before)
    result = rlcat(*COMPILE, "--format", fmt, "-o", str(target))
    assert result.code == 0, result.err
    assert target.read_text(encoding="utf-8") == rlcat(*COMPILE, "--format", fmt).out
    assert oct(stat.S_IMODE(target.stat().st_mode)) == oct(after)


@pytest.mark.parametrize(
    ("fmt", "mask", "expected"),
    [
        ("overrides", 0o022, 0o644),
        ("yaml", 0o077, 0o600),
        ("shell", 0o022, 0o755),
        ("shell", 0o027, 0o750),
        ("shell", 0o077, 0o700),
    ],
    ids=["plan-umask-022", "yaml-umask-077", "script-umask-022", "script-umask-027", "script-umask-077"],
)
def test_new_file_gets_the_usual_permissions(
    rlcat: Run, tmp_path: Path, umask: Callable[[int], None], fmt: str, mask: int, expected: int
) -> None:
    umask(mask)
    target = tmp_path / "new" / "plan"
    result = rlcat(*COMPILE, "--format", fmt, "-o", str(target))
    assert result.code == 0, result.err
    assert oct(stat.S_IMODE(target.stat().st_mode)) == oct(expected)


STAND_IN_PYTHON = f"""#!{sys.executable}
import json, os, sys
json.dump(sys.argv[1:], open(os.environ["RECORD_TO"], "w"))
"""


def test_new_launch_script_runs_as_dot_slash(rlcat: Run, tmp_path: Path) -> None:
    result = rlcat(*COMPILE, "--format", "shell", "-o", "launch.sh")
    assert result.code == 0, result.err
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "python3").write_text(STAND_IN_PYTHON, encoding="utf-8")
    (bindir / "python3").chmod(0o755)
    record = tmp_path / "argv.json"
    env = {
        "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}",
        "RECORD_TO": str(record),
        "HOME": str(tmp_path),
    }
    ran = subprocess.run(
        ["./launch.sh", "trainer.save_freq=3"], cwd=tmp_path, env=env, capture_output=True, check=False
    )
    assert ran.returncode == 0, ran.stderr
    argv = json.loads(record.read_text(encoding="utf-8"))
    assert argv[0] == "-m" and argv[-1] == "trainer.save_freq=3"


# --- failed writes: never a short output with exit 0 ---------------------------------------------


def test_stdout_on_a_full_device_is_exit_2(tmp_path: Path) -> None:
    """`rlcat compile ... > /dev/full`: every write fails with ENOSPC."""
    with open("/dev/full", "w", encoding="utf-8") as full:
        proc = _rlcat_process(COMPILE, tmp_path, stdout=full)
    err = proc.stderr.decode()
    assert proc.returncode == ExitCode.INPUT, err
    errors = _errors(err, "RLC106")
    assert len(errors) == 1 and errors[0].startswith("stdout RLC106 error: "), err
    assert "No space left on device" in errors[0]
    assert "Traceback" not in err and "Exception ignored" not in err


@pytest.mark.parametrize(
    ("redirect", "args"),
    [
        (">&-", ["list", "--format", "json"]),
        (">&-", ["compile", "dapo_math_fsdp2_4_4", "--platform", "npu", "--engine", "sglang"]),
        (
            "2>&-",
            ["compile", "dapo_math_fsdp2_4_4", "--platform", "npu", "--engine", "sglang", "-o", "plan.txt"],
        ),
    ],
    ids=["stdout-closed-list", "stdout-closed-compile", "stderr-closed-before-a-note"],
)
def test_a_closed_stream_is_a_reader_gone(tmp_path: Path, redirect: str, args: list[str]) -> None:
    """`rlcat ... >&-`: the stream is closed, not merely unread; 141 as for a pipe whose reader went
    away, quietly, and no plan file when the notes before it could not be shown."""
    shell = ["/bin/sh", "-c", f'exec "$@" {redirect}', "sh", sys.executable, "-m", "rlcat", *args]
    proc = subprocess.run(shell, cwd=tmp_path, env=_env(), capture_output=True, timeout=120, check=False)
    assert proc.returncode == ExitCode.BROKEN_PIPE, proc.stderr.decode()
    assert b"Traceback" not in proc.stdout + proc.stderr
    assert list(tmp_path.iterdir()) == []


def test_closed_stdout_does_not_stop_a_compile_to_a_file(tmp_path: Path) -> None:
    """With stdout closed, the plan file must not land on descriptor 1: it is written as usual."""
    shell = [
        "/bin/sh",
        "-c",
        'exec "$@" >&-',
        "sh",
        sys.executable,
        "-m",
        "rlcat",
        *COMPILE,
        "-o",
        "plan.txt",
    ]
    proc = subprocess.run(shell, cwd=tmp_path, env=_env(), capture_output=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr.decode()
    assert (tmp_path / "plan.txt").read_text(encoding="utf-8") == _rlcat_process(
        COMPILE, tmp_path
    ).stdout.decode()


FILE_SIZE_LIMIT = 1024  # bytes; a plan is a few KiB


def test_file_too_large_mid_write_leaves_the_old_file(tmp_path: Path) -> None:
    """A real short write: with RLIMIT_FSIZE the kernel writes the first KiB, then fails (EFBIG), as
    a disk that fills up mid-write does. The old file stays, whole; no temporary file is left."""
    target = tmp_path / "plan.txt"
    target.write_text("the old plan\n", encoding="utf-8")
    limited = (
        "import resource, sys\n"
        f"resource.setrlimit(resource.RLIMIT_FSIZE, ({FILE_SIZE_LIMIT}, {FILE_SIZE_LIMIT}))\n"
        "from rlcat.cli import run\n"
        "run()\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", limited, *COMPILE, "-o", str(target)],
        cwd=tmp_path,
        env=_env(),
        capture_output=True,
        timeout=120,
        check=False,
    )
    err = proc.stderr.decode()
    assert proc.returncode == ExitCode.INPUT, err
    errors = _errors(err, "RLC106")
    assert len(errors) == 1 and errors[0].startswith(f"-o {target} RLC106 error: "), err
    assert "File too large" in errors[0]
    assert target.read_text(encoding="utf-8") == "the old plan\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plan.txt"]


@pytest.mark.parametrize("existing", [True, False], ids=["replacing-a-file", "new-file"])
def test_disk_full_at_fsync_writes_nothing(
    rlcat: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, existing: bool
) -> None:
    """No mount is possible here, so ENOSPC is raised where network and delayed-allocation file
    systems report it: when the written data is forced to disk."""
    target = tmp_path / "plan.txt"
    if existing:
        target.write_text("the old plan\n", encoding="utf-8")

    def disk_full(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", disk_full)
    result = rlcat(*COMPILE, "-o", str(target))
    assert result.code == ExitCode.INPUT, result.err
    assert result.out == ""
    errors = _errors(result.err, "RLC106")
    assert len(errors) == 1 and "No space left on device" in errors[0], result.err
    assert sorted(p.name for p in tmp_path.iterdir()) == (["plan.txt"] if existing else [])
    if existing:
        assert target.read_text(encoding="utf-8") == "the old plan\n"


# --- a signal in the middle of a write -----------------------------------------------------------

# Runs rlcat's console script with the rename of the finished temporary file held back: the
# driver reports the temporary file's name on READY_FD and waits for the test's signal there.
SIGNAL_DRIVER = """\
import os, signal, sys
from rlcat.cli import run

ready = int(os.environ["READY_FD"])
# as from a terminal: a test runner's worker may have handed its ignored SIGINT down to this process
signal.signal(signal.SIGINT, signal.default_int_handler)

def hold_before_rename(src, dst):
    os.write(ready, f"{src}\\n".encode())
    os.close(ready)
    signal.pause()  # the test sends its signal now; its handler raises and ends the wait
    raise AssertionError("the signal did not stop rlcat before the rename")

os.replace = hold_before_rename
run()
"""


@pytest.mark.parametrize(
    ("signum", "code", "word"),
    [(signal.SIGTERM, TERMINATED, "terminated"), (signal.SIGINT, ExitCode.INTERRUPTED, "interrupted")],
    ids=["sigterm-143", "ctrl-c-130"],
)
@pytest.mark.parametrize("existing", [True, False], ids=["replacing-a-file", "new-file"])
def test_signal_during_a_write_leaves_no_temporary_file(
    tmp_path: Path, signum: int, code: int, word: str, existing: bool
) -> None:
    folder = tmp_path / "out"
    folder.mkdir()
    target = folder / "plan.txt"
    if existing:
        target.write_text("the old plan\n", encoding="utf-8")
    driver = tmp_path / "driver.py"
    driver.write_text(SIGNAL_DRIVER, encoding="utf-8")
    ready_read, ready_write = os.pipe()
    with (tmp_path / "stderr.txt").open("wb") as err_file:
        proc = subprocess.Popen(
            [sys.executable, str(driver), *COMPILE, "-o", str(target)],
            cwd=tmp_path,
            env=_env(READY_FD=str(ready_write)),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=err_file,
            pass_fds=(ready_write,),
        )
        os.close(ready_write)
        try:
            with os.fdopen(ready_read, encoding="utf-8") as ready:
                held = ready.readline().strip()
            assert held, (tmp_path / "stderr.txt").read_text(encoding="utf-8")
            temporary = Path(held)
            # the write is done but not yet in place: the moment a signal must not leave debris
            assert temporary.parent == folder and temporary.name.startswith(".plan.txt.")
            assert temporary.is_file()
            proc.send_signal(signum)
            out, _ = proc.communicate(timeout=120)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    err = (tmp_path / "stderr.txt").read_text(encoding="utf-8")
    assert proc.returncode == code, err
    assert err.splitlines()[-1] == word
    assert "Traceback" not in err and out == b""
    assert sorted(p.name for p in folder.iterdir()) == (["plan.txt"] if existing else [])
    if existing:
        assert target.read_text(encoding="utf-8") == "the old plan\n"


# --- catalog folders -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("entries", "code", "message"),
    [
        (["{tmp}/missing"], "RLC001", "RLCAT_PATH entry {tmp}/missing: no such folder"),
        (["{tmp}/a-file"], "RLC001", "RLCAT_PATH entry {tmp}/a-file: not a folder"),
        (["{tmp}/folder", "{tmp}/missing"], "RLC001", "RLCAT_PATH entry {tmp}/missing: no such folder"),
        (["/"], "RLC105", "the root of the file system is not a catalog folder"),
        (
            ["{tmp}/../../../../../../../../.."],
            "RLC105",
            "the root of the file system is not a catalog folder",
        ),
    ],
    ids=["missing-entry", "file-entry", "missing-after-a-good-one", "root", "root-by-dotdot"],
)
def test_bad_rlcat_path_entry_is_named(
    rlcat: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, entries: list[str], code: str, message: str
) -> None:
    (tmp_path / "a-file").write_text("", encoding="utf-8")
    (tmp_path / "folder").mkdir()
    monkeypatch.setenv("RLCAT_PATH", os.pathsep.join(e.format(tmp=tmp_path) for e in entries))
    result = rlcat("list")
    assert result.code == ExitCode.INPUT, result.err
    assert result.out == "" and "Traceback" not in result.err
    errors = _errors(result.err, code)
    assert len(errors) == 1, result.err
    assert message.format(tmp=tmp_path) in errors[0]
    assert "RLCAT_PATH" in errors[0]


def test_good_rlcat_path_still_works(rlcat: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "folder").mkdir()
    monkeypatch.setenv("RLCAT_PATH", f"{os.pathsep}{tmp_path / 'folder'}{os.pathsep}")  # empty parts skipped
    result = rlcat("list", "--format", "json")
    assert result.code == 0, result.err
    assert "gsm8k_qwen3_8b_fsdp" in {row["name"] for row in json.loads(result.out)}


@pytest.mark.parametrize(
    "command", [["list"], COMPILE, ["show", "gsm8k_qwen3_8b_fsdp"]], ids=["list", "compile", "show"]
)
def test_catalog_root_of_the_file_system_is_refused(rlcat: Run, command: list[str]) -> None:
    result = rlcat(*command, "--catalog", "/")
    assert result.code == ExitCode.INPUT, result.err
    assert result.out == "" and "Traceback" not in result.err
    errors = _errors(result.err, "RLC105")
    assert len(errors) == 1 and errors[0].startswith("--catalog / RLC105 error: "), result.err
    assert "hint: name the folder that holds recipes/" in result.err


# --- rlcat explain -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "hint"),
    [
        ("nonsense.key", None),
        ("trainer.save_frq", "did you mean 'trainer.save_freq'"),
        ("actor_rollout_ref.rollout.nme", "did you mean 'actor_rollout_ref.rollout.name'"),
        ("VLLM_USE_V2", "did you mean 'VLLM_USE_V1'"),
    ],
    ids=["nonsense", "misspelt-verl-key", "misspelt-rollout-key", "misspelt-env-var"],
)
def test_explain_unknown_key_is_bad_input(rlcat: Run, key: str, hint: str | None) -> None:
    """A key that neither the plan nor the release's key index has: bad input, not an answer."""
    known = rlcat("explain", "gsm8k_qwen3_8b_fsdp", "trainer.save_freq", "--engine", "vllm")
    assert known.code == 0, known.err
    release = known.out.splitlines()[1].split(": ", 1)[1]  # "verl 0.9.1, ppo_trainer"
    version, config = release.split(", ")
    result = rlcat("explain", "gsm8k_qwen3_8b_fsdp", key, "--engine", "vllm")
    assert result.code == ExitCode.INPUT, result.out
    assert result.out == ""
    assert _errors(result.err, "RLC401") == [
        f"{key} RLC401 error: not a key of {version} ({config}), an environment variable of the plan "
        f"or a recipe field [{key}]"
    ], result.err
    assert "\n  hint: " in result.err
    if hint is not None:
        assert hint in result.err


class _GoneReader(io.StringIO):
    """stdout whose reader went away (`| head -1` done) or that was closed (`>&-`)."""

    def __init__(self, error: OSError) -> None:
        super().__init__()
        self.error = error

    def write(self, text: str) -> int:
        raise self.error

    def flush(self) -> None:
        raise self.error


@pytest.mark.parametrize("args", [["--help"], ["--version"], ["show", "-h"], ["docs", "--help"]])
@pytest.mark.parametrize(
    "error", [BrokenPipeError(errno.EPIPE, "Broken pipe"), OSError(errno.EBADF, "Bad file descriptor")]
)
def test_help_and_version_to_a_reader_gone_exit_141(
    args: list[str], error: OSError, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Typer writes help, --version and usage itself: a reader gone is 141 there too, as for every
    command's output (not Click's exit 1 for a broken pipe, nor an internal error for a closed
    stream)."""
    from rlcat.cli import main

    monkeypatch.setattr(sys, "stdout", _GoneReader(error))
    assert main(args) == ExitCode.BROKEN_PIPE
