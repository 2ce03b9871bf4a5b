"""The docs generator: the committed Markdown under docs/ and mkdocs.yml are fresh and complete, and
each page says what the catalog, the guard registry, the README and the command line say.

These tests need neither MkDocs nor a browser (tests/e2e/test_docs_site.py builds and browses the site).
"""

from __future__ import annotations

import html
import inspect
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer
import yaml

from rlcat.cli.app import command_tree
from rlcat.cli.docs import docs_app
from rlcat.docsite import generate as gen
from rlcat.docsite.data import Site, load_site
from rlcat.docsite.home import quick_start_commands
from rlcat.guards import REGISTRY
from rlcat.model.axes import MODES

from conftest import REPO

# every test on one xdist worker: its module fixture (a generation of every page) runs once
pytestmark = pytest.mark.xdist_group("docs-generate")

DOCS = REPO / "docs"


@pytest.fixture(scope="module")
def site() -> Site:
    """Every built-in plan compiled, as the pages are made from it (once for the module's tests)."""
    return load_site(REPO)


@pytest.fixture(scope="module")
def files(site: Site) -> dict[str, str]:
    return gen.generate(REPO, command_tree(), site)


def _page(path: str) -> str:
    return (DOCS / path).read_text(encoding="utf-8")


def _plain(markdown: str) -> str:
    """Markdown text with the generator's escapes undone (backslashes, <code>, <wbr>, &lt;, &amp;)."""
    text = re.sub(r"</?code>|<wbr>", "", markdown)
    return html.unescape(re.sub(r"\\(.)", r"\1", text))


def _codes(markdown: str) -> set[str]:
    """The text of every inline code span, Markdown (`...`) or HTML (<code>, with <wbr> breaks)."""
    spans = set(re.findall(r"`([^`\n]+)`", markdown))
    spans |= {html.unescape(c.replace("<wbr>", "")) for c in re.findall(r"<code>(.*?)</code>", markdown)}
    return spans


def _section(text: str, heading: str) -> str:
    """The body of the `## heading {#...}` section, up to the next `## `."""
    start = re.search(rf"^## {re.escape(heading)}\b.*$", text, flags=re.M)
    assert start, f"no section {heading!r}"
    rest = text[start.end() :]
    end = re.search(r"^## ", rest, flags=re.M)
    return rest[: end.start()] if end else rest


class _NoPythonTags(yaml.SafeLoader):
    """Reads mkdocs.yml, whose `!!python/name:` tags name Material's emoji functions."""


_NoPythonTags.add_multi_constructor("tag:yaml.org,2002:python/name:", lambda loader, suffix, node: suffix)


def _mkdocs_config() -> dict[str, Any]:
    data = yaml.load((REPO / "mkdocs.yml").read_text(encoding="utf-8"), Loader=_NoPythonTags)
    assert isinstance(data, dict)
    return data


def _nav_paths(node: Any) -> list[str]:
    if isinstance(node, str):
        return [node]
    if isinstance(node, list):
        return [p for item in node for p in _nav_paths(item)]
    if isinstance(node, dict):
        return [p for value in node.values() for p in _nav_paths(value)]
    return []


# --- fresh, deterministic, complete ---------------------------------------------------------------


def test_committed_docs_are_fresh(files: dict[str, str]) -> None:
    # no test writes the checkout's docs/ (test_cli.py runs the `rlcat docs` examples on a copy)
    assert gen.stale_files(REPO, files) == ([], []), "docs/ or mkdocs.yml is stale: run `rlcat docs build`"


def test_generation_is_deterministic_and_does_not_depend_on_the_working_directory(
    tmp_path: Path, files: dict[str, str]
) -> None:
    # a second generation, in a fresh process started elsewhere, writes nothing over the committed
    # pages: with test_committed_docs_are_fresh (this process's generation is those pages too), two
    # generations agree file for file, whatever the working folder
    assert gen.stale_files(REPO, files) == ([], [])
    script = (
        "from pathlib import Path; from rlcat.cli.app import command_tree; "
        "from rlcat.docsite.generate import write; "
        f"print(write(Path({str(REPO)!r}), command_tree(), check=True))"
    )
    run = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]"


def test_check_finds_changed_missing_and_orphaned_pages(tmp_path: Path, files: dict[str, str]) -> None:
    shutil.copytree(DOCS, tmp_path / "docs")
    shutil.copy(REPO / "mkdocs.yml", tmp_path / "mkdocs.yml")
    assert gen.stale_files(tmp_path, files) == ([], [])
    page = tmp_path / "docs" / "recipes" / "geo3k_megatron_4_4.md"
    page.write_text(page.read_text() + "hand edit\n")
    (tmp_path / "docs" / "guards" / "RLC501.md").unlink()
    (tmp_path / "docs" / "recipes" / "renamed_recipe.md").write_text("# old\n")
    (tmp_path / "docs" / "ci.md").write_text("# hand-written pages are not the generator's\n")
    changed, extra = gen.stale_files(tmp_path, files)
    assert changed == ["docs/guards/RLC501.md", "docs/recipes/geo3k_megatron_4_4.md"]
    assert extra == ["docs/recipes/renamed_recipe.md"]


