"""Locate and fetch the config trees of real verl releases.

rlcat never imports verl (its ``__init__`` pulls in torch). What it needs from a release is the YAML
config tree (and, for the key index, a grep over the release's Python source), which is exactly what
``pip install --no-deps --target DIR verl==X`` extracts from the PyPI wheel. Each release gets its own
folder under :func:`trees_root`, so ``tree_dir(v) / "verl" / "trainer" / "config"`` is the tree.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

from rlcat.catalog import repo_root
from rlcat.files import replace_dir

# The releases rlcat indexes and tests against. Order is oldest first; it is also the order in
# which the index generator writes them.
VERL_VERSIONS: tuple[str, ...] = ("0.7.1", "0.9.0", "0.9.1")

#: Environment variable that points at a folder of pre-fetched trees (CI caches, shared machines).
TREES_ENV = "RLCAT_VERL_TREES"

#: The command users run to populate the trees (wired into the CLI as ``rlcat dev fetch-verl``).
FETCH_COMMAND = "rlcat dev fetch-verl"

_CONFIG_SUBDIR = Path("verl", "trainer", "config")


def trees_root() -> Path:
    """Return the folder holding one sub-folder per fetched verl release.

    ``$RLCAT_VERL_TREES`` wins when set; otherwise ``<repo root>/.verl`` (gitignored), where the repo
    root is the folder with rlcat's ``pyproject.toml`` above this file; outside a checkout the
    fallback is ``./.verl`` relative to the current directory.
    """
    env = os.environ.get(TREES_ENV)
    if env:
        return Path(env).expanduser()
    root = repo_root()
    return (root if root is not None else Path.cwd()) / ".verl"


def tree_dir(version: str) -> Path:
    """Return the ``pip --target`` folder for ``version`` (it contains the ``verl/`` package)."""
    return trees_root() / version


def config_dir(version: str) -> Path:
    """Return ``verl/trainer/config`` inside the tree of ``version`` (it may not exist yet)."""
    return tree_dir(version) / _CONFIG_SUBDIR


def is_fetched(version: str) -> bool:
    """Tell whether the tree of ``version`` is present (its trainer config folder exists)."""
    return config_dir(version).is_dir()


def pip_command(version: str, target: Path, quiet: bool = True) -> list[str]:
    """Return the pip command line that extracts the ``verl==version`` wheel into ``target``.

    ``--no-deps`` because only the files of verl itself are wanted (its dependencies include torch).
    """
    cmd = [sys.executable, "-m", "pip", "install", "--no-deps", "--disable-pip-version-check"]
    if quiet:
        cmd.append("-q")
    cmd += ["--target", str(target), f"verl=={version}"]
    return cmd


def fetch(versions: Iterable[str] = VERL_VERSIONS, quiet: bool = True) -> list[Path]:
    """Make sure the trees of ``versions`` exist, installing missing ones with pip.

    Idempotent: a release whose config folder already exists is skipped. pip writes into a fresh
    temporary folder next to the final one, which is renamed into place only once pip succeeded, so
    an interrupted download never leaves a half-populated tree that later runs would mistake for a
    complete one. Returns the tree folders of all requested versions, in the order given.

    Raises:
        subprocess.CalledProcessError: pip failed (no network, unknown version, ...).
    """
    dirs: list[Path] = []
    for version in versions:
        dest = tree_dir(version)
        if not is_fetched(version):  # a leftover without a config folder is replaced

            def install(staging: Path, version: str = version) -> None:
                subprocess.run(pip_command(version, staging, quiet=quiet), check=True)
                if not (staging / _CONFIG_SUBDIR).is_dir():
                    raise FileNotFoundError(
                        f"verl=={version} installed into {staging} but has no {_CONFIG_SUBDIR.as_posix()}"
                    )

            replace_dir(dest, f".{version}-", install)
        dirs.append(dest)
    return dirs


def require_tree(version: str) -> Path:
    """Return the tree folder of ``version`` or raise a ``FileNotFoundError`` that says how to fetch it.

    Tests and the index generator call this instead of :func:`fetch` so that they never touch the
    network on their own.
    """
    if is_fetched(version):
        return tree_dir(version)
    known = "" if version in VERL_VERSIONS else f" (rlcat knows {', '.join(VERL_VERSIONS)})"
    raise FileNotFoundError(
        f"verl {version} config tree not found at {config_dir(version)}{known}. "
        f"Fetch it with `{FETCH_COMMAND}` (or set ${TREES_ENV} to a folder holding "
        f"<version>/verl/trainer/config)."
    )
