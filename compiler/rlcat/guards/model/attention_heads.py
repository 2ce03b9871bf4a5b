from __future__ import annotations

from collections.abc import Iterator

from rlcat.diagnostics import Severity
from rlcat.guards.base import Context, Finding, Guard, register
from rlcat.verl.names import ARF

ROLES = ("actor", "ref")


def inherits(ctx: Context, role: str, key: str) -> bool:
    """Does the reference take this size from the actor (verl's `${oc.select:…actor…}` default,
    nothing in the plan setting it)? Then a finding about the actor's size covers it."""
    return role == "ref" and ctx.setter(key) is None


def ulysses_size(ctx: Context, role: str) -> tuple[int, str]:
    """A role's Ulysses sequence parallel size and the key that sets it: the role's top-level key
    when above 1 (FSDPActorConfig copies it over the engine's), else fsdp_config's."""
    top_key = f"{ARF}.{role}.ulysses_sequence_parallel_size"
    top = ctx.value(top_key)
    if isinstance(top, int) and top > 1:
        return top, top_key
    key = f"{ARF}.{role}.fsdp_config.ulysses_sequence_parallel_size"
    value = ctx.value(key)
    return (value if isinstance(value, int) and value > 0 else 1), key


def split_problem(heads: int, kv_heads: int | None, size: int, *, kv_either_way: bool) -> str | None:
    """Why `size` ranks cannot split the attention heads (None when they can). `kv_either_way`: the
    KV heads may also be fewer than the ranks and repeated (vLLM, Ulysses), when the ranks are a
    multiple of them; Megatron needs the KV groups divided."""
    if heads % size:
        return f"its {heads} attention heads do not divide by {size}"
    if kv_heads is None or kv_heads % size == 0:
        return None
    if kv_either_way and size % kv_heads == 0:
        return None
    either = f" and {size} is no multiple of them" if kv_either_way else ""
    return f"its {kv_heads} KV heads do not divide by {size}{either}"


@register
class ParallelSizesSplitHeads(Guard):
    """Tensor and Ulysses sequence parallel sizes must split the model's attention heads.

    **Why**: each tensor-parallel or Ulysses rank holds a whole number of attention heads, so the
    size must divide the model's heads (config.json `num_attention_heads`), and its KV heads must
    divide too or, where the engine repeats them, be a divisor of the size. verl's start-up
    validation does not look at the model, so the run fails later, on GPUs, after the model is
    downloaded and loaded:

    - the rollout: vLLM refuses the engine ("Total number of attention heads (32) must be divisible
      by tensor parallel size (3)", vllm/config ModelConfig.verify_with_parallel_config) and its
      QKV layer splits or replicates the KV heads (`divide(tp_size, total_num_kv_heads)`);
    - Ulysses sequence parallelism (FSDP actor and reference): verl's monkey patch asserts
      "num_attention_heads 28 must be divisible by ulysses_sp_size 8" and the same for the KV heads
      (verl/models/transformers/monkey_patch.py, apply_monkey_patch);
    - Megatron tensor parallelism (actor and reference): Megatron-Core's TransformerConfig raises
      "num_attention_heads (28) must be a multiple of tensor_model_parallel_size (8)" and the same for
      num_query_groups (the KV heads).

    The heads come from the catalog model (its `num_attention_heads` and `num_key_value_heads`, from
    the published config.json), or for `rlcat lint` from the catalog model the script's model path
    names or a local model folder's config.json. A model whose heads are not known is not judged.
    Megatron context parallelism splits the sequence, not the heads: it is not judged here.

    **Bad**:

    ```yaml
    model: qwen2_5_math_7b   # 28 attention heads, 4 KV heads
    parallelism:
      rollout: {tp: 8}
    ```

    **Good**:

    ```yaml
    model: qwen2_5_math_7b
    parallelism:
      rollout: {tp: 4}
    ```
    """

    id = "RLC602"
    name = "parallel_sizes_split_heads"
    title = "tensor / sequence parallel size that does not split the model's attention heads"
    severity = Severity.ERROR
    verl_startup = "later"
    source = (
        "verl/models/transformers/monkey_patch.py (apply_monkey_patch: heads vs ulysses_sp_size)",
        "vllm/config (ModelConfig.verify_with_parallel_config: heads vs tensor parallel size)",
        "megatron/core/transformer/transformer_config.py (heads and query groups vs TP)",
    )
    since = "0.2.0"

    def check(self, ctx: Context) -> Iterator[Finding]:
        heads = ctx.model.num_attention_heads
        if not heads:
            return
        kv = ctx.model.num_key_value_heads
        model = ctx.model.name or "the model"
        key = f"{ARF}.rollout.tensor_model_parallel_size"
        tp = ctx.value(key)
        if isinstance(tp, int) and tp > 1:
            why = split_problem(heads, kv, tp, kv_either_way=True)
            if why:
                yield Finding(
                    f"rollout tensor parallel size {tp} cannot split {model}: {why} (vLLM and SGLang "
                    "refuse the engine when it starts)",
                    key=key,
                    hint=_sizes_hint(heads, kv, kv_either_way=True),
                )
        for role in ROLES:
            if ctx.recipe.backend == "megatron":
                key = f"{ARF}.{role}.megatron.tensor_model_parallel_size"
                size = ctx.value(key)
                what, either = "Megatron tensor parallel size", False
            else:
                size, key = ulysses_size(ctx, role)
                what, either = "Ulysses sequence parallel size", True
            if not isinstance(size, int) or size <= 1 or inherits(ctx, role, key):
                continue
            why = split_problem(heads, kv, size, kv_either_way=either)
            if why:
                yield Finding(
                    f"{role}: {what} {size} cannot split {model}: {why}",
                    key=key,
                    hint=_sizes_hint(heads, kv, kv_either_way=either),
                )


def _sizes_hint(heads: int, kv: int | None, *, kv_either_way: bool) -> str:
    fits = [
        n
        for n in (1, 2, 4, 8, 16, 32, 64)
        if n <= heads and split_problem(heads, kv, n, kv_either_way=kv_either_way) is None
    ]
    return "sizes that split the heads: " + ", ".join(str(n) for n in fits)
