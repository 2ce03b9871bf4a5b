from __future__ import annotations

from collections.abc import Iterator

from rlcat.diagnostics import Severity
from rlcat.guards.base import Affects, Context, Finding, Guard, register
from rlcat.verl.names import ARF

# vLLM's largest LoRA rank (verl's fallback list of vllm.config.lora.MaxLoRARanks)
VLLM_MAX_LORA_RANK = 512
RANK_KEYS = (f"{ARF}.model.lora.rank", f"{ARF}.model.lora_rank")


@register
class LoraRankAboveVllmMaximum(Guard):
    """A LoRA rank the vLLM rollout cannot serve.

    **Why**: with a LoRA adapter, verl serves the adapter in vLLM and sizes vLLM's `max_lora_rank`
    from the rank. vLLM offers ranks up to 512; verl's `validate_config` raises `lora_rank must be
    less than or equal to 512` for a larger one (`verl/utils/config.py:206-215` →
    `verl/workers/rollout/vllm_rollout/utils.py:83-98` in 0.9.1). Megatron's `model.lora.rank` wins
    over FSDP's `model.lora_rank` when both are set, as verl reads them.

    **Bad**:

    ```yaml
    engine: vllm
    actor:
      lora: {rank: 1024}
    ```

    **Good**:

    ```yaml
    engine: vllm
    actor:
      lora: {rank: 64, alpha: 32}
    ```
    """

    id = "RLC707"
    name = "lora_rank_above_vllm_maximum"
    title = "LoRA rank above vLLM's maximum"
    severity = Severity.ERROR
    verl_startup = "refuses"
    affects = Affects(engines=("vllm",))
    source = (
        "verl 0.9.1 verl/utils/config.py:206-215 (check LoRA rank in vLLM)",
        "verl 0.9.1 verl/workers/rollout/vllm_rollout/utils.py:83-98 (get_vllm_max_lora_rank)",
    )
    since = "0.1.0"

    def check(self, ctx: Context) -> Iterator[Finding]:
        for key in RANK_KEYS:
            rank = ctx.value(key)
            if isinstance(rank, int) and not isinstance(rank, bool) and rank > 0:
                if rank > VLLM_MAX_LORA_RANK:
                    yield Finding(
                        f"LoRA rank {rank}: vLLM serves adapters up to rank {VLLM_MAX_LORA_RANK}",
                        key=key,
                        hint=f"use a rank of {VLLM_MAX_LORA_RANK} or less, or the SGLang rollout",
                    )
                return