def test_every_page_is_in_the_nav_once() -> None:
    nav = _nav_paths(_mkdocs_config()["nav"])
    pages = sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md"))
    assert sorted(nav) == pages
    assert len(nav) == len(set(nav))


def test_hand_written_pages_are_listed_under_guides() -> None:
    guides = next(item["Guides"] for item in _mkdocs_config()["nav"] if "Guides" in item)
    paths = _nav_paths(guides)
    assert "about.md" in paths
    if (DOCS / "ci.md").is_file():
        assert {"Using rlcat in pull-request checks": "ci.md"} in guides
        assert paths[0] == "ci.md"


def test_site_loads_nothing_from_other_hosts() -> None:
    config = _mkdocs_config()
    assert config["theme"]["font"] is False
    assert config["plugins"] == ["search"]
    assert config["strict"] is True
    assert "repo_url" not in config and "analytics" not in config.get("extra", {})
    text = (REPO / "mkdocs.yml").read_text()
    assert "http://" not in text and "https://" not in text
    assert "mermaid" not in text.lower() and "mathjax" not in text.lower()


def test_generated_pages_say_so() -> None:
    for path in sorted(DOCS.rglob("*.md")):
        rel = path.relative_to(DOCS).as_posix()
        generated = rel in gen.GENERATED_FILES or rel.split("/")[0] in gen.GENERATED_DIRS
        assert (gen.HEADER.strip() in path.read_text()) == generated, rel


# --- what the pages say ---------------------------------------------------------------------------


def test_home_page_quick_start_is_the_readme_s() -> None:
    readme = (REPO / "README.md").read_text()
    section = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    expected = re.findall(r"```bash\n(.+?)\n```", section)
    assert len(expected) == 2
    assert quick_start_commands(REPO / "README.md") == expected
    home = _section(_page("index.md"), "Quick start")
    for command in expected:
        assert f"```bash\n{command}\n```" in home
    intro = readme.split("\n", 1)[1].split("## Quick start", 1)[0].strip().split("\n\n")[0]
    assert intro in _page("index.md")


def test_every_recipe_platform_guard_model_and_dataset_has_a_page(site: Site) -> None:
    expected = {f"recipes/{n}.md" for n in site.recipes}
    expected |= {f"platforms/{n}.md" for n in site.platforms}
    expected |= {f"guards/{g}.md" for g in REGISTRY}
    expected |= {f"models/{n}.md" for n in site.models}
    expected |= {f"datasets/{n}.md" for n in site.datasets}
    pages = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")}
    assert expected <= pages
    assert len(site.recipes) == len(list((REPO / "recipes").rglob("*.yaml")))


def _change_rows(markdown: str) -> list[list[str]]:
    """The rows of the change tables in `markdown`: change, setting, before, after (escapes undone),
    and why (as written)."""
    return [
        [_plain(c.strip()) for c in line.strip().strip("|").split(" | ")[:4]]
        + [line.strip().strip("|").split(" | ")[-1].strip()]
        for line in markdown.splitlines()
        if line.strip().startswith(("| changed |", "| added |", "| removed |"))
    ]


