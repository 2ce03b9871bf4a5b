"""The per-node env probe: before the trainer starts, each node's environment is compared with the
plan's env, and a difference stops the job with a line per variable (launch_facts failure mode 3:
env set in the wrong place never reaches the workers; Ray expands `$` in job env values; its job
supervisor drops NOSET variables).

The probes are constant Python text, run by the cluster's own `python3` (rlcat is not installed
there): the plan's env comes as NAME VALUE arguments, so no value is ever code.
- Slurm runs SLURM_PROBE as one step per node, where `ray start` will run, before Ray starts.
- A Ray job runs RAY_PROBE as the first command of its entrypoint: one task pinned to each alive
  node (NodeAffinitySchedulingStrategy), in the job's runtime env, as verl's workers will be.
"""

from __future__ import annotations

from collections.abc import Iterable

from rlcat.launch.command import EnvVar
from rlcat.syntax.bash import sh_line

# What both probes do with one node's environment.
_DIFFERENCES = """def env_differences(node, plan):
    wrong = []
    for name, want in plan.items():
        have = os.environ.get(name)
        if have != want:
            said = "is not set" if have is None else "is " + ascii(have)
            wrong.append(f"{name} {said} on node {node}; the plan sets {ascii(want)}")
    return wrong
"""

_REPORT = """for line in wrong:
    print("rlcat env probe:", line, file=sys.stderr, flush=True)
sys.exit(1 if wrong else 0)
"""

SLURM_PROBE = (
    "import os, sys\n"
    + _DIFFERENCES
    + """node = os.environ.get("SLURMD_NODENAME") or os.uname().nodename
words = sys.argv[1:]
wrong = env_differences(node, dict(zip(words[::2], words[1::2])))
"""
    + _REPORT
)

# How long the Ray probe waits for every node's answer before it fails the job.
RAY_PROBE_SECONDS = 300

RAY_PROBE = (
    "import os, sys\n"
    "import ray\n"
    "from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy\n"
    + _DIFFERENCES
    + f"""words = sys.argv[1:]
plan = dict(zip(words[::2], words[1::2]))


@ray.remote(num_cpus=0)
def probe(plan):
    node = ray.util.get_node_ip_address()
    return node, env_differences(node, plan)


ray.init(logging_level="ERROR", log_to_driver=False)
nodes = [n["NodeID"] for n in ray.nodes() if n["Alive"]]
pinned = [probe.options(scheduling_strategy=NodeAffinitySchedulingStrategy(n, soft=False)) for n in nodes]
try:
    answers = ray.get([task.remote(plan) for task in pinned], timeout={RAY_PROBE_SECONDS})
except ray.exceptions.GetTimeoutError:
    sys.exit("rlcat env probe: not every node answered within {RAY_PROBE_SECONDS} s")
ray.shutdown()
wrong = [line for _, lines in answers for line in lines]
if not wrong:
    probed = ", ".join(sorted(node for node, _ in answers))
    print(f"rlcat env probe: {{len(plan)}} variable(s) as planned on {{len(answers)}} node(s): {{probed}}")
"""
    + _REPORT
)

# Ray sets these per worker from the GPUs it assigns (unless a NOSET variable says otherwise): a
# probe task that holds no GPU cannot judge them; checks.gpu_visibility does, before the launch.
_SET_BY_RAY_PER_WORKER = frozenset(
    {"CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "ASCEND_RT_VISIBLE_DEVICES"}
)


def probe_words(env: Iterable[EnvVar]) -> list[str]:
    """NAME VALUE ... of the variables a probe compares."""
    return [word for var in env if var.name not in _SET_BY_RAY_PER_WORKER for word in (var.name, var.value)]


def ray_probe_line(env: Iterable[EnvVar]) -> str:
    """The Ray probe as one POSIX `sh` command (the job's entrypoint begins with it)."""
    return sh_line(["python3", "-c", RAY_PROBE, *probe_words(env)])
