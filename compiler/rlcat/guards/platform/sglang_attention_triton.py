from __future__ import annotations

from collections.abc import Iterator

from rlcat.diagnostics import Severity
from rlcat.guards.base import Affects, Context, Finding, Guard, hint, register, said

KEY = "actor_rollout_ref.rollout.engine_kwargs.sglang.attention_backend"
ROLLOUT_NAME = "actor_rollout_ref.rollout.name"


@register
class SglangAttentionTritonOnRocm(Guard):
    """SGLang on ROCm must use the triton attention backend.

    **Why**: AMD's quick start lists it as known issue 3: SGLang's other attention backends fail on
    Instinct GPUs. verl's own SGLang server picks `aiter` on ROCm when no backend is given, so a
    recipe that says nothing gets the broken one on images that do not patch verl's rollout.yaml.
    rlcat's ROCm profiles set triton; this guard adds it where a profile does not and refuses a
    recipe that forces another backend. It applies whenever the plan's rollout is SGLang
    (`actor_rollout_ref.rollout.name`, so an `--override` that switches the engine counts too).

    **Bad**:

    ```yaml
    engine: sglang
    rollout:
      engine_kwargs:
        sglang: {attention_backend: flashinfer}
    ```

    **Good**:

    ```yaml
    engine: sglang
    rollout:
      engine_kwargs:
        sglang: {attention_backend: triton}   # or leave it to the rocm profile
    ```
    """

    id = "RLC501"
    name = "sglang_attention_triton_on_rocm"
    title = "SGLang attention backend must be triton on ROCm"
    severity = Severity.ERROR
    verl_startup = "later"
    # the engine is judged on the plan (rollout.name), not the recipe's `engine:` axis
    affects = Affects(platforms=("rocm",))
    source = (
        "docs/amd_tutorial/amd_quick_start.rst (Known Issue 3)",
        "verl/workers/rollout/sglang_rollout/async_sglang_server.py (aiter default on ROCm)",
    )
    since = "0.1.0"

    def check(self, ctx: Context) -> Iterator[Finding]:
        if ctx.value(ROLLOUT_NAME) != "sglang":
            return
        backend = ctx.value(KEY)
        if backend is None:
            yield Finding(
                "SGLang has no attention backend set; verl would pick aiter on ROCm",
                key=KEY,
                fix={KEY: "triton"},
                fix_env={"SGLANG_ATTENTION_BACKEND": "triton"},
            )
        elif backend != "triton":
            yield Finding(
                f"SGLang attention backend is '{backend}'; on ROCm only triton works",
                key=KEY,
                hint=hint(
                    said(
                        "remove the setting (the rocm profile sets triton) or set it to triton",
                        f"set {KEY}=triton (without it verl picks aiter on ROCm)",
                    )
                ),
            )
        env = ctx.env("SGLANG_ATTENTION_BACKEND")
        if env is not None and env != "triton":
            yield Finding(
                f"SGLANG_ATTENTION_BACKEND is '{env}'; on ROCm only triton works",
                key="SGLANG_ATTENTION_BACKEND",
                hint="set SGLANG_ATTENTION_BACKEND=triton",
            )