def test_geo3k_page_shows_the_cuda_plan_whole_and_the_rocm_changes_of_both_engines() -> None:
    text = _page("recipes/geo3k_megatron_4_4.md")
    # the recipe's own engine on cuda is shown whole: every override with its origin, the script
    cuda_vllm = _section(text, "cuda").split('=== "SGLang"')[0]
    assert "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1" in _codes(cuda_vllm)
    rows = [line.strip().strip("|").split(" | ") for line in cuda_vllm.splitlines() if "<code>" in line]
    origins = {_plain(row[0].strip()): row[-1].strip() for row in rows}
    assert origins["actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1"] == (
        "*recipe* · [recipes/geo3k_megatron_4_4.yaml:34](#recipe-file)"
    )
    assert "python3 -m verl.experimental.fully_async_policy.fully_async_main" in cuda_vllm
    # every other compile as its changes against it, each with the origin of the new value
    rocm = _section(text, "rocm")
    vllm, sglang = rocm.split('=== "SGLang"')
    micro_batch = [
        "changed",
        "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu",
        "`1`",
        "`2`",
        "*platform-block* · [recipe platforms.rocm block (recipes/geo3k_megatron_4_4.yaml:90)](#recipe-file)",
    ]
    assert micro_batch in _change_rows(vllm) and micro_batch in _change_rows(sglang)
    assert ["added", "actor_rollout_ref.actor.megatron.vanilla_mbridge", "—", "`True`"] in [
        r[:4] for r in _change_rows(vllm)
    ]
    sglang_rows = {r[1]: r for r in _change_rows(sglang)}
    assert sglang_rows["actor_rollout_ref.rollout.name"][2:4] == ["`vllm`", "`sglang`"]
    attention = sglang_rows["actor_rollout_ref.rollout.engine_kwargs.sglang.attention_backend"]
    assert attention[:4] == ["added", attention[1], "—", "`triton`"]
    assert attention[4].endswith("(../platforms/rocm.md#tweak-sglang-attention-triton)")
    assert sglang_rows["SGLANG_ATTENTION_BACKEND"][2:4] == ["—", "`triton`"]
    assert sglang_rows["VLLM_USE_V1"][0] == "removed"
    # and the command that prints the whole plan and its launch script
    assert "`rlcat compile geo3k_megatron_4_4 --platform rocm --engine sglang --format shell`" in sglang
    diff = _section(text, "From CUDA to ROCm")
    rows = [
        [_plain(c.strip()) for c in line.strip().strip("|").split(" | ")]
        for line in diff.splitlines()
        if "<code>" in line
    ]
    assert ["changed", "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu", "`1`", "`2`"] in [
        r[:4] for r in rows
    ]
    assert ["added", "actor_rollout_ref.rollout.engine_kwargs.sglang.attention_backend", "—", "`triton`"] in [
        r[:4] for r in rows
    ]
    # the recipe file itself
    assert (REPO / "recipes" / "geo3k_megatron_4_4.yaml").read_text() in _section(text, "Recipe file")


def test_recipe_pages_show_the_guards_that_fire() -> None:
    cuda = _section(_page("recipes/geo3k_megatron_4_4.md"), "cuda")
    # megatron.grad_offload is gone from verl 0.9.1: the key check leaves it out with a note (RLC403)
    assert "**Guards that fire**: none." in cuda
    assert "[RLC403](../diagnostics.md#rlc403)" in cuda and "**Left out**" in cuda
    broken = _section(_page("recipes/geo3k_megatron_4_4.md"), "rocm-7.0.2")
    assert "known issue" in broken and "[RLC303](../diagnostics.md#rlc303)" in broken


def test_guard_pages_come_from_the_registry() -> None:
    for guard_id, cls in REGISTRY.items():
        text = _page(f"guards/{guard_id}.md")
        assert f"\n# {guard_id}: {cls.title}\n" in _plain(text)
        assert cls.docs() in text
        assert f"**severity**: {cls.severity}" in text
        assert cls.affects.describe() in _plain(text)
        assert f"rlcat {cls.since}" in text
        for source in cls.source:
            assert source in _plain(text)
    assert "- **applies to**: platforms: rocm\n" in _page("guards/RLC501.md")


def test_platform_pages_hold_the_profile(site: Site) -> None:
    for name, p in site.platforms.items():
        text = _plain(_page(f"platforms/{name}.md"))
        for key, value in p.software.items():
            assert f"| {key} | {' '.join(value.split())} |" in text
        for flag in p.docker_run:
            assert flag in text
        if p.image:
            assert "docker run -it --rm" in text
        for env in p.env:
            assert f"`{env.name}`" in text and " ".join(env.reason.split()) in text
        for tweak in p.tweaks:
            assert f"### {tweak.id} " in text and " ".join(tweak.reason.split()) in text
        assert len(re.findall(rf"^\| ({'|'.join(MODES)}) \|", _section(text, "Support matrix"), re.M)) == len(
            p.support
        )


def test_matrix_cells_link_to_the_recipe_or_guard_behind_them(site: Site) -> None:
    text = _page("matrix.md")
    cells = 0
    for platform in site.platforms:
        section = _section(text, platform)
        for line in section.splitlines():
            if not line.startswith("| ") or line.startswith(("| algorithm", "| ---")):
                continue
            for cell in line.strip("| ").split(" | ")[3:]:
                cells += 1
                if cell != "—":
                    assert re.search(r"\]\((\.\./)?(recipes|guards|platforms)/[^)]+\)", cell), cell
    assert cells >= 20
    assert "[`geo3k_megatron_4_4`](recipes/geo3k_megatron_4_4.md#rocm)" in _section(text, "rocm")


def _cli_commands() -> list[tuple[str, Any]]:
    from rlcat.cli.app import command_tree as root_command

    found: list[tuple[str, Any]] = []

    def walk(command: Any, path: list[str]) -> None:
        found.append((" ".join(path), command))
        for name, sub in sorted(getattr(command, "commands", {}).items()):
            walk(sub, [*path, name])

    walk(root_command(), ["rlcat"])
    return found


