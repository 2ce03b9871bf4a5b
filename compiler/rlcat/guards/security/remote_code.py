from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache

from rlcat.catalog import Catalog, builtin_root
from rlcat.diagnostics import Severity
from rlcat.guards.base import Context, Finding, Guard, register
from rlcat.guards.security.values import quoted
from rlcat.verl.names import ARF


@dataclass(frozen=True)
class CodeLoad:
    """A verl switch that lets transformers run a model repository's Python code, and the key naming
    the repository it loads."""

    switch: str
    path: str
    what_loads: str  # what verl loads from the path, with its verb: "the critic loads"
    needs_critic: bool = False  # verl builds a critic only for algorithms that train one


LOADS = (
    CodeLoad(
        f"{ARF}.model.trust_remote_code", f"{ARF}.model.path", "the actor, reference and rollout models load"
    ),
    # verl/trainer/main_ppo.py loads the tokenizer and processor from the actor's model path
    CodeLoad("data.trust_remote_code", f"{ARF}.model.path", "the tokenizer and processor load"),
    CodeLoad("critic.model.trust_remote_code", "critic.model.path", "the critic loads", needs_critic=True),
    # verl/workers/config/model.py loads the config and tokenizer from these when they are set
    CodeLoad(
        f"{ARF}.model.trust_remote_code", f"{ARF}.model.hf_config_path", "the actor's model config loads"
    ),
    CodeLoad(f"{ARF}.model.trust_remote_code", f"{ARF}.model.tokenizer_path", "the actor's tokenizer loads"),
    CodeLoad("data.trust_remote_code", f"{ARF}.model.tokenizer_path", "the tokenizer and processor load"),
    CodeLoad(
        "critic.model.trust_remote_code", "critic.model.hf_config_path", "the critic's config loads", True
    ),
    CodeLoad(
        "critic.model.trust_remote_code", "critic.model.tokenizer_path", "the critic's tokenizer loads", True
    ),
)


@cache
def _shipped_catalog() -> Catalog:
    return Catalog([builtin_root()])


def shipped_hf_id(model_name: str) -> str | None:
    """The Hugging Face repository rlcat's own catalog gives the model, or None when it ships none by
    that name. A user catalog folder cannot change this answer: only the built-in root is read."""
    catalog = _shipped_catalog()
    if model_name not in catalog.names("model"):
        return None
    # imported here: reading a catalog entry loads the pydantic models, which the guard modules
    # leave out of a cold `rlcat lint` (guards.base); this guard is one lint skips
    from rlcat.model.catalog import ModelEntry
    from rlcat.resolve.entries import load_entry

    entry, _ = load_entry("model", model_name, ModelEntry, catalog)
    return entry.hf_id


@register
class RemoteCodeFromAChangedModel(Guard):
    """`trust_remote_code` is on for a model repository rlcat does not ship.

    **Why**: with `trust_remote_code`, transformers downloads the Python files of the model's
    repository (its modelling, tokenizer and processor code) and runs them when verl loads the
    model, on every node. For the models rlcat ships, the catalog names the repository (`hf_id`) and
    that choice was reviewed. When the repository comes from anywhere else (a model entry in a user
    catalog folder, a built-in entry replaced by one with another `hf_id`, a recipe's
    `actor.model_path`, an override of `actor_rollout_ref.model.path`), a pull request decides
    whose code runs at load time (the model path, or the `hf_config_path` or `tokenizer_path` verl
    loads the config and tokenizer from when they are set), and turning `trust_remote_code` on (the recipe's
    `actor.trust_remote_code`, the model entry's `trust_remote_code`, or an override of
    `actor_rollout_ref.model.trust_remote_code`, `data.trust_remote_code` or
    `critic.model.trust_remote_code`) lets it run.

    "Shipped" means: the path verl loads is the `hf_id` of the entry of that name in the catalog of
    the rlcat that runs (not in a `--catalog` folder or RLCAT_PATH). A user entry that replaces a
    built-in one but keeps its `hf_id` loads the same code and is not flagged; a local copy
    (`~/models/...`) is, since rlcat cannot tell what it holds.

    **Bad**:

    ```yaml
    model: qwen3_5_35b_a3b
    actor:
      model_path: someone/Qwen3.5-35B-A3B-faster
      trust_remote_code: true
    ```

    **Good**:

    ```yaml
    model: qwen3_5_35b_a3b   # the repository rlcat ships: Qwen/Qwen3.5-35B-A3B
    actor:
      trust_remote_code: true
    ```

    A repository whose code has been read and is trusted is allowed with the reason:
    `allow: {RLC902: "reviewed the modelling code of org/model at revision abc123"}`.
    """

    id = "RLC902"
    name = "remote_code_from_a_changed_model"
    title = "trust_remote_code for a model repository rlcat does not ship"
    severity = Severity.WARNING
    source = (
        "Hugging Face Transformers docs, Customizing models (trust_remote_code): "
        "https://huggingface.co/docs/transformers/custom_models",
        "Hugging Face Transformers docs, Auto classes (from_pretrained, trust_remote_code): "
        "https://huggingface.co/docs/transformers/model_doc/auto",
        "verl/trainer/main_ppo.py (data.trust_remote_code for the tokenizer and processor)",
    )
    since = "0.1.0"

    def check(self, ctx: Context) -> Iterator[Finding]:
        shipped = shipped_hf_id(ctx.model.name)
        reported: set[str] = set()  # one finding per repository: both switches load the same code
        for load in LOADS:
            if load.needs_critic and ctx.recipe.critic is None:
                continue
            if ctx.value(load.switch) is not True:
                continue
            path = ctx.value(load.path)
            if not isinstance(path, str) or path == shipped or path in reported:
                continue
            reported.add(path)
            setter = ctx.setter(load.path)
            from_where = f" (from {setter.origin.where()})" if setter is not None else ""
            reviewed = (
                f"rlcat ships {shipped} for model {ctx.model.name}"
                if shipped
                else f"rlcat ships no model named {ctx.model.name}"
            )
            yield Finding(
                f"{load.switch} is on and {load.what_loads} from {quoted(path)}{from_where}; {reviewed}: "
                "loading it runs that repository's Python code",
                key=load.switch,
                hint=(
                    "turn trust_remote_code off, or load the repository rlcat ships; if this "
                    f'repository\'s code has been reviewed, say so: allow: {{{self.id}: "the reason"}}'
                ),
            )
