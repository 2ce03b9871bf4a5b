"""`rlcat import` proved through Hydra where the whole-config proof cannot run: the reference scripts
that launch a trainer outside core verl (verl-recipe's) or name an entry config 0.9.1 does not ship,
imported and compiled for cuda, compose against the real verl 0.9.1 tree to the same value on every
key the script sets, and export the same env. Every other launching script is proved on the whole
config, both ways (test_import_whole.py), and its env in tests/cli/test_import.py.

Both sides are composed by the same helper (rlcat.dev.compose). The script's own overrides are
composed with the keys 0.9.1 refuses taken out (each must be one the import reported as left out or
the compile left out); `$HOME` and `$PWD` stand for the user's paths on both sides (the script's
text and rlcat's `${oc.env:HOME}`). A key whose value differs must be one the import's round-trip
report gave a reason for.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from test_import_whole import CORE
from whole_compose import remember_composes

from cli.import_helpers import SCRIPTS, launches_verl
from rlcat.dev import compose as verl_compose
from rlcat.emit.formats import override_texts

# the imports are the round-trip test's (tests/cli/test_import.py), on the same xdist worker
pytestmark = [pytest.mark.compose, pytest.mark.xdist_group("reference-imports")]

VERSION = "0.9.1"
OUTSIDE_CORE = [name for name in SCRIPTS if launches_verl(name) and name not in CORE]


def _key(override: str) -> str:
    return override.split("=", 1)[0].lstrip("+~")


@pytest.mark.parametrize("name", OUTSIDE_CORE)
def test_import_composes_to_the_script_s_values(
    name: str,
    reference_imports: Callable[[str], Any],
    monkeypatch: pytest.MonkeyPatch,
    verl_trees: dict[str, Path],
) -> None:
    remember_composes(monkeypatch)
    monkeypatch.setenv("HOME", "$HOME")  # ${oc.env:HOME} resolves to what the script's text says
    monkeypatch.setenv("PWD", "$PWD")
    done = reference_imports(name)  # the import reads no environment: HOME above changes nothing in it
    compiled = done.report.compiled
    assert compiled is not None, [d.headline() for d in done.report.diagnostics]
    run = done.run
    source = [s.text for s in run.groups.values()] + [s.text for s in run.settings.values()]
    # the script's entry config; one 0.9.1 does not ship (fully_async_dapo_trainer) is composed as
    # the config rlcat chose, which the import reported
    config = run.config_name if run.config_name in verl_compose.ENTRY_DIRS else compiled.plan.config_name
    rejected = {_key(o) for o, _ in verl_compose.rejected_overrides(VERSION, config, source)}
    reasons = {line.what: line.reason for line in done.report.lines if not line.same}
    renamed = {line.what: line.as_key for line in done.report.lines if line.same and line.as_key}
    said = reasons.keys() | {s.key for s in compiled.dropped} | done.imported.solution.adjusted.keys()
    assert rejected <= said, rejected - said
    accepted = [o for o in source if _key(o) not in rejected]
    theirs = verl_compose.flatten(verl_compose.compose(VERSION, config, accepted), resolve=True)
    ours = verl_compose.flatten(
        verl_compose.compose(VERSION, compiled.plan.config_name, override_texts(compiled)), resolve=True
    )
    compared: dict[str, Any] = {}
    for key in dict.fromkeys(_key(o) for o in accepted if "=" in o and "." in _key(o)):
        if key.split(".", 1)[0] == "hydra":
            continue
        leaves = {k: v for k, v in theirs.items() if k == key or k.startswith(key + ".")}
        for leaf, value in leaves.items():
            # a key the release names otherwise is compared under that name (the report said so)
            got = ours.get(renamed[key] + leaf[len(key) :] if key in renamed else leaf, "<missing>")
            if got != value:
                assert reasons.get(key), f"{key}: recipe {got!r}, script {value!r}, and no reason given"
            compared[leaf] = value
    assert compared or not accepted
    assert run.env.items() <= compiled.env_vars.items()
