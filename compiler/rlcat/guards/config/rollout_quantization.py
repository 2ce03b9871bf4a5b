from __future__ import annotations

from collections.abc import Iterator

from rlcat.diagnostics import Severity
from rlcat.guards.base import Context, Finding, Guard, register
from rlcat.verl.names import ARF

QUANTIZATION = f"{ARF}.rollout.quantization"
# what each engine's server accepts (verl 0.9.1: vllm_async_server.py:1240, async_sglang_server.py:302-312)
SUPPORTED = {"vllm": ("fp8", "torchao", "ascend"), "sglang": ("fp8",)}


@register
class RolloutQuantizationEngine(Guard):
    """A rollout quantization the rollout engine does not offer.

    **Why**: verl quantizes the synced weights on the fly in the rollout engine
    (`actor_rollout_ref.rollout.quantization`). Its vLLM server takes fp8, torchao and ascend
    (`verl/workers/rollout/vllm_rollout/vllm_async_server.py:1240` in 0.9.1), its SGLang server fp8
    only and raises `Currently only support fp8 quantization` for anything else
    (`verl/workers/rollout/sglang_rollout/async_sglang_server.py:302-312`), when the rollout
    servers start, after the cluster is up.

    **Bad**:

    ```yaml
    engine: sglang
    rollout: {quantization: torchao}
    ```

    **Good**:

    ```yaml
    engine: sglang
    rollout: {quantization: fp8}
    ```
    """

    id = "RLC706"
    name = "rollout_quantization_engine"
    title = "rollout quantization the engine does not offer"
    severity = Severity.ERROR
    verl_startup = "later"
    source = (
        "verl 0.9.1 verl/workers/rollout/sglang_rollout/async_sglang_server.py:302-312",
        "verl 0.9.1 verl/workers/rollout/vllm_rollout/vllm_async_server.py:1240",
    )
    since = "0.1.0"

    def check(self, ctx: Context) -> Iterator[Finding]:
        method = ctx.value(QUANTIZATION)
        engine = ctx.value(f"{ARF}.rollout.name")
        offered = SUPPORTED.get(engine) if isinstance(engine, str) else None
        if method is None or offered is None or method in offered:
            return
        yield Finding(
            f"rollout quantization {method!r} is not offered by verl's {engine} rollout "
            f"(it takes {', '.join(offered)})",
            key=QUANTIZATION,
            hint=f"use {offered[0]}, or another rollout engine",
        )
