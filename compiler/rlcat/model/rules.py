"""Rules across fields of one model. Each returns the problem as a sentence, or None.

They read attributes only, so the pydantic schema (for diagnostics) and the plain classes (on the
compile path) apply the same rule; the code generator links a model's `_<rule>` validator to the
function of the same name here.
"""

from __future__ import annotations

from typing import Any


def critic_matches_algorithm(recipe: Any) -> str | None:
    if recipe.algorithm == "ppo" and recipe.critic is None:
        return "algorithm ppo trains a critic: add a `critic:` section (at least critic.optim.lr)"
    if recipe.algorithm != "ppo" and recipe.critic is not None:
        return f"`critic:` is only used by ppo, not {recipe.algorithm}"
    return None
