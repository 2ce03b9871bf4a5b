"""`rlcat config`: the settings in effect here, and where each one comes from."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rlcat.cli.app import app
from rlcat.cli.common import CatalogOpt, TableFormatOpt
from rlcat.cli.report import catalog_for, write_output
from rlcat.diagnostics import json_text
from rlcat.emit.tables import render_table
from rlcat.model.project import LaunchSettings, ProjectSettings, SlurmLaunchSettings
from rlcat.project import PROJECT_FILE, PYPROJECT, Project, default_platform, find_project, search_roots


@app.command(
    "config",
    epilog="""Examples:

  rlcat config

  rlcat config --format json
""",
)
def config_cmd(
    fmt: TableFormatOpt = "table",
    catalog: CatalogOpt = None,
) -> None:
    """Show the project file found from here upward (rlcat.toml, or [tool.rlcat] in
    pyproject.toml), the catalog folders every command searches in lookup order, and each setting with
    where it comes from."""
    catalog_for(catalog)  # the same checks every command makes: a missing folder is an error here too
    project = find_project()
    rows = settings_rows(project, catalog)
    if fmt == "json":
        text = json_text({"project_file": str(project.file) if project else None, "settings": rows})
    else:
        found = (
            f"project file: {project.file}"
            if project
            else (
                f"no project file ({PROJECT_FILE}, or [tool.rlcat] in {PYPROJECT}) in {Path.cwd()} or above"
            )
        )
        table = [[r["setting"], _shown(r["value"]), r["source"]] for r in rows]
        text = found + "\n\n" + render_table(["setting", "value", "source"], table)
    write_output(text)


def settings_rows(project: Project | None, catalog: list[Path] | None) -> list[dict[str, Any]]:
    """One row per setting in effect: its value and its source (the project file's line, the
    command line, RLCAT_PATH or the default); the catalog folders one row each, in lookup order."""
    rows: list[dict[str, Any]] = [
        {"setting": "catalog", "value": str(root.folder), "source": root.source}
        for root in search_roots(catalog, [], project)
    ]
    settings = project.settings if project else ProjectSettings()
    for name in ProjectSettings.model_fields:
        if name == "catalog":
            continue
        if name == "launch":
            rows += _launch_rows(project)
            continue
        value: Any = getattr(settings, name)
        if name == "schemas":
            value = str(project.schemas) if project else value
        if name == "site":  # a table: the settings it sets
            value = settings.site.model_dump(exclude_none=True)
        rows.append(
            {"setting": name, "value": value, "source": project.origin(name) if project else "default"}
        )
        if name == "platforms":  # what the first of them makes of every command's --platform
            rows.append(
                {
                    "setting": "platform",
                    "value": default_platform(project),
                    "source": f"first of platforms ({rows[-1]['source']})",
                }
            )
    return rows


# What an unset launch setting means (the value shown for it).
_LAUNCH_DEFAULTS = {
    "ray_auth_mode": "(none: every launch says --ray-auth-mode)",
    "container": "docker when there is an image, else none",
    "pull": "missing",
}


def _launch_rows(project: Project | None) -> list[dict[str, Any]]:
    """One row per `[launch]` setting (`launch.mounts`, `launch.slurm.sbatch_args`, ...), each with
    the project file's line that sets it, or `default`."""
    settings = project.settings.launch if project else LaunchSettings()
    rows = []
    named: list[tuple[str, Any]] = [
        (f"launch.{field}", getattr(settings, field))
        for field in LaunchSettings.model_fields
        if field != "slurm"
    ]
    named += [
        (f"launch.slurm.{field}", getattr(settings.slurm, field))
        for field in SlurmLaunchSettings.model_fields
    ]
    for setting, value in named:
        shown = _LAUNCH_DEFAULTS.get(setting.rsplit(".", 1)[-1]) if value is None else value
        rows.append(
            {"setting": setting, "value": shown, "source": project.origin(setting) if project else "default"}
        )
    return rows


def _shown(value: Any) -> str:
    if isinstance(value, dict):
        return "; ".join(f"{k}: {v}" for k, v in value.items()) or "(none)"
    if isinstance(value, list):
        return ", ".join(map(str, value)) or "(none)"
    if value is None:
        return "(none)"
    return str(value).lower() if isinstance(value, bool) else str(value)
