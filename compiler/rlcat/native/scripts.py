"""A launch script's launch as an :class:`~rlcat.native.checks.Ask` (`lint --verl-native`): its
overrides as the script hands them to verl, each key at its line and column."""

from __future__ import annotations

from rlcat.diagnostics import Where
from rlcat.native.checks import Ask
from rlcat.native.models import stand_in
from rlcat.scripts import Launch
from rlcat.survey.lint_scripts import ENTRY_CONFIGS, entry_module
from rlcat.verl.names import ARF


def launch_ask(file: str, launch: Launch) -> Ask | None:
    """What verl is asked to start for `launch`, or None for a launch rlcat cannot hand verl as the
    script does: an entrypoint it does not know, or a `--config-path` of the script's own. Overrides
    only running the script would tell (RLC1102) are left out: verl keeps its defaults there."""
    entrypoint = entry_module(launch)
    if entrypoint not in ENTRY_CONFIGS or launch.config_path is not None:
        return None
    config = launch.config_name or ENTRY_CONFIGS[entrypoint]
    known = [o for o in launch.overrides if o.known and o.key.split(".", 1)[0] != "hydra"]
    origins: dict[str, Where] = {o.key: {"file": file, "line": o.line, "col": o.col} for o in known}
    values = {o.key: o.value_text or "" for o in known}
    at: Where = {"file": file, "line": launch.line, "col": launch.col}
    path = values.get(f"{ARF}.model.path", "")
    return Ask(config, tuple(o.text for o in known), stand_in(path), origins, at, values)
