from __future__ import annotations

from collections.abc import Iterator

from rlcat.diagnostics import Severity
from rlcat.guards.base import Context, Finding, Guard, register
from rlcat.model.plan import REMOVED
from rlcat.syntax.hydra_value import render_or_repr

# the recipe's escape hatches (what they set is not a typed field's), and no field at all
UNTYPED = ("overrides", "env", "")
# fields that name a catalog entry: its values are the entry's, which a recipe does not set itself
ENTRIES = ("model", "dataset")


@register
class OverridesShadowAField(Guard):
    """An `overrides:` entry replaces the value a typed field of the recipe gives the same key.

    **Why**: `overrides:` is the escape hatch for keys rlcat does not model. When it sets a key a
    typed field sets too, the typed field still reads as the recipe's setting (in `rlcat show`, the
    docs, `rlcat diff` of two recipes, every guard that judges the field) while verl receives the
    override: the recipe says one thing and runs another, and the checks that know the field (batch
    arithmetic, GPU layout, the platform's tweaks) judge a value verl never sees. Setting the field
    keeps one value, checked. Not reported: a command-line `--override` (the person's own choice), a
    key no field sets, a value from the model or dataset entry, and one key of several a field sets
    (the field cannot say that one alone: the escape hatch's own use).

    **Bad**:

    ```yaml
    batch:
      train_batch_size: 256
    overrides:
      data.train_batch_size: 512     # verl trains with 512; the recipe says 256
    ```

    **Good**:

    ```yaml
    batch:
      train_batch_size: 512
    ```
    """

    id = "RLC710"
    name = "overrides_shadow_a_field"
    title = "an overrides: entry replaces a typed field's value"
    severity = Severity.WARNING
    source = ("rlcat's recipe schema: `overrides:` is for keys no typed field sets (docs/recipes.md)",)
    since = "0.1.0"

    def check(self, ctx: Context) -> Iterator[Finding]:
        shadowed: dict[str, list[str]] = {}  # typed field → the keys an override took from it
        for key, history in ctx.plan.overrides.items():
            final = history.final
            if final.value is REMOVED or _root(final.origin.field) != "overrides":
                continue
            typed = [e for e in history.entries[:-1] if _root(e.origin.field) not in UNTYPED]
            if typed:
                shadowed.setdefault(str(typed[-1].origin.field), []).append(key)
        for field, keys in shadowed.items():
            if field in ENTRIES or set(keys) != _keys_set_by(ctx, field):
                continue  # a catalog entry's value, or one key of several: the escape hatch's own use
            for key in keys:
                history = ctx.plan.overrides[key]
                typed_value = next(e.value for e in reversed(history.entries[:-1]) if e.origin.field == field)
                given, typed_text = render_or_repr(history.final.value), render_or_repr(typed_value)
                yield Finding(
                    f"overrides: {key}={given} replaces the value recipe field {field} gives it "
                    f"({typed_text}): the recipe reads one value, verl runs another",
                    key=key,
                    hint=f"set {field} instead, and drop the override (overrides: is for keys no field sets)",
                )


def _root(field: str | None) -> str:
    return (field or "").split(".", 1)[0]


def _keys_set_by(ctx: Context, field: str) -> set[str]:
    """Every key some value of `field` went to (a field may set several: one for each role)."""
    return {
        key
        for key, history in ctx.plan.overrides.items()
        if any(e.origin.field == field for e in history.entries)
    }
