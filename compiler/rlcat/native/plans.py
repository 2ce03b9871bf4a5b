"""A compiled plan as an :class:`~rlcat.native.checks.Ask` (`validate` and `compile` with
`--verl-native`): the overrides as rlcat emits them, each key at the origin that set its value."""

from __future__ import annotations

from rlcat.compile.assemble import Compiled
from rlcat.diagnostics import Where
from rlcat.emit.formats import override_text, override_texts
from rlcat.native.checks import Ask
from rlcat.native.models import stand_in
from rlcat.verl.names import ARF


def plan_ask(compiled: Compiled, at: Where) -> Ask:
    """What verl is asked to start for `compiled`; a refusal no key explains points `at` the recipe
    given (its file, or the argument that named it)."""
    origins: dict[str, Where] = {o.key: o.setting.origin.position() for o in compiled.overrides}
    values = {o.key: override_text(o).split("=", 1)[-1] for o in compiled.overrides}
    path = next((str(o.setting.value) for o in compiled.overrides if o.key == f"{ARF}.model.path"), "")
    overrides = tuple(override_texts(compiled))
    return Ask(compiled.plan.config_name, overrides, stand_in(path), origins, at, values)
