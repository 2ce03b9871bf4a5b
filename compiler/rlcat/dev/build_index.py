"""Generate the verl key index (``schemas/verl/<version>/*.json``) from real release config trees.

For each verl release and each entry config rlcat targets, the generator composes the config with
Hydra (see :mod:`rlcat.dev.compose`) and records every leaf key with its default and type, the
dicts that accept new keys ("open" dicts) and the config groups with their options. The compile
path reads these files instead of composing, so it never needs Hydra or a verl tree; the freshness
test regenerates them in memory and compares bytes.

``rlcat dev verl-index`` (cli/dev.py) regenerates it, ``--check`` verifies it (exit status 1 and a
diff summary when stale).
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rlcat.catalog import repo_root
from rlcat.dev.annotations import refused_values, union_types
from rlcat.dev.compose import compose, flatten
from rlcat.dev.renames import RENAMES_FILE, reference_renames, renames_doc
from rlcat.dev.renames import render as render_renames
from rlcat.dev.trees import VERL_VERSIONS, require_tree
from rlcat.verl.index import index_file_name
from rlcat.verl.names import ENTRY_DIRS

FORMAT = 1

#: The command that regenerates the index (printed when the check fails).
REGENERATE_COMMAND = "rlcat dev verl-index"

#: Entry configs indexed for every release, in manifest order.
BASE_ENTRIES: tuple[str, ...] = (
    "ppo_trainer",
    "ppo_megatron_trainer",
    "fully_async_ppo_trainer",
    "fully_async_ppo_megatron_trainer",
    "one_step_off_ppo_trainer",
    "one_step_off_ppo_megatron_trainer",
)

#: Group-override variants: (entry config, group, option). A variant is indexed for a release only
#: when the option's YAML exists in that release's tree, so the set follows the releases without a
#: per-version table (verl 0.9 added ``model_engine/megatron.yaml``; 0.7.1 has no such option).
GROUP_VARIANTS: tuple[tuple[str, str, str], ...] = (
    ("ppo_trainer", "model_engine", "megatron"),
    # VeOmni's engine, which a recipe selects through `overrides: {model_engine: veomni}`
    ("ppo_trainer", "model_engine", "veomni"),
)

#: Dicts that verl reads with ``.get()`` although no YAML of the release defines them, mapped to
#: the source snippet that proves the read. Hydra needs ``+`` to add keys under such a dict
#: (``+reward.reward_kwargs.overlong_buffer_cfg.len=4096`` is how DAPO's reward manager is
#: configured), so the compiler must know the dict is open even though composing never shows it.
#: Composition cannot discover these, hence a declared table; but an entry is only emitted for a
#: release whose Python source contains the snippet (and whose config has the parent dict), so the
#: index stays derived from the release itself. The key is recorded in ``open`` only, never in
#: ``keys``: it has no default in the config.
OPTIONAL_DICTS: dict[str, str] = {
    "reward.reward_kwargs": 'config.reward.get("reward_kwargs"',
}

#: Last key segments that name dicts forwarded verbatim to another library (kwargs, model config
#: overrides): their keys are open-ended even when the YAML lists a few defaults. Dicts that carry
#: a ``_target_`` are excluded (see index_entry).
_OPEN_NAME = re.compile(r"^(override_.*|.*_kwargs|kwargs|kw_args)$")

_VERSION_DIR = re.compile(r"^\d+\.\d+(\.\d+)?([.\w-]*)$")

_TYPES = ("bool", "int", "float", "str", "list", "dict", "null", "missing", "any")


@dataclass(frozen=True)
class Entry:
    """One index file: an entry config composed with fixed group overrides."""

    config_name: str
    group_overrides: tuple[str, ...] = ()

    @property
    def file_name(self) -> str:
        """Return the JSON file name, e.g. ``ppo_trainer.model_engine-megatron.json``."""
        return index_file_name(self.config_name, self.group_overrides)


def entries_for(version: str) -> list[Entry]:
    """Return the index entries of ``version``: the base entries plus the variants its tree offers."""
    tree = require_tree(version)
    out = [Entry(name) for name in BASE_ENTRIES]
    for config_name, group, option in GROUP_VARIANTS:
        group_dir = tree / ENTRY_DIRS[config_name] / group
        if (group_dir / f"{option}.yaml").is_file():
            out.append(Entry(config_name, (f"{group}={option}",)))
    return out


def default_out_dir() -> Path:
    """Return ``<repo>/schemas/verl`` of the rlcat checkout (the generator is a developer tool)."""
    root = repo_root()
    if root is None:
        raise FileNotFoundError("not inside an rlcat checkout, whose schemas/verl/ the index is written to")
    return root / "schemas" / "verl"


def _hydra_version() -> str:
    """major.minor only: a patch release of hydra-core must not make every stored index stale."""
    import hydra

    return ".".join(str(hydra.__version__).split(".")[:2])


def _check_wheel(version: str, tree: Path) -> None:
    """Refuse to index a tree that is not the extracted ``verl==version`` wheel.

    The index claims its source is that wheel; a tree from another release (a mislabelled
    ``$RLCAT_VERL_TREES`` folder) would silently publish the wrong keys under the wrong version.
    """
    if not (tree / f"verl-{version}.dist-info").is_dir():
        found = sorted(p.name for p in tree.glob("verl-*.dist-info"))
        raise FileNotFoundError(
            f"{tree} is not the verl=={version} wheel (dist-info found: {found or 'none'})"
        )


def groups_of(version: str, config_name: str) -> dict[str, list[str]]:
    """Return the config groups visible to ``config_name`` and their options.

    Groups are the folders (nested ones as ``a/b``) holding YAML files under the trainer config
    folder and, for secondary entries, under the entry's own folder too (both are on Hydra's
    search path); options are the YAML file stems, sorted.
    """
    tree = require_tree(version)
    roots = {tree / "verl" / "trainer" / "config", tree / ENTRY_DIRS[config_name]}
    groups: dict[str, set[str]] = {}
    for root in sorted(roots):
        for yaml_file in root.rglob("*.yaml"):
            rel = yaml_file.parent.relative_to(root)
            if rel == Path("."):
                continue  # primary configs, not a group
            groups.setdefault(rel.as_posix(), set()).add(yaml_file.stem)
    return {name: sorted(options) for name, options in sorted(groups.items())}


def _source_contains(version: str, snippet: str, cache: dict[tuple[str, str], bool]) -> bool:
    """Tell whether any ``.py`` file of the release contains ``snippet`` (cached per release)."""
    if (version, snippet) not in cache:
        found = False
        for py in sorted((require_tree(version) / "verl").rglob("*.py")):
            if snippet in py.read_text(encoding="utf-8", errors="replace"):
                found = True
                break
        cache[(version, snippet)] = found
    return cache[(version, snippet)]


def _dict_paths(container: dict[str, Any], prefix: str = "") -> Iterable[tuple[str, dict[str, Any]]]:
    """Yield ``(dotted path, dict)`` for every (non-interpolated) dict node below the root."""
    for key, value in container.items():
        if isinstance(value, dict):
            path = f"{prefix}{key}"
            yield path, value
            yield from _dict_paths(value, path + ".")


def _type_name(value: Any) -> str:
    """Map a (resolved) default to the index's type vocabulary."""
    if value is None:
        return "null"
    if value == "???":
        return "missing"
    if isinstance(value, bool):  # before int: bool is an int subclass
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "str"
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        return "dict"
    return "any"