def test_cli_reference_covers_every_command_option_and_example() -> None:
    text = _page("cli.md")
    commands = _cli_commands()
    assert {"rlcat compile", "rlcat dev schemas", "rlcat docs build", "rlcat docs serve"} <= {
        n for n, _ in commands
    }
    for name, command in commands[1:]:
        section = text.split(f" {name} {{#", 1)[1].split("\n#", 1)[0]
        assert " ".join(inspect.cleandoc(command.help or "").split()[:4]) in section.replace("\\", ""), name
        for param in command.params:
            if param.param_type_name == "option":
                assert f"`{param.opts[0]}" in section or f", {param.opts[0]}" in section, (name, param.opts)
        for line in (command.epilog or "").splitlines():
            if line.strip().startswith("rlcat "):
                assert line.strip() in section, (name, line)


def test_docs_commands_have_examples() -> None:
    group = typer.main.get_command(docs_app)
    for name in ("build", "serve"):
        epilog = group.commands[name].epilog or ""  # type: ignore[attr-defined]
        assert "Examples:" in epilog and "rlcat docs " + name in epilog


def test_diagnostics_page_has_an_anchor_for_every_code() -> None:
    from rlcat.diagnostics import CODES

    text = _page("diagnostics.md")
    for code in [*CODES, *REGISTRY]:
        assert f"{{#{code.lower()}}}" in text


# --- the docs never weigh on a compile ------------------------------------------------------------


def test_compile_and_cli_start_import_no_docs_machinery() -> None:
    script = (
        "import sys\n"
        "from rlcat.cli import main\n"
        "code = main(['compile', 'geo3k_megatron_4_4', '--platform', 'rocm'])\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('mkdocs', 'material', 'markdown',"
        " 'pymdownx', 'selenium', 'hydra', 'omegaconf'))\n"
        "print(code, heavy)\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False, cwd=REPO
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip().splitlines()[-1] == "0 []"


def _field_section(text: str, name: str) -> str:
    """The body of a field's section on the fields page (## or ###), up to the next heading."""
    start = re.search(rf"^#{{2,3}} `{re.escape(name)}` \{{#.*$", text, flags=re.M)
    assert start, f"no section for {name!r}"
    rest = text[start.end() :]
    end = re.search(r"^#{2,3} ", rest, flags=re.M)
    return rest[: end.start()] if end else rest


def _release_row(section: str, release: str) -> str:
    return next(
        line for line in section.splitlines() if line.startswith("| ") and release in line.split(" | ")[0]
    )


def test_fields_page_has_a_section_per_field_and_is_in_the_nav() -> None:
    from rlcat.docsite.fields import leaf_fields

    text = _page("fields.md")
    for name in leaf_fields():
        _field_section(text, name)
    reference = next(item["Reference"] for item in _mkdocs_config()["nav"] if "Reference" in item)
    assert {"Recipe fields": "fields.md"} in reference
    row = _release_row(_field_section(text, "batch.mini_batch_size"), "0.9.1")
    assert _codes(row) == {"actor_rollout_ref.actor.ppo_mini_batch_size"}
    # a field no built-in recipe sets is shown by a compile with the field changed, named on the page
    row = _release_row(_field_section(text, "algo.gamma"), "0.9.1")
    assert "algorithm.gamma" in _codes(row)
    assert "--set algo.gamma=" in row
    # a key a release lacks is shown left out there
    row = _release_row(_field_section(text, "actor.offload.grad"), "0.9.1")
    assert row.count("left out") == 1 and "actor_rollout_ref.actor.megatron.grad_offload" in _codes(row)


def test_fields_page_agrees_with_explain_on_every_built_in_plan(site: Site) -> None:
    """What `rlcat explain RECIPE FIELD` says a field sets in a plan is on the page, for that release."""
    from rlcat.docsite.fields import field_of, leaf_fields
    from rlcat.emit.explain import field_keys
    from rlcat.model.fields import recipe_fields

    text = _page("fields.md")
    open_maps = recipe_fields()[1]
    checked = 0
    for cell in site.cells:
        c = cell.compiled
        if c is None or cell.platform not in ("cuda", "rocm", "rocm-7.0.2"):
            continue
        emitted = {o.setting.key: o.key for o in c.overrides}
        for name in leaf_fields():
            keys = [
                f"${k}" if env else emitted[k]
                for k, env in field_keys(c, name)
                if env or (k in emitted and not c.plan.overrides[k].removed)
            ]
            if not keys:
                continue
            assert field_of(name, open_maps) == name
            row = _release_row(_field_section(text, name), c.profile.verl_index)
            assert set(keys) <= _codes(row), (cell.recipe, cell.platform, name, keys, row)
            checked += 1
    assert checked > 200
