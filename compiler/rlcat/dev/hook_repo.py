"""rlcat's pre-commit hooks installed as a user's machine installs them, offline, in a throwaway folder.

A team's `.pre-commit-config.yaml` names a git repository of rlcat (`repo:`, `rev:`); pre-commit
clones it and builds the hook's virtualenv with `pip install .`. :func:`source_repo` makes that
repository from this checkout's working tree (committed or not), so the hooks file and the code are
the ones under test, and :func:`bare_mirror` the bare mirror of it at a tag that a team without
network reaches (`rlcat init --rlcat-source git+file://MIRROR@TAG`); :func:`offline_env` is the
environment pre-commit runs in, pip taking every distribution from the wheelhouse (wheelhouse.py,
fetched by `rlcat dev fetch-verl`), and :func:`commit` a `git commit` that runs the hooks in it. The
pre-commit tests (tests/e2e/test_precommit.py, test_team_repo.py) and the hook's benchmark
(bench/precommit_lint.py) use them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from rlcat.catalog import repo_root
from rlcat.dev.wheelhouse import wheelhouse_dir

# What a checkout holds that is not part of rlcat's source (mirrors .gitignore).
TOP_LEVEL_NOT_SOURCE = {".git", ".verl", ".venv", "build", "dist", "site"}
ANYWHERE_NOT_SOURCE = shutil.ignore_patterns(
    "__pycache__", "*.egg-info", ".*_cache", ".hypothesis", "artifacts"
)


def clean_env(**extra: str) -> dict[str, str]:
    """The caller's environment without settings that would leak into git, pip or the hook's venv,
    and `extra`."""
    leaky = ("GIT_", "PIP_", "PRE_COMMIT", "VIRTUALENV_", "RLCAT_PATH")
    env = {k: v for k, v in os.environ.items() if not k.startswith(leaky)}
    for name in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV"):
        env.pop(name, None)
    return {**env, **extra}


def offline_env(scratch: Path) -> dict[str, str]:
    """pre-commit's environment for an offline hook install: its home, pip's cache and virtualenv's
    data in `scratch`, and pip reaching nothing but the wheelhouse (check `wheelhouse.is_complete`
    first)."""
    return clean_env(
        PRE_COMMIT_HOME=str(scratch / "pre-commit-home"),
        PIP_NO_INDEX="1",
        PIP_FIND_LINKS=str(wheelhouse_dir()),
        PIP_CONFIG_FILE=os.devnull,  # no pip.conf: its index or options must not matter
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        PIP_CACHE_DIR=str(scratch / "pip-cache"),
        VIRTUALENV_OVERRIDE_APP_DATA=str(scratch / "virtualenv-app-data"),
        VIRTUALENV_NO_PERIODIC_UPDATE="1",
    )


def git(cwd: Path, *args: str) -> str:
    """Run git in `cwd` with a fixed identity and no signing; its output. RuntimeError if it fails."""
    run = _git(cwd, clean_env(), args)
    if run.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} in {cwd}: {run.stderr}")
    return run.stdout.strip()


def commit(cwd: Path, env: dict[str, str], message: str) -> subprocess.CompletedProcess[str]:
    """`git commit -m message` in `cwd` with git's hooks (pre-commit's) run in `env`, as a user's
    commit runs them: the completed process, whatever its exit code."""
    return _git(cwd, env, ("commit", "-q", "-m", message))


def _git(cwd: Path, env: dict[str, str], args: tuple[str, ...]) -> subprocess.CompletedProcess[str]:
    identity = ["-c", "user.name=rlcat test", "-c", "user.email=test@rlcat.invalid"]
    return subprocess.run(
        ["git", *identity, "-c", "commit.gpgsign=false", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=900,
    )


def source_repo(dest: Path) -> str:
    """A git repository at `dest` holding this checkout's working tree in one commit; the commit.

    A copy rather than a clone, so that the hooks file and the code are checked as they are now.
    """
    root = repo_root()
    if root is None:
        raise FileNotFoundError("not inside an rlcat checkout: there is no source to install the hooks from")

    def not_source(folder: str, names: list[str]) -> set[str]:
        ignored = set(ANYWHERE_NOT_SOURCE(folder, names))
        return ignored | (TOP_LEVEL_NOT_SOURCE & set(names) if Path(folder) == root else set())

    shutil.copytree(root, dest, ignore=not_source)
    git(dest, "init", "-q")
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "--no-verify", "-m", "rlcat under test")
    return git(dest, "rev-parse", "HEAD")


def bare_mirror(source: Path, dest: Path, tag: str) -> str:
    """`git clone --bare` of the repository `source` at `dest`, after tagging its HEAD `tag`; the
    mirror's file:// URL, as pip and pre-commit both read it."""
    git(source, "tag", tag)
    git(dest.parent, "clone", "-q", "--bare", str(source), str(dest))
    return dest.resolve().as_uri()
