"""`rlcat guards`: the registry as a table or JSON, and one guard's docs page."""

from __future__ import annotations

import json

from .catalog import Catalog
from .diagnostics import RlcatError, diag, suggestion_hint
from .guards import REGISTRY


def list_guards(platform: str | None, fmt: str, catalog: Catalog) -> str:
    guards = [REGISTRY[i] for i in sorted(REGISTRY)]
    if platform is not None:
        from .resolve import load_platform

        profile, _ = load_platform(platform, catalog)
        guards = [g for g in guards if g.affects.on_platform(profile)]
    if fmt == "json":
        return (
            json.dumps(
                [
                    {
                        "id": g.id,
                        "name": g.name,
                        "title": g.title,
                        "severity": str(g.severity),
                        "affects": g.affects.describe(),
                        "source": list(g.source),
                        "since": g.since,
                        "docs": g.docs(),
                    }
                    for g in guards
                ],
                indent=2,
                ensure_ascii=False,
            )
            + "\n"
        )
    from .listing import render_table

    return render_table(
        ["id", "severity", "name", "title", "affects"],
        [[g.id, str(g.severity), g.name, g.title, g.affects.describe()] for g in guards],
    )


def guard_docs(guard_id: str) -> str:
    cls = REGISTRY.get(guard_id.upper())
    if cls is None:
        by_name = {g.name: g for g in REGISTRY.values()}
        cls = by_name.get(guard_id)
    if cls is None:
        raise RlcatError(
            [
                diag(
                    "RLC202",
                    f"unknown guard '{guard_id}'",
                    hint=suggestion_hint(guard_id, [*REGISTRY, *(g.name for g in REGISTRY.values())]),
                )
            ]
        )
    head = f"{cls.id} {cls.name} ({cls.severity})\n{cls.title}\n\n"
    meta = f"\n\nAffects: {cls.affects.describe()}\nSince: rlcat {cls.since}\nSources:\n" + "".join(
        f"  - {s}\n" for s in cls.source
    )
    return head + cls.docs() + meta