def _is_interpolation(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    from omegaconf._utils import ValueKind, get_value_kind

    return bool(get_value_kind(value) == ValueKind.INTERPOLATION)


def index_entry(
    version: str, entry: Entry, source_cache: dict[tuple[str, str], bool] | None = None
) -> dict[str, Any]:
    """Compose one entry of ``version`` and return its index document (a JSON-ready dict).

    ``keys`` maps every leaf to ``[raw default, type]``: the raw default keeps interpolations
    unresolved (``???`` for mandatory values); the type is taken from the resolved value when the
    default is an interpolation that resolves, and is ``any`` when it does not. A leaf that is an
    interpolation resolving to a dict (``rollout.mtp`` -> ``model.mtp``) is typed ``dict``. Where
    verl's dataclass declares a union the default shows one member of (``str | float``), the type
    is the union, written ``str|float`` (:mod:`rlcat.dev.annotations`).
    """
    from omegaconf import OmegaConf

    cache = source_cache if source_cache is not None else {}
    tree = require_tree(version)
    _check_wheel(version, tree)
    cfg = compose(version, entry.config_name, list(entry.group_overrides))
    raw = flatten(cfg, resolve=False)
    resolved = flatten(cfg, resolve=True)

    keys: dict[str, list[Any]] = {}
    for key in sorted(raw):
        default = raw[key]
        if _is_interpolation(default):
            value = resolved[key]
            # flatten keeps the raw text when an interpolation fails to resolve
            kind = "any" if value == default else _type_name(value)
        else:
            kind = _type_name(default)
        assert kind in _TYPES
        keys[key] = [default, kind]

    container = OmegaConf.to_container(cfg, resolve=False)
    assert isinstance(container, dict)
    for key, members in union_types(tree, {str(k): v for k, v in container.items()}).items():
        if key in keys and keys[key][1] in members and set(members) <= set(_TYPES):
            keys[key][1] = "|".join(members)
    open_dicts: set[str] = set()
    for path, node in _dict_paths({str(k): v for k, v in container.items()}):
        last = path.rsplit(".", 1)[-1]
        # A dict with ``_target_`` is instantiated into a verl dataclass, which rejects unknown
        # fields at startup, so the name alone does not make it open (``rollout.val_kwargs`` is a
        # ``SamplingConfig``, not kwargs forwarded to an engine).
        if not node or (_OPEN_NAME.match(last) and "_target_" not in node):
            open_dicts.add(path)
    for path, snippet in OPTIONAL_DICTS.items():
        parent, _, _ = path.rpartition(".")
        parent_present = not parent or OmegaConf.is_dict(OmegaConf.select(cfg, parent, default=None))
        if parent_present and path not in raw and _source_contains(version, snippet, cache):
            open_dicts.add(path)

    return {
        "format": FORMAT,
        "verl_version": version,
        "config_name": entry.config_name,
        "group_overrides": list(entry.group_overrides),
        "source": f"verl=={version} wheel from PyPI, composed with hydra-core {_hydra_version()}",
        "groups": groups_of(version, entry.config_name),
        "open": sorted(open_dicts),
        # values verl's dataclasses refuse by name at start-up (annotations.refused_values)
        "refused": refused_values(tree, {str(k): v for k, v in container.items()}),
        "keys": keys,
    }


def _dump_value(value: Any) -> str:
    # allow_nan=False: NaN/Infinity are not JSON; fail loudly instead of writing an unreadable file.
    return json.dumps(value, ensure_ascii=False, sort_keys=True, allow_nan=False)


def render(doc: dict[str, Any]) -> str:
    """Serialise an index document deterministically.

    One top-level field per line in a fixed order (metadata first), and inside ``groups``, ``open``
    and ``keys`` one item per line, sorted: small diffs when a release changes one key, and files
    that stay greppable. Every value is compact JSON; the text ends with a newline.
    """
    lines = ["{"]
    fields = list(doc.items())
    for n, (name, value) in enumerate(fields):
        comma = "," if n < len(fields) - 1 else ""
        if name in ("groups", "keys", "refused") and isinstance(value, dict) and value:
            items = sorted(value.items())
            lines.append(f"{_dump_value(name)}: {{")
            lines += [
                f"{_dump_value(k)}: {_dump_value(v)}{',' if i < len(items) - 1 else ''}"
                for i, (k, v) in enumerate(items)
            ]
            lines.append("}" + comma)
        elif name == "open" and isinstance(value, list) and value:
            lines += _json_list(name, value, comma)
        else:
            lines.append(f"{_dump_value(name)}: {_dump_value(value)}{comma}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _json_list(name: str, values: Sequence[Any], comma: str) -> list[str]:
    """A JSON list field with one item per line (stable, readable diffs of generated files)."""
    items = [f"{_dump_value(v)}{',' if i < len(values) - 1 else ''}" for i, v in enumerate(values)]
    return [f"{_dump_value(name)}: [", *items, "]" + comma]


def render_manifest(version: str, docs: Sequence[tuple[Entry, dict[str, Any]]]) -> str:
    """Serialise the manifest of one release: its entries, their files and key counts."""
    manifest: dict[str, Any] = {
        "format": FORMAT,
        "verl_version": version,
        "source": docs[0][1]["source"] if docs else f"verl=={version}",
        "entries": [
            {
                "file": entry.file_name,
                "config_name": entry.config_name,
                "group_overrides": list(entry.group_overrides),
                "keys": len(doc["keys"]),
                "open": len(doc["open"]),
            }
            for entry, doc in docs
        ],
    }
    lines = ["{"]
    fields = list(manifest.items())
    for n, (name, value) in enumerate(fields):
        comma = "," if n < len(fields) - 1 else ""
        if name == "entries":
            lines += _json_list(name, value, comma)
        else:
            lines.append(f"{_dump_value(name)}: {_dump_value(value)}{comma}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def generate(versions: Iterable[str]) -> dict[str, str]:
    """Return ``{relative path: file text}`` for the whole index of ``versions`` (nothing written)."""
    files: dict[str, str] = {}
    cache: dict[tuple[str, str], bool] = {}
    defaults: dict[str, dict[str, dict[str, Any]]] = {}  # version → index file → key → default
    for version in versions:
        docs = [(entry, index_entry(version, entry, cache)) for entry in entries_for(version)]
        for entry, doc in docs:
            files[f"{version}/{entry.file_name}"] = render(doc)
            defaults.setdefault(version, {})[entry.file_name] = {k: v[0] for k, v in doc["keys"].items()}
        files[f"{version}/manifest.json"] = render_manifest(version, docs)
    if set(VERL_VERSIONS) <= set(defaults):  # the moves between releases need every release
        ordered = [v for v in VERL_VERSIONS if v in defaults]
        reference = reference_renames()
        files[RENAMES_FILE] = render_renames(
            renames_doc(ordered, defaults.__getitem__, require_tree, reference)
        )
    return files


def _existing(out_dir: Path, versions: Sequence[str]) -> set[str]:
    """Return the index files present under ``out_dir`` that the generator owns.

    Owned: ``*.json`` in the folders of ``versions``, plus, when all known releases are being
    built, ``*.json`` in other version-shaped folders (a release dropped from VERL_VERSIONS) and
    ``renames.json`` (rlcat.dev.renames). Other files are never touched, so a mistaken ``--out``
    cannot delete unrelated data.
    """
    if not out_dir.is_dir():
        return set()
    dirs = set(versions)
    if set(VERL_VERSIONS) <= set(versions):
        dirs |= {p.name for p in out_dir.iterdir() if p.is_dir() and _VERSION_DIR.match(p.name)}
    found: set[str] = (
        {RENAMES_FILE}
        if set(VERL_VERSIONS) <= set(versions) and (out_dir / RENAMES_FILE).is_file()
        else set()
    )
    for name in dirs:
        if (out_dir / name).is_dir():
            found |= {f"{name}/{p.name}" for p in (out_dir / name).glob("*.json")}
    return found


def _diff_summary(rel: str, old: str, new: str, limit: int = 12) -> str:
    diff = list(
        difflib.unified_diff(
            old.splitlines(), new.splitlines(), f"committed/{rel}", f"generated/{rel}", n=0, lineterm=""
        )
    )
    shown = "\n".join("    " + line for line in diff[:limit])
    more = f"\n    ... ({len(diff) - limit} more diff lines)" if len(diff) > limit else ""
    return f"stale: {rel}\n{shown}{more}"


def build(
    versions: Iterable[str] = VERL_VERSIONS, out_dir: Path | None = None, check: bool = False
) -> list[str]:
    """Generate the key index of ``versions`` into ``out_dir`` (default ``<repo>/schemas/verl``).

    Write mode writes files whose bytes changed, deletes owned index files that are no longer
    generated, and returns the relative paths of all generated files. Check mode writes nothing and
    returns one problem per line group (``missing: ...``, ``extra: ...``, or ``stale: ...`` with a
    short unified diff); an empty list means the committed index is fresh.
    """
    versions = list(versions)
    out = out_dir if out_dir is not None else default_out_dir()
    files = generate(versions)
    existing = _existing(out, versions)
    if check:
        problems: list[str] = []
        for rel, text in files.items():
            path = out / rel
            if rel not in existing:
                problems.append(f"missing: {rel}")
            else:
                old = path.read_text(encoding="utf-8")
                if old != text:
                    problems.append(_diff_summary(rel, old, text))
        problems += [f"extra: {rel}" for rel in sorted(existing - set(files))]
        return problems

    for rel, text in files.items():
        path = out / rel
        if not path.is_file() or path.read_bytes() != text.encode("utf-8"):
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(text.encode("utf-8"))
    for rel in sorted(existing - set(files)):
        (out / rel).unlink()
        folder = (out / rel).parent
        if not any(folder.iterdir()):
            folder.rmdir()
    return sorted(files)
