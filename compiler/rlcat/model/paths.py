"""Placeholders in the paths of catalog entries and recipes: the one rule for what rlcat resolves at
launch and what it refuses.

verl opens a path as written: it expands neither `~` nor shell variables, so `$PWD/data/x.parquet`
would reach it as those characters. A path may start with the home folder (`~`, `$HOME`, `${HOME}`)
or the launch folder (`$PWD`, `${PWD}`): lowering turns that start into OmegaConf's
`${oc.env:HOME}` or `${oc.env:PWD}`, resolved where verl resolves its config. Any other `$NAME`,
`${...}` or `~user` is refused where the path is written (file, line, key).
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator

# the variable a path's leading placeholder names, and the path after it
_LEADING = re.compile(r"^(?:(~)|\$(HOME|PWD)|\$\{(HOME|PWD)\})(?=/|$)")
_VARIABLE = re.compile(r"\$(?:\{[^}]*\}?|[A-Za-z_][A-Za-z0-9_]*)")


def split_placeholder(path: str) -> tuple[str | None, str]:
    """("HOME", "/x") for `~/x`, `$HOME/x` or `${HOME}/x`; ("PWD", "/x") for `$PWD/x` or `${PWD}/x`;
    (None, path) for a path without a leading placeholder."""
    found = _LEADING.match(path)
    if found is None:
        return None, path
    tilde, bare, braced = found.groups()
    return ("HOME" if tilde else bare or braced), path[found.end() :]


def placeholder_problem(path: str) -> str | None:
    """Why rlcat refuses `path` (a placeholder verl would receive as text), or None."""
    variable, rest = split_placeholder(path)
    if variable is None and path.startswith("~"):
        what = f"'{path.split('/', 1)[0]}' (another user's home) is not expanded"
    elif (found := _VARIABLE.search(rest)) is not None:
        what = f"'{found.group()}' is not expanded"
    else:
        return None
    return (
        f"{what}: verl opens the path as written. Write the path out, or start it with ~, $HOME or "
        "$PWD, which rlcat resolves where verl runs"
    )


def _refuse_placeholders(path: str) -> str:
    problem = placeholder_problem(path)
    if problem is not None:
        raise ValueError(problem)
    return path


# A path verl opens (data files, a model repository or folder): placeholders checked by the one rule.
LaunchPath = Annotated[str, AfterValidator(_refuse_placeholders)]
