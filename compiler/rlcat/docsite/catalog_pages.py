"""Pages for the guard registry, catalog models and datasets, and the diagnostic codes."""

from __future__ import annotations

from rlcat.diagnostics import CODES, EXIT_CODES_TEXT
from rlcat.docsite.data import Site
from rlcat.docsite.links import ENGINE_LABELS, page, platform_anchor, rel
from rlcat.docsite.md import anchor, code, esc, facts, fence, link, name_code, name_md, table
from rlcat.guards import REGISTRY

FAMILIES = {
    "0": "Reading input",
    "1": "Schema",
    "2": "References",
    "3": "Lowering and compile",
    "4": "verl key index, and verl's own checks",
    "10": "Launch (`rlcat launch`)",
    "11": "Launch scripts (the static reader and `rlcat lint`)",
    "12": "Runs and results",
    "13": "Importing launch scripts and past runs (`rlcat import`)",
}
# What a code's title does not say, where the page that explains it is not a guard's (a team's site
# has the generated pages only: links go to those)
CODE_NOTES = {
    "RLC450": "With `--verl-native` (validate, lint, compile): verl's own start-up checks refused what "
    "rlcat accepts; at the line that set the value, verl's message quoted (the options: "
    "[rlcat lint](cli.md#rlcat-lint); rlcat's guide to them: docs/lint.md, “verl's own checks”).",
    "RLC451": "With `--verl-native`: a plan's checks ran past their time (60 s), the process running "
    "them stopped, or the plan was not handed to verl because an override names code its checks would "
    "run (a `_target_`, a `hydra.` setting); rlcat's docs/lint.md, “verl's own checks”.",
}
GUARD_FAMILIES = {
    "5": "Platform known issues",
    "6": "Model known issues",
    "7": "Configuration invariants",
    "8": "Differences between verl releases",
    "9": "Security",
}


# Guard.verl_startup, as the page says it (the differential tier holds every guard to it)
VERL_STARTUP_SAYS = {
    "refuses": "refuse it too: rlcat says it before the job starts, at the line that sets it",
    "later": "let it through (some or all of it): the run fails, or trains otherwise than asked, "
    "later, as *Why* says",
}


def guard_page(site: Site, guard_id: str) -> str:
    here = page("guard", guard_id)
    cls = REGISTRY[guard_id]
    items = [
        ("id", guard_id),
        ("name", code(cls.name)),
        ("severity", str(cls.severity)),
        ("applies to", esc(cls.affects.describe())),
        ("affected verl versions", esc(cls.affects.verl) if cls.affects.verl else "every release"),
        *([("verl's own start-up checks", VERL_STARTUP_SAYS[cls.verl_startup])] if cls.verl_startup else []),
        ("since", f"rlcat {esc(cls.since)}"),
        ("in the terminal", code(f"rlcat guards {guard_id}")),
        ("silence it", code(f'allow: {{{guard_id}: "the reason"}}') + " in the recipe"),
    ]
    out = [
        # a guard's page is the answer to a search for its symptom: rank it above the pages that
        # merely apply its fix
        "---\nsearch:\n  boost: 3\n---\n",
        f"# {guard_id}: {esc(cls.title)}\n",
        facts(items),
        "## What it checks {#checks}\n",
        cls.docs() + "\n",
        "## Sources {#sources}\n",
        "".join(f"- {esc(s)}\n" for s in cls.source),
        "## In the catalog {#catalog}\n",
    ]
    rows = []
    for c in site.cells:
        for d in c.guards:
            if d.code != guard_id:
                continue
            rows.append(
                [
                    link(
                        name_code(c.recipe),
                        rel(here, page("recipe", c.recipe) + "#" + platform_anchor(c.platform)),
                    ),
                    esc(c.platform),
                    ENGINE_LABELS.get(c.engine, c.engine),
                    str(d.severity),
                    esc(d.message),
                ]
            )
    if rows:
        out.append("Where it fires when the shipped recipes are compiled:\n")
        out.append(table(["recipe", "platform", "engine", "severity", "finding"], rows))
    else:
        out.append(
            "It does not fire on any shipped recipe on any platform (the platform profiles already "
            "set what it checks, or no recipe is in the configurations it covers).\n"
        )
    platforms = [name for name, p in site.platforms.items() if cls.affects.on_platform(p)]
    out.append(
        "\nPlatforms whose profile it can match: "
        + ", ".join(link(code(n), rel(here, page("platform", n) + "#guards")) for n in platforms)
        + ".\n"
    )
    return "\n".join(out)


def guards_index() -> str:
    here = "guards/index.md"
    out = [
        "# Known-issue guards\n",
        "Every compile runs the guards that apply to the recipe and platform. A guard that can repair "
        "the configuration does so (the value's origin then names the guard) and reports it at info "
        "level; otherwise it reports at its severity, and an error stops the compile (exit 1). Each "
        "guard is one class in `compiler/rlcat/guards/<family>/`; its docstring is its page here and "
        "the output of `rlcat guards ID`.\n",
    ]
    for family, title in GUARD_FAMILIES.items():
        ids = [g for g in sorted(REGISTRY) if g[3] == family]
        if not ids:
            continue
        out.append(f"## RLC{family}xx: {title} {{#rlc{family}xx}}\n")
        rows = [
            [
                link(g, rel(here, page("guard", g))),
                str(REGISTRY[g].severity),
                code(REGISTRY[g].name),
                esc(REGISTRY[g].title),
                esc(REGISTRY[g].affects.describe()),
            ]
            for g in ids
        ]
        out.append(table(["id", "severity", "name", "checks", "applies to"], rows))
    return "\n".join(out)


