"""Where each page lives, relative links between pages, and links from a value's origin to its page."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable

from rlcat.docsite.md import anchor, esc, link
from rlcat.model.plan import Layer, Origin

DIRS = {
    "recipe": "recipes",
    "platform": "platforms",
    "guard": "guards",
    "model": "models",
    "dataset": "datasets",
    "result": "results",
}
ENGINE_LABELS = {"vllm": "vLLM", "sglang": "SGLang"}
BACKEND_LABELS = {"fsdp": "FSDP", "fsdp2": "FSDP2", "megatron": "Megatron"}
ALGORITHM_LABELS = {"grpo": "GRPO", "dapo": "DAPO", "ppo": "PPO"}
MODE_LABELS = {"colocate": "colocate", "fully_async": "fully async", "one_step_off": "one step off"}

# icons of the support statuses (Material's bundled icons, inlined as SVG: no font or CDN)
STATUS_ICONS = {
    "supported": ":material-check-circle:{ .rlc-supported }",
    "known issue": ":material-alert:{ .rlc-issue }",
    "untested": ":material-help-circle-outline:{ .rlc-untested }",
}


def page(kind: str, name: str) -> str:
    """The docs-relative Markdown path of an entry's page."""
    return f"{DIRS[kind]}/{name}.md"


def rel(here: str, target: str) -> str:
    """A link from page `here` to `target` (both docs-relative; target may carry a #fragment)."""
    path, _, frag = target.partition("#")
    if path == here and frag:
        return f"#{frag}"
    out = posixpath.relpath(path, posixpath.dirname(here) or ".") if path else ""
    return out + (f"#{frag}" if frag else "")


def html_url(here: str, target: str) -> str:
    """`rel(here, target)` as a browser follows it from the built page: raw HTML (a figure's links,
    the results table) is not rewritten by MkDocs, so the `.md` of a page becomes its `.html`
    (the site is built with use_directory_urls: false)."""
    path, sep, frag = rel(here, target).partition("#")
    return (path[: -len(".md")] + ".html" if path.endswith(".md") else path) + sep + frag


def platform_anchor(name: str) -> str:
    return anchor(name)


def origin_target(o: Origin) -> str | None:
    """The docs page (and section) that explains where a value came from, if there is one."""
    if o.layer == Layer.GUARD:
        found = re.search(r"RLC\d{3}", o.label)
        return page("guard", found.group(0)) if found else None
    f = o.file or ""
    stem = posixpath.splitext(posixpath.basename(f))[0]
    if f.startswith("recipes/"):
        return page("recipe", stem) + "#recipe-file"
    if f.startswith("catalog/models/"):
        return page("model", stem)
    if f.startswith("catalog/datasets/"):
        return page("dataset", stem)
    if f.startswith("catalog/platforms/"):
        tweak = re.search(r"\btweak (\S+)", o.label)
        return page("platform", stem) + ("#" + tweak_anchor(tweak.group(1)) if tweak else "#environment")
    return None


def tweak_anchor(tweak_id: str) -> str:
    return "tweak-" + anchor(tweak_id)


def origin_md(o: Origin, here: str, on_site: Callable[[str], bool] = lambda _: True) -> str:
    """`layer: label (file:line)`, the label linked to the page that explains it when `on_site` says
    the site has that page (a team's site may leave out the built-in recipe a value comes from)."""
    text = o.where()
    target = origin_target(o)
    label = link(esc(text), rel(here, target)) if target and on_site(target) else esc(text)
    return f"*{o.layer}* · {label}"
