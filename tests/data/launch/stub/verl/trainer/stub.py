"""What the stand-in trainer does: record argv and env, call `ray.init()` as verl's run_ppo does,
probe every node, compose the overrides with Hydra against the real verl tree, save a checkpoint file
where verl would (trainer.default_local_dir), write a record.
When the job has a working_dir, the driver and each node's probe also record the files of their
working directory (where Ray unpacked it) with their text.

The record goes to $RLCAT_STUB_OUT/<trainer.experiment_name>.json; RLCAT_STUB_OUT is set in the
test cluster's own environment (the raylets'), never in the launch. With RLCAT_STUB_HOLD=SECONDS in
the plan's env, the stand-in then holds its GPUs that long, as a trainer would (the tests that stop,
time out or signal a running job), after printing `rlcat stand-in: holding`.
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
from typing import Any

# verl/trainer/constants_ppo.py PPO_RAY_RUNTIME_ENV (0.9.x): dropped when the driver env has them.
FILTERED_DEFAULTS = {
    "TOKENIZERS_PARALLELISM": "true",
    "NCCL_DEBUG": "WARN",
    "VLLM_LOGGING_LEVEL": "WARN",
    "VLLM_ALLOW_RUNTIME_LORA_UPDATING": "true",
    "VLLM_DISABLE_COMPILE_CACHE": "1",
    "HCCL_HOST_SOCKET_PORT_RANGE": "auto",
    "HCCL_NPU_SOCKET_PORT_RANGE": "auto",
    "HSA_NO_SCRATCH_RECLAIM": "1",
}
ALWAYS = ("VERL_FULL_DETERMINISM", "VLLM_BATCH_INVARIANT", "VERL_RL_INSIGHT_ENABLE")
WHEN_SET = (
    "PYTHONHASHSEED",
    "CUBLAS_WORKSPACE_CONFIG",
    "FLASH_ATTENTION_DETERMINISTIC",
    "NCCL_DETERMINISTIC",
    "NCCL_ALGO",
)


def _job_working_dir() -> str | None:
    job = json.loads(os.environ.get("RAY_JOB_CONFIG_JSON_ENV_VAR", "{}"))
    return job.get("runtime_env", {}).get("working_dir")


def verl_runtime_env(release: str, overrides: dict[str, str]) -> dict[str, Any]:
    """verl's get_ppo_ray_runtime_env and run_ppo's merge, for `release` (0.9.x: constants_ppo.py
    get_ppo_ray_runtime_env; 0.7.1: the filtered defaults only)."""
    has_working_dir = _job_working_dir() is not None
    env = {k: v for k, v in FILTERED_DEFAULTS.items() if os.environ.get(k) is None}
    if not release.startswith("0.7."):
        for key in ALWAYS:
            env[key] = os.environ.get(key, "0")
        env.update({key: os.environ[key] for key in WHEN_SET if key in os.environ})
    if overrides.get("transfer_queue.enable") == "True":
        env["TRANSFER_QUEUE_ENABLE"] = "1"
    return {"env_vars": env, **({} if has_working_dir else {"working_dir": None})}


def working_dir_files() -> dict[str, str]:
    """Every file under the working directory, with its text."""
    found = {}
    for root, _, files in os.walk("."):
        for name in files:
            path = os.path.normpath(os.path.join(root, name))
            with open(path, "rb") as fh:
                found[path] = fh.read().decode("utf-8", "replace")
    return found


def _release() -> str:
    job = json.loads(os.environ.get("RAY_JOB_CONFIG_JSON_ENV_VAR", "{}"))
    return os.environ.get("RLCAT_STUB_VERL_INDEX") or job.get("metadata", {}).get("rlcat_verl_index", "0.9.1")


def main() -> None:
    argv = sys.argv[1:]
    config_name = next(a.split("=", 1)[1] for a in argv if a.startswith("--config-name="))
    overrides = [a for a in argv if not a.startswith("--config-name=")]
    flat = {o.split("=", 1)[0].lstrip("+~"): o.split("=", 1)[1] for o in overrides if "=" in o}
    release = _release()
    record: dict[str, Any] = {
        "module": sys.modules["__main__"].__spec__.name if sys.modules["__main__"].__spec__ else None,
        "argv": argv,
        "driver_env": dict(os.environ),
        "release": release,
        "pid": os.getpid(),
    }
    working_dir = _job_working_dir()
    has_working_dir = working_dir is not None
    if has_working_dir:
        record["working_dir"] = working_dir
        record["working_dir_files"] = working_dir_files()
    out = os.path.join(os.environ["RLCAT_STUB_OUT"], flat.get("trainer.experiment_name", "unnamed") + ".json")
    code = 0
    try:
        import ray

        runtime_env = verl_runtime_env(release, flat)
        record["verl_runtime_env"] = runtime_env
        ray.init(runtime_env=runtime_env)  # no address: RAY_ADDRESS, as verl's run_ppo
        record["cluster_gpus"] = ray.cluster_resources().get("GPU", 0)

        @ray.remote(num_cpus=0.1)
        def probe() -> dict[str, Any]:
            import os

            files = working_dir_files() if has_working_dir else None
            return {"ip": ray.util.get_node_ip_address(), "env": dict(os.environ), "working_dir_files": files}

        ips = sorted(n["NodeManagerAddress"] for n in ray.nodes() if n["Alive"])
        record["nodes"] = ray.get([probe.options(resources={f"node:{ip}": 0.001}).remote() for ip in ips])
    except Exception:
        record["ray_error"] = traceback.format_exc()
        code = 1
    try:
        from rlcat.dev import compose

        config = compose.compose(release, config_name, overrides)
        record["composed"] = True
        # where verl's trainer saves its checkpoints (trainer.default_local_dir, relative to the
        # driver's working folder): the stand-in saves one file there, as a save step would
        saved_in = str(config.trainer.default_local_dir)
        checkpoint = os.path.abspath(os.path.join(saved_in, "rlcat-stand-in.ckpt"))
        os.makedirs(os.path.dirname(checkpoint), exist_ok=True)
        with open(checkpoint, "w", encoding="utf-8") as fh:
            fh.write(json.dumps(argv))
        record["checkpoint"] = checkpoint
    except Exception:
        record["composed"] = False
        record["compose_error"] = traceback.format_exc()
        code = code or 2
    with open(out + ".part", "w", encoding="utf-8") as fh:
        json.dump(record, fh)
    os.replace(out + ".part", out)  # whole: a test may be waiting for it to appear
    print("rlcat stand-in:", "ok" if code == 0 else "failed", out, flush=True)
    for error in ("ray_error", "compose_error"):
        if error in record:
            print(record[error], flush=True)
    hold = float(os.environ.get("RLCAT_STUB_HOLD") or 0)
    if hold and code == 0:
        print("rlcat stand-in: holding", flush=True)
        time.sleep(hold)
    sys.exit(code)