def _used_by(site: Site, here: str, kind: str, name: str) -> str:
    users = [n for n, r in site.recipes.items() if getattr(r.recipe, kind) == name]
    return ", ".join(link(code(n), rel(here, page("recipe", n))) for n in users) or "no recipe yet"


# The config.json facts a model page lists (ModelEntry fields), in the order people read them.
SHAPE_FACTS = (
    "num_attention_heads",
    "num_key_value_heads",
    "hidden_size",
    "num_hidden_layers",
    "vocab_size",
    "num_experts",
    "num_experts_per_tok",
)


def model_page(site: Site, name: str) -> str:
    here = page("model", name)
    m = site.models[name]
    items = [
        ("Hugging Face id", code(m.hf_id) + " (the default model path)"),
        ("family", esc(m.family)),
        ("modality", esc(m.modality)),
        ("size", esc(m.size) + (" (mixture of experts)" if m.moe else "")),
        ("max_position_embeddings", str(m.max_position_embeddings)),
    ]
    if m.extended_max_position_embeddings:
        items.append(
            (
                "extended context",
                f"{m.extended_max_position_embeddings} (used by "
                f"{link('RLC601', rel(here, page('guard', 'RLC601')))})",
            )
        )
    shape = [(f, getattr(m, f)) for f in SHAPE_FACTS if getattr(m, f) is not None]
    if shape:
        guard = link("RLC602", rel(here, page("guard", "RLC602")))
        items += [(f, str(v)) for f, v in shape]
        items.append(("shape from", esc(m.facts_source) + f" (heads used by {guard})"))
    else:
        items.append(("shape", "not verified from a published config.json: RLC602 does not judge it"))
    items.append(("trust_remote_code", "yes" if m.trust_remote_code else "no"))
    items.append(("used by", _used_by(site, here, "model", name)))
    out = [f"# Model {name_md(name)}\n", facts(items)]
    if m.notes:
        out.append(esc(m.notes) + "\n")
    out.append(f"Source: {code(f'catalog/models/{name}.yaml')}\n")
    return "\n".join(out)


def dataset_page(site: Site, name: str) -> str:
    here = page("dataset", name)
    d = site.datasets[name]
    items = [
        ("modality", esc(d.modality)),
        ("train files", ", ".join(code(f) for f in d.train_files)),
        ("validation files", ", ".join(code(f) for f in d.val_files)),
        ("prompt key", code(d.prompt_key)),
    ]
    if d.image_key:
        items.append(("image key", code(d.image_key)))
    items += [
        ("truncation", esc(d.truncation)),
        ("filter overlong prompts", "yes" if d.filter_overlong_prompts else "no"),
        ("reward", esc(d.reward)),
    ]
    if d.size_hint:
        items.append(("training prompts", str(d.size_hint)))
    items.append(("used by", _used_by(site, here, "dataset", name)))
    out = [f"# Dataset {name_md(name)}\n", esc(d.summary) + ".\n", facts(items)]
    out.append("## Preparing it {#preprocessing}\n")
    out.append("In a verl checkout, this writes the parquet files named above:\n")
    out.append(fence(d.preprocessing, "bash"))
    if d.notes:
        out.append(esc(d.notes) + "\n")
    out.append(f"Source: {code(f'catalog/datasets/{name}.yaml')}\n")
    return "\n".join(out)


def models_index(site: Site) -> str:
    here = "models/index.md"
    rows = [
        [
            link(code(n), rel(here, page("model", n))),
            esc(m.hf_id),
            esc(m.size),
            esc(m.modality),
            str(m.max_position_embeddings),
            _used_by(site, here, "model", n),
        ]
        for n, m in site.models.items()
    ]
    return "# Models\n\nThe models recipes name in `model:` (`catalog/models/`).\n\n" + table(
        ["model", "Hugging Face id", "size", "modality", "positions", "used by"], rows
    )


def datasets_index(site: Site) -> str:
    here = "datasets/index.md"
    rows = [
        [
            link(code(n), rel(here, page("dataset", n))),
            esc(d.summary),
            esc(d.modality),
            _used_by(site, here, "dataset", n),
        ]
        for n, d in site.datasets.items()
    ]
    return "# Datasets\n\nThe datasets recipes name in `dataset:` (`catalog/datasets/`).\n\n" + table(
        ["dataset", "summary", "modality", "used by"], rows
    )


def diagnostics_page() -> str:
    """Every diagnostic code, by family (the code's digits before the last two), each with an anchor."""
    here = "diagnostics.md"
    out = [
        "# Diagnostics\n",
        "Every problem rlcat reports is one line, `file:line:col CODE severity: message [key]`, "
        f"followed by a hint. Exit codes: {EXIT_CODES_TEXT}.\n",
    ]
    for family, title in FAMILIES.items():
        out.append(f"## RLC{family}xx: {title} {{#rlc{family}xx}}\n")
        for code_id, (text, severity) in CODES.items():
            if code_id[3:-2] == family:
                out.append(f"### {code_id}: {esc(text)} {{#{anchor(code_id)}}}\n")
                out.append(f"Default severity: {severity}.\n")
                if code_id in CODE_NOTES:
                    out.append(CODE_NOTES[code_id] + "\n")
    out.append("## RLC5xx–RLC9xx: known-issue and security guards {#guards}\n")
    out.append(f"Each guard has its own page ({link('all guards', rel(here, 'guards/index.md'))}).\n")
    for guard_id in sorted(REGISTRY):
        cls = REGISTRY[guard_id]
        out.append(f"### {guard_id}: {esc(cls.title)} {{#{anchor(guard_id)}}}\n")
        out.append(
            f"{str(cls.severity).capitalize()}. See {link(guard_id, rel(here, page('guard', guard_id)))}.\n"
        )
    return "\n".join(out)
