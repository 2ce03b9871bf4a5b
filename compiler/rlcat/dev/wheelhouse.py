"""Development data that tests need but must not download themselves: the wheelhouse.

The pre-commit test installs rlcat's hook the way a user's machine does — pre-commit creates a fresh
virtualenv and runs ``pip install .`` in a clone of this repository — but tests run without network.
:func:`fetch_wheelhouse` downloads, once and with network (``rlcat dev fetch-verl``), every
distribution that install needs into :func:`wheelhouse_dir`; the test then points pip at it with
``PIP_NO_INDEX=1 PIP_FIND_LINKS=<wheelhouse>``.

What ``pip install .`` needs in a fresh virtualenv:

- rlcat's runtime dependencies (``[project].dependencies`` of ``pyproject.toml``) and theirs;
- the build backend (``[build-system].requires``: hatchling) and its dependencies, because pip
  builds the wheel in an isolated environment that it fills from the same index;
- nothing for the virtualenv itself: virtualenv seeds pip from wheels it embeds, and a
  ``pyproject.toml`` build with hatchling needs neither setuptools nor wheel.

A second wheelhouse, :func:`docs_wheelhouse_dir`, holds the ``docs`` extra (MkDocs, Material,
matplotlib and theirs), so that the team-docs test installs ``rlcat[docs]`` offline as a team does.

Wheels are specific to the interpreter and platform (pydantic-core, PyYAML), so the completion
marker records them next to the requirement list: a change of either fetches again.
"""

from __future__ import annotations

import json
import platform
import re
import subprocess
import sys
import sysconfig
from importlib.metadata import requires
from pathlib import Path

from rlcat.catalog import repo_root
from rlcat.dev.trees import trees_root
from rlcat.files import replace_dir

#: The build backend pip needs to build rlcat from source (pyproject.toml [build-system].requires).
BUILD_REQUIREMENTS: tuple[str, ...] = ("hatchling>=1.25",)
#: Written last into a complete wheelhouse: the requirement list and the interpreter it serves.
MARKER = ".complete.json"


def wheelhouse_dir() -> Path:
    """The folder of wheels: ``<trees root>/wheelhouse`` (``.verl/wheelhouse`` in a checkout)."""
    return trees_root() / "wheelhouse"


def dependencies_from_text(text: str) -> list[str]:
    """``[project].dependencies`` of a pyproject.toml, without a TOML parser (Python 3.10 has none).

    Enough for an array of quoted strings, one or more a line, with comments, extras and markers,
    which is what rlcat's own pyproject.toml holds.
    """
    tokens = re.compile(r"\"([^\"]*)\"|'([^']*)'|#.*|\]")
    deps: list[str] = []
    section, inside = "", False
    for text_line in text.splitlines():
        line = text_line
        if not inside:
            header = re.match(r"\s*\[([^\[\]]+)\]\s*(#.*)?$", line)
            if header:
                section = header.group(1).strip()
                continue
            start = re.match(r"\s*dependencies\s*=\s*\[", line)
            if section != "project" or start is None:
                continue
            line, inside = line[start.end() :], True
        for token in tokens.finditer(line):
            if token.group(0).startswith("#"):
                break
            if token.group(0) == "]":
                return deps
            deps.append(token.group(1) if token.group(1) is not None else token.group(2))
    return deps


def _pyproject_dependencies(text: str) -> list[str]:
    if sys.version_info >= (3, 11):
        import tomllib

        deps = tomllib.loads(text).get("project", {}).get("dependencies", [])
        return [str(d) for d in deps]
    return dependencies_from_text(text)


def runtime_requirements() -> list[str]:
    """rlcat's runtime dependencies: from the checkout's pyproject.toml, else the installed metadata."""
    root = repo_root()
    if root is not None:
        return _pyproject_dependencies((root / "pyproject.toml").read_text(encoding="utf-8"))
    return [r for r in requires("rlcat") or [] if not re.search(r"\bextra\s*==", r)]


def requirements() -> list[str]:
    """Everything ``pip install <rlcat checkout>`` downloads in a fresh virtualenv, as requirements."""
    return [*runtime_requirements(), *BUILD_REQUIREMENTS]


def docs_wheelhouse_dir() -> Path:
    """The folder of the ``docs`` extra's wheels: ``<trees root>/wheelhouse-docs``."""
    return trees_root() / "wheelhouse-docs"


def docs_requirements() -> list[str]:
    """The ``docs`` extra of the checkout's pyproject.toml (the wheelhouses are fetched in a checkout)."""
    root = repo_root()
    if root is None:
        return []
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8")).get("project", {})
    return [str(r) for r in project.get("optional-dependencies", {}).get("docs", [])]


def _stamp(reqs: list[str]) -> dict[str, object]:
    return {
        "requirements": reqs,
        "python": f"{sys.implementation.name}{sys.version_info[0]}.{sys.version_info[1]}",
        "platform": sysconfig.get_platform(),
        "machine": platform.machine(),
    }


def is_complete(path: Path | None = None, reqs: list[str] | None = None) -> bool:
    """Tell whether the wheelhouse holds everything for the current requirements and interpreter."""
    marker = (path or wheelhouse_dir()) / MARKER
    try:
        return bool(json.loads(marker.read_text(encoding="utf-8")) == _stamp(reqs or requirements()))
    except (OSError, ValueError):
        return False


def pip_command(dest: Path, reqs: list[str], quiet: bool = True) -> list[str]:
    """``pip download`` of ``reqs`` and their dependencies, as wheels only, into ``dest``.

    ``--only-binary=:all:`` so that nothing in the wheelhouse needs a further build backend
    (setuptools) offline; the one source build is rlcat itself, with hatchling from the wheelhouse.
    """
    cmd = [sys.executable, "-m", "pip", "download", "--disable-pip-version-check"]
    if quiet:
        cmd.append("-q")
    return [*cmd, "--only-binary=:all:", "-d", str(dest), *reqs]


def fetch_wheelhouse(quiet: bool = True, dest: Path | None = None, reqs: list[str] | None = None) -> Path:
    """Download the wheelhouse (network), unless it is already complete; return its folder. `dest`
    and `reqs` default to the runtime wheelhouse (:func:`wheelhouse_dir`, :func:`requirements`).

    Idempotent: skipped when the marker says the wheelhouse is complete for the same requirements and
    interpreter. pip downloads into a fresh folder next to the final one, which replaces it only once
    pip succeeded, so an interrupted download never passes for a complete wheelhouse.

    Raises:
        subprocess.CalledProcessError: pip failed (no network, no wheel for this platform, ...).
    """
    folder = dest or wheelhouse_dir()
    wanted = requirements() if reqs is None else reqs
    if is_complete(folder, wanted):
        return folder

    def download(staging: Path) -> None:
        subprocess.run(pip_command(staging, wanted, quiet=quiet), check=True)
        (staging / MARKER).write_text(json.dumps(_stamp(wanted), indent=2) + "\n", encoding="utf-8")

    replace_dir(folder, f".{folder.name}-", download)
    return folder
