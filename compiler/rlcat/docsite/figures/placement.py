"""Where a compiled plan puts its work: nodes × GPUs, the trainer and rollout pools on them, and the
model-parallel groups inside each pool.

`layout_of` reads a compiled plan as verl will: the pools from `trainer.*` and `rollout.*` nnodes
and n_gpus_per_node (`rlcat.launch.command.gpu_pools`, the sizes a launch asks for), the trainer's
groups from the actor's Megatron TP and PP (or, on FSDP, its Ulysses SP), the rollout's from
`rollout.tensor_model_parallel_size`. A plan without a rollout pool (colocate) runs both roles on
every GPU of the trainer pool; with one (fully_async, one_step_off) the rollout takes the GPUs after
the trainer's, on the same node when both fit on one, else on the next nodes, as verl places them.
`placement_svg` draws a layout; equal layouts (one per platform, usually the same) draw once.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rlcat.compile.assemble import Compiled
from rlcat.docsite.figures.svg import CACHED_FIGURES, axes_at, figure, plain, svg_text, text_width
from rlcat.launch.command import gpu_pools

if TYPE_CHECKING:
    from matplotlib.axes import Axes

ARF = "actor_rollout_ref"
TRAINER, ROLLOUT = "trainer", "rollout"
ROLE_COLOURS = {TRAINER: "#3f51b5", ROLLOUT: "#ef6c00"}
IDLE_COLOUR = "#eeeeee"
GROUP_EDGE = "#212121"


@dataclass(frozen=True)
class Pool:
    """One role's GPUs: `gpus` (node, GPU) positions, split into model-parallel groups of
    `group` consecutive GPUs (`group_label`, e.g. TP 2), each `stage` GPUs of them one pipeline
    replica when `stage` > `group` (PP > 1)."""

    role: str
    gpus: tuple[tuple[int, int], ...]
    group: int
    group_label: str
    stage: int

    @property
    def caption(self) -> str:
        nodes = sorted({n for n, _ in self.gpus})
        where = f"node {nodes[0]}" if len(nodes) == 1 else f"nodes {nodes[0]}–{nodes[-1]}"
        return f"{self.role}: {len(self.gpus)} GPUs on {where}, {self.group_label}"


@dataclass(frozen=True)
class Layout:
    nodes: int
    gpus_per_node: int
    pools: tuple[Pool, ...]
    shared: bool  # colocate: both roles on every GPU

    @property
    def summary(self) -> str:
        how = "colocated, both roles on every GPU" if self.shared else "trainer and rollout on their own GPUs"
        return f"{self.nodes} × {self.gpus_per_node} GPUs, {how}"


def _int(values: dict[str, object], key: str, default: int = 1) -> int:
    value = values.get(key, default)
    return value if isinstance(value, int) and value > 0 else default


def _groups(values: dict[str, object], role: str) -> tuple[int, str, int]:
    """(GPUs per group, its label, GPUs per pipeline replica) of one role."""
    if role == ROLLOUT:
        tp = _int(values, f"{ARF}.rollout.tensor_model_parallel_size")
        pp = _int(values, f"{ARF}.rollout.pipeline_model_parallel_size")
        return tp, f"TP {tp}" + (f" × PP {pp}" if pp > 1 else ""), tp * pp
    megatron = f"{ARF}.actor.megatron"
    if f"{megatron}.tensor_model_parallel_size" in values:
        tp = _int(values, f"{megatron}.tensor_model_parallel_size")
        pp = _int(values, f"{megatron}.pipeline_model_parallel_size")
        return tp, f"TP {tp}" + (f" × PP {pp}" if pp > 1 else ""), tp * pp
    sp = _int(values, f"{ARF}.actor.ulysses_sequence_parallel_size")
    return sp, f"SP {sp} (FSDP)", sp


def _positions(first_node: int, first_gpu: int, nnodes: int, per_node: int) -> tuple[tuple[int, int], ...]:
    return tuple((first_node + n, first_gpu + g) for n in range(nnodes) for g in range(per_node))


def layout_of(compiled: Compiled) -> Layout:
    """The placement a compiled plan asks verl for."""
    values: dict[str, object] = {o.key: o.setting.value for o in compiled.overrides}
    res = compiled.recipe.resources
    found = {p.name: p for p in gpu_pools(compiled)}
    trainer = found.get(TRAINER)
    t_nodes, t_per_node = (
        (trainer.nnodes, trainer.gpus_per_node) if trainer else (res.nodes, res.gpus_per_node)
    )
    pools = [Pool(TRAINER, _positions(0, 0, t_nodes, t_per_node), *_groups(values, TRAINER))]
    rollout = found.get(ROLLOUT)
    if rollout is None:
        pools.append(Pool(ROLLOUT, pools[0].gpus, *_groups(values, ROLLOUT)))
    else:
        same_node = t_nodes == rollout.nnodes == 1 and t_per_node + rollout.gpus_per_node <= res.gpus_per_node
        start = (0, t_per_node) if same_node else (t_nodes, 0)
        gpus = _positions(*start, rollout.nnodes, rollout.gpus_per_node)
        pools.append(Pool(ROLLOUT, gpus, *_groups(values, ROLLOUT)))
    nodes = max(res.nodes, *(n + 1 for p in pools for n, _ in p.gpus))
    per_node = max(res.gpus_per_node, *(g + 1 for p in pools for _, g in p.gpus))
    return Layout(nodes, per_node, tuple(pools), shared=rollout is None)


def _runs(gpus: tuple[tuple[int, int], ...]) -> list[tuple[int, int, int]]:
    """(node, first GPU, count) of each stretch of consecutive GPUs on one node."""
    out: list[tuple[int, int, int]] = []
    for node, gpu in gpus:
        if out and out[-1][0] == node and out[-1][1] + out[-1][2] == gpu:
            out[-1] = (node, out[-1][1], out[-1][2] + 1)
        else:
            out.append((node, gpu, 1))
    return out


@functools.lru_cache(maxsize=CACHED_FIGURES)
def placement_svg(layout: Layout, *, name: str) -> str:
    """The layout as SVG: a row per node, a cell per GPU with a trainer strip (top) and a rollout
    strip (bottom) filled where that role runs, each model-parallel group outlined (solid), each
    pipeline replica dashed around its stages. It holds only what the layout says (its page's
    caption names the recipe and platforms), so recipes that place alike share one drawing."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    handles: list[Patch | Line2D] = [
        Patch(facecolor=ROLE_COLOURS[p.role], label=plain(p.caption)) for p in layout.pools
    ]
    handles.append(Line2D([], [], color=GROUP_EDGE, lw=1.2, label="model-parallel group"))
    if any(p.stage > p.group for p in layout.pools):
        handles.append(Line2D([], [], color=GROUP_EDGE, lw=1.0, ls="--", label="pipeline replica"))
    labels = [str(h.get_label()) for h in handles]
    # inches: node labels on the left, GPU labels on top, the legend (a line per entry) below
    left, top, cell = 0.55, 0.3, 0.5
    legend = 0.17 * len(handles) + 0.1
    grid_w, grid_h = cell * layout.gpus_per_node, 0.45 * layout.nodes
    width = max(left + grid_w, 0.1 + max(text_width(label, 7) for label in labels) + 0.5) + 0.1
    with figure(width, legend + grid_h + top) as fig:
        ax = axes_at(fig, left=left, bottom=legend, width=grid_w, height=grid_h)
        _draw_gpus(ax, layout)
        ax.set_xlim(0, layout.gpus_per_node)
        ax.set_ylim(0, layout.nodes)
        gpus, nodes = range(layout.gpus_per_node), range(layout.nodes)
        ax.set_xticks([g + 0.5 for g in gpus], [f"GPU {g}" for g in gpus])
        ax.set_yticks([layout.nodes - 0.5 - n for n in nodes], [f"node {n}" for n in nodes])
        ax.tick_params(length=0, labelsize=7)
        ax.xaxis.tick_top()
        for side in ax.spines.values():
            side.set_visible(False)
        fig.legend(
            handles=handles,
            labels=labels,
            loc="lower left",
            bbox_to_anchor=(0.0, 0.0),
            fontsize=7,
            frameon=False,
            borderaxespad=0.2,
        )
        return svg_text(fig, name)


