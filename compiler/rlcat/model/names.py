"""The grammar of recipe names (docs/recipe-names.md): what a name says about its run.

    name      := [algorithm _] subject [_ backend] {_ qualifier}      every recipe
    subject   := model _ task | task _ model | model | task
    qualifier := engine | layout | mode | variant                     each kind at most once
    canonical := algorithm _ model _ task _ backend [_ engine] _ layout [_ mode] [_ variant]

The canonical order is the one the upstream examples (recipes/upstream/) follow; the hand-written
recipes of recipes/ predate it and use the looser form (`gsm8k_qwen3_8b_fsdp`). The vocabularies
are closed on purpose: a name with an unknown word does not parse, so a new family, task or
variant is added here and in the docs together.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

ALGORITHM = r"grpo|dapo|ppo|gspo"
# the model: family (with its version), optional kind words, the size in billions, the active
# size of a mixture of experts, and base / instruct
_FAMILIES = (
    r"qwen[0-9]?(?:_[0-9])?",
    r"llama[0-9]?(?:_[0-9])?",
    r"glm[0-9](?:_[0-9]v?)?",
    r"gemma[0-9]?",
    r"phi[0-9]?",
    *("mistral", "deepseek", "seed", "gpt", "moonlight", "kimi", "minicpm", "mimo", "nemotron"),
)
_KINDS = r"vl|next|oss|math|coder|nano|nemo|moe"
MODEL = rf"(?:{'|'.join(_FAMILIES)})(?:_(?:{_KINDS}))*_[0-9]+b(?:_a[0-9]+b)?(?:_(?:base|instruct))?"
TASK = r"gsm8k_math|gsm8k|dapo_math|math|geo3k|aime|retool|countdown|custom"
BACKEND = r"fsdp2|fsdp|megatron"
ENGINE = r"vllm|sglang"
# NxM: nodes × GPUs per node; T_R: trainer GPUs _ rollout GPUs (fully_async, one_step_off); N: GPUs
LAYOUT = r"[0-9]+x[0-9]+|[0-9]+_[0-9]+|[0-9]+"
MODE = r"colocate|async|one_step_off"
VARIANT = r"turbo|mis|dynamic|npu"

_QUALIFIERS = {"engine": ENGINE, "layout": LAYOUT, "mode": MODE, "variant": VARIANT}
_SUBJECT = (
    rf"(?:(?P<model>{MODEL})_(?P<task>{TASK})|(?P<task2>{TASK})_(?P<model2>{MODEL})"
    rf"|(?P<model3>{MODEL})|(?P<task3>{TASK}))"
)
_HEAD = re.compile(rf"(?:(?P<algorithm>{ALGORITHM})_)?{_SUBJECT}(?:_(?P<backend>{BACKEND}))?")
_CANONICAL = re.compile(
    rf"(?P<algorithm>{ALGORITHM})_(?P<model>{MODEL})_(?P<task>{TASK})_(?P<backend>{BACKEND})"
    rf"(?:_(?P<engine>{ENGINE}))?_(?P<layout>{LAYOUT})(?:_(?P<mode>{MODE}))?(?:_(?P<variant>{VARIANT}))?"
)


@dataclass(frozen=True)
class RecipeName:
    """What a recipe name says; None where the name leaves it out."""

    algorithm: str | None
    model: str | None
    task: str | None
    backend: str | None
    engine: str | None = None
    layout: str | None = None
    mode: str | None = None
    variant: str | None = None


def parse_recipe_name(name: str, *, canonical: bool = False) -> RecipeName | None:
    """The parts of `name`, or None when the grammar does not read it (`canonical`: only in the
    canonical order of the upstream examples)."""
    if canonical:
        found = _CANONICAL.fullmatch(name)
        return RecipeName(**found.groupdict()) if found else None
    for head in _heads(name):
        rest = name[head.end() :]
        qualifiers = _qualifiers(rest.removeprefix("_")) if rest.startswith("_") or not rest else None
        if qualifiers is None:
            continue
        groups = head.groupdict()
        return RecipeName(
            algorithm=groups["algorithm"],
            model=groups["model"] or groups["model2"] or groups["model3"],
            task=groups["task"] or groups["task2"] or groups["task3"],
            backend=groups["backend"],
            **qualifiers,
        )
    return None


def _heads(name: str) -> list[re.Match[str]]:
    """Every way the start of `name` reads as [algorithm] subject [backend], longest first (a
    regex alone commits to one, and `dapo_math_...` reads both as DAPO on math and as dapo_math)."""
    found = []
    for end in range(len(name), 0, -1):
        match = _HEAD.fullmatch(name, 0, end)
        if match:
            found.append(match)
    return found


def _qualifiers(rest: str) -> dict[str, str] | None:
    """engine, layout, mode and variant words in any order, each kind at most once."""
    seen: dict[str, str] = {}
    for word in _words(rest):
        kind = next((k for k, pattern in _QUALIFIERS.items() if re.fullmatch(pattern, word)), None)
        if kind is None or kind in seen:
            return None
        seen[kind] = word
    return seen


def _words(rest: str) -> list[str]:
    """`rest` split on `_`, keeping a T_R layout (two numbers) and one_step_off whole."""
    parts = rest.replace("one_step_off", "one-step-off").split("_") if rest else []
    words: list[str] = []
    for part in parts:
        if words and part.isdigit() and words[-1].isdigit():
            words[-1] = f"{words[-1]}_{part}"
        else:
            words.append(part.replace("one-step-off", "one_step_off"))
    return words
