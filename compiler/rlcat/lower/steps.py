"""The lowering steps in the order their overrides are printed, and `lower`, which runs them."""

from __future__ import annotations

from rlcat.lower.algorithm import lower_algorithm
from rlcat.lower.backend import lower_backend
from rlcat.lower.common import (
    lower_actor_optim,
    lower_batch,
    lower_data,
    lower_escape_hatches,
    lower_model,
    lower_rollout,
    lower_trainer,
)
from rlcat.lower.context import Lowered, Lowering, Target
from rlcat.lower.engine import lower_engine
from rlcat.lower.mode import lower_mode
from rlcat.lower.reward import lower_reward
from rlcat.resolve.recipe import Resolved

# The order here is the order overrides are printed in: data, algorithm and reward, model and actor, rollout,
# critic, layout and mode, trainer, then the recipe's own escape hatches.
STEPS = (
    lower_data,
    lower_model,
    lower_batch,
    lower_actor_optim,
    lower_algorithm,
    lower_reward,
    lower_backend,
    lower_engine,
    lower_rollout,
    lower_mode,
    lower_trainer,
    lower_escape_hatches,
)


def lower(resolved: Resolved, target: Target) -> Lowered:
    """Lower a resolved recipe to ordered settings, env and entry decisions for one target."""
    lo = Lowering(resolved, target)
    for step in STEPS:
        step(lo)
    return lo.out