def _draw_gpus(ax: Axes, layout: Layout) -> None:
    from matplotlib.collections import PolyCollection

    strip = {TRAINER: 0.5, ROLLOUT: 0.05}  # y offset of each role's strip inside a GPU cell
    height = 0.42
    used = {(p.role, gpu) for p in layout.pools for gpu in p.gpus}
    # the strips are one collection: an artist per strip made a big layout cost 0.2 s to draw
    strips, colours = [], []
    for node in range(layout.nodes):
        row_y = layout.nodes - 1 - node
        for gpu in range(layout.gpus_per_node):
            for role, dy in strip.items():
                x, y = gpu + 0.05, row_y + dy
                strips.append([(x, y), (x + 0.9, y), (x + 0.9, y + height), (x, y + height)])
                colours.append(ROLE_COLOURS[role] if (role, (node, gpu)) in used else IDLE_COLOUR)
    ax.add_collection(PolyCollection(strips, facecolors=colours, linewidths=0), autolim=False)
    outlines: dict[tuple[float, str], list[list[tuple[float, float]]]] = {}
    for pool in layout.pools:
        dy = strip[pool.role]
        kinds = [(pool.group, 1.2, "-", 0.02)]
        if pool.stage > pool.group:
            kinds.append((pool.stage, 1.0, "--", -0.01))
        for size, lw, style, inset in kinds:
            pad = 0.02 if style == "-" else 0.04
            for first in range(0, len(pool.gpus), size):
                for node, gpu, count in _runs(pool.gpus[first : first + size]):
                    x0, x1 = gpu + inset, gpu + count - inset
                    y0 = layout.nodes - 1 - node + dy - pad
                    y1 = y0 + height + 2 * pad
                    outlines.setdefault((lw, style), []).append([(x0, y0), (x1, y0), (x1, y1), (x0, y1)])
    for (lw, style), boxes in outlines.items():
        ax.add_collection(
            PolyCollection(
                boxes,
                facecolors="none",
                edgecolors=GROUP_EDGE,
                linewidths=lw,
                linestyles=style,
                joinstyle="miter",
            ),
            autolim=False,
        )
