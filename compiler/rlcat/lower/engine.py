"""Engine axis: the rollout engine's name, its kwargs and its environment."""

from __future__ import annotations

from rlcat.lower.common import flatten
from rlcat.lower.context import Lowering, axis
from rlcat.verl.names import ARF


def lower_engine(lo: Lowering) -> None:
    engine = lo.recipe.engine
    lo.set(f"{ARF}.rollout.name", engine, "engine")
    kwargs = lo.recipe.rollout.engine_kwargs.get(engine, {})
    for key, value in flatten(f"{ARF}.rollout.engine_kwargs.{engine}", kwargs):
        lo.set(key, value, f"rollout.engine_kwargs.{engine}." + key.split(f"engine_kwargs.{engine}.", 1)[1])
    if engine == "vllm":
        lo.env(
            "VLLM_USE_V1",
            "1",
            origin=axis("engine", "vllm", "verl drives vLLM's V1 engine"),
        )
