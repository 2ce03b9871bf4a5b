"""`--target slurm`: an sbatch script that starts a Ray cluster on the job's nodes and the trainer on
it, in the shape launch_facts recommends (verl's ray_on_slurm.slurm and NeMo-RL's ray.sub, without
their failure modes; the numbers are launch_facts' A.3 table):

- nodes and GPUs sized from the plan (every pool: trainer, and rollout for fully_async), checked
  against the allocation before anything starts (2);
- the node array from `scontrol show hostnames`, one name per element (1: verl's example puts all
  names in one element); each node's IP from `--network-interface` (which also sets
  NCCL_SOCKET_IFNAME and GLOO_SOCKET_IFNAME, 6) or Slurm's NodeAddr, never `hostname --ip-address`
  (1); `--node-ip-address` for the head and every worker;
- ports derived from the job id, so two jobs on a node do not collide (5);
- the plan's env exported before the first step and given to every container before `ray start`
  (3), then compared with each node's env by a probe before Ray starts;
- `ray start --block` per node with `--num-cpus` from Slurm's CPUs and the plan's GPUs (5);
- readiness by polling for the nodes and GPUs, with a deadline, never a fixed sleep (1, 2);
- RAY_ADDRESS exported for the trainer, so verl's address-less ray.init joins this cluster instead
  of starting a local one (2);
- `srun --overlap` on every step (5), fail fast when a node's step dies, and a `trap` teardown.

The script's bash text is built from escaped words only: every value through syntax.bash.shell_word,
every comment through comment_line. sbatch and its follow-up are in slurm_submit.py.
"""

from __future__ import annotations

import re

from rlcat import __version__
from rlcat.diagnostics import Diagnostic, Where, diag
from rlcat.launch import checks
from rlcat.launch.base import Console, Launch, Target, image_of
from rlcat.launch.command import EnvVar, ray_accelerator
from rlcat.launch.container_paths import container_path_problems
from rlcat.launch.env_probe import SLURM_PROBE
from rlcat.launch.skypilot import WAIT_FOR_CLUSTER
from rlcat.launch.slurm_container import container_of, runtime
from rlcat.launch.slurm_submit import submit_batch
from rlcat.syntax.bash import comment_line, shell_word

# Per-job Ray ports: base + offset, the base from the job id (dagster-slurm #65), above Ray's
# default worker port range (10002-19999) and below the kernel's usual ephemeral range.
PORT_BASE, PORT_SLOTS, PORT_STRIDE = 20000, 400, 100
# How long the script waits for the head, and for every node and GPU, before failing the job.
READY_SECONDS = 600
# Interface names as Linux allows them (IFNAMSIZ 16, no `/` or whitespace).
_INTERFACE = re.compile(r"[A-Za-z0-9_.:@-]{1,15}")


def interface_env(launch: Launch) -> list[EnvVar]:
    """NCCL_SOCKET_IFNAME and GLOO_SOCKET_IFNAME for --network-interface (none without it)."""
    interface = launch.options.network_interface
    if not interface:
        return []
    where: Where = {"argument": f"--network-interface {interface}"}
    return [EnvVar(name, interface, where) for name in ("NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME")]


def script_env(launch: Launch) -> list[EnvVar]:
    """The env every node gets: the plan's, then the interface variables it does not set itself."""
    planned = {var.name for var in launch.command.env}
    return [*launch.command.env, *(v for v in interface_env(launch) if v.name not in planned)]


def _interface_problems(launch: Launch) -> list[Diagnostic]:
    interface = launch.options.network_interface
    if interface is None:
        return []
    argument = f"--network-interface {interface}"
    if not _INTERFACE.fullmatch(interface):
        return [diag("RLC105", "not a network interface name", argument=argument)]
    planned = launch.command.env_vars
    return [
        diag(
            "RLC105",
            f"{argument} differs from {var.name}={planned[var.name]} in the plan's env; NCCL/Gloo "
            "and Ray would use different networks",
            argument=argument,
            hint=f"leave out {var.name} from the recipe's env, or name the same interface",
        )
        for var in interface_env(launch)
        if planned.get(var.name, interface) != interface
    ]


def _container_problems(launch: Launch) -> list[Diagnostic]:
    kind = container_of(launch)
    if kind == "none" or image_of(launch):
        return []
    return [
        diag(
            "RLC1011",
            f"--container {kind} needs an image, and the {launch.compiled.profile.name} profile names none",
            argument="--container",
            hint="--image REGISTRY/verl:TAG, or --container none where verl is installed on the nodes",
        )
    ]


def _allocation_problems(launch: Launch) -> list[Diagnostic]:
    """RLC1002 when the plan's pools do not fit the nodes the script asks Slurm for."""
    command = launch.command
    resource = ray_accelerator(launch.compiled.profile.family)
    if command.gpus_per_node <= 0:
        return [
            diag(
                "RLC1002",
                f"the recipe asks for no {resource}s per node; a Slurm job of verl needs them",
                key="resources.gpus_per_node",
            )
        ]
    return checks.gpus_fit(command.pools, [float(command.gpus_per_node)] * command.nodes, resource)


class Slurm(Target):
    name = "slurm"
    summary = "an sbatch script: a Ray head and workers, one per node, in a container each, then the trainer"
    executable = True

    def checks(self, launch: Launch) -> list[Diagnostic]:
        return [
            *checks.gpu_visibility(launch),
            *_allocation_problems(launch),
            *_interface_problems(launch),
            *_container_problems(launch),
            *container_path_problems(launch, container_of(launch), launch.options.allow_outputs_in_container),
            *checks.pass_env_conflicts(launch),
            *(
                checks.missing_credentials(
                    launch,
                    f"the {container_of(launch)} containers get the plan's env and the --pass-env names only",
                )
                if container_of(launch) in ("docker", "podman")
                else []
            ),
        ]

    def render(self, launch: Launch) -> str:
        return sbatch_script(launch)

    def submit(self, launch: Launch, artifact: str, *, wait: bool, console: Console) -> int:
        return submit_batch(artifact, launch.options, wait=wait, console=console)


def _sbatch_header(launch: Launch) -> list[str]:
    command = launch.command
    family = launch.compiled.profile.family
    name = re.sub(r"[^A-Za-z0-9_.-]", "-", launch.compiled.plan.recipe)[:64] or "rlcat"
    cpus = launch.options.cpus_per_node
    lines = [
        "#!/bin/bash",
        f"#SBATCH --job-name={name}",
        f"#SBATCH --nodes={command.nodes}",
        "#SBATCH --ntasks-per-node=1",
        # Ascend NPUs are a generic resource of their own name on Slurm clusters that schedule them
        f"#SBATCH --gres=npu:{command.gpus_per_node}"
        if family == "npu"
        else f"#SBATCH --gpus-per-node={command.gpus_per_node}",
        f"#SBATCH --cpus-per-task={cpus}" if cpus else "#SBATCH --exclusive",
        *(arg.line() for arg in launch.options.site.sbatch_args),
    ]
    return lines


def _ray_accelerators(launch: Launch) -> str:
    count = launch.command.gpus_per_node
    resource = ray_accelerator(launch.compiled.profile.family)
    if resource == "GPU":
        return f"--num-gpus={count}"
    return "--resources=" + shell_word(f'{{"{resource}": {count}}}')


def _visibility_unset(launch: Launch) -> list[str]:
    """On ROCm, the GPU-visibility variable Slurm adds to every GPU step that Ray and verl refuse
    beside another one (Slurm's gres plugin sets both CUDA_ and ROCR_VISIBLE_DEVICES; verl's worker
    raises on ROCR next to CUDA/HIP): removed from each command's env, unless the plan sets it."""
    if launch.compiled.profile.family != "rocm" or "ROCR_VISIBLE_DEVICES" in launch.command.env_vars:
        return []
    return ["env", "-u", "ROCR_VISIBLE_DEVICES"]


def sbatch_script(launch: Launch) -> str:
    plan = launch.compiled.plan
    command = launch.command
    env = script_env(launch)
    resource = ray_accelerator(launch.compiled.profile.family)
    kind = container_of(launch)
    every_node = 'srun --overlap --nodes="$RLCAT_NODE_COUNT" --ntasks-per-node=1'
    run = runtime(launch, [var.name for var in env], every_node)
    srun_options = " ".join(run.srun_options)
    setup = launch.options.site.setup
    prefix = " ".join(
        [*run.prefix, *_visibility_unset(launch), *(['bash -c "$RLCAT_SETUP" rlcat-setup'] if setup else [])]
    )
    probe_args = " \\\n    ".join(f"{var.name} {shell_word(var.value)}" for var in env)
    shape = " + ".join(f"{p.name} {p.nnodes}×{p.gpus_per_node}" for p in command.pools)
    words = [shell_word(w) for w in command.argv]
    trainer = " \\\n    ".join([" ".join(words[:4]), *words[4:]])
    image = image_of(launch)
    lines = [
        *_sbatch_header(launch),
        comment_line(
            f"{plan.recipe} on {plan.platform} (verl {plan.verl_version}), generated by rlcat {__version__}: "
            f"a Ray head and {command.nodes - 1} worker(s), one per node"
            + (f", in {kind} containers of {image}" if kind != "none" else "")
            + f", then the trainer ({shape} {resource}s)."
        ),
        comment_line("Regenerate with: " + " ".join(shell_word(a) for a in launch.regenerate)),
        comment_line(
            "Submit with: sbatch THIS_FILE (sbatch options on its command line beat the lines above)."
        ),
        "set -euo pipefail",
        "",
        comment_line(
            "The plan's env, exported before the first step: srun passes it to every step, and so to "
            "`ray start` and every Ray worker (a variable set after `ray start` never reaches them)."
        ),
        *(f"export {var.name}={shell_word(var.value)}" for var in env),
        "",
        f"RLCAT_NODE_COUNT={command.nodes}",
        f"RLCAT_ACCELERATORS={command.gpus}",
        f"RLCAT_READY_SECONDS={READY_SECONDS}",
        comment_line(
            "Ray's fixed ports, per job (two jobs on one node must not share them), and per node for "
            "the agents (two nodes of the job may share a machine)."
        ),
        f"RLCAT_PORT_BASE=$(({PORT_BASE} + SLURM_JOB_ID % {PORT_SLOTS} * {PORT_STRIDE}))",
        "RAY_PORT=$RLCAT_PORT_BASE",
        "node_ports() {",
        f"    local agent=$((RLCAT_PORT_BASE + 10 + $1 * 2 % {PORT_STRIDE - 10}))",
        '    echo "--dashboard-agent-listen-port=$agent --metrics-export-port=$((agent + 1))"',
        "}",
        comment_line(
            "Ray's CPUs are the ones Slurm gave the job on each node, not every core of the machine."
        ),
        'RLCAT_CPUS="${SLURM_CPUS_PER_TASK:-$SLURM_CPUS_ON_NODE}"',
        "",
        'say() { printf "[rlcat %s] %s\\n" "$(date +%T)" "$*" >&2; }',
        'die() { say "$*"; exit 1; }',
        "",
        comment_line("One element per node (never all names in one: verl issue #548)."),
        'mapfile -t RLCAT_NODES < <(scontrol show hostnames "$SLURM_JOB_NODELIST")',
        "[[ ${#RLCAT_NODES[@]} -eq $RLCAT_NODE_COUNT ]] ||",
        '    die "the job has ${#RLCAT_NODES[@]} node(s); the plan needs $RLCAT_NODE_COUNT"',
        "RLCAT_HEAD=${RLCAT_NODES[0]}",
        "",
        comment_line(
            "Runs a command on one node"
            + (f", in its {kind} container" if kind != "none" else "")
            + ", as a step that shares the allocation (--overlap: without it, a second step waits for "
            "the first)."
        ),
        comment_line(
            "Always run in the background (&): exec makes the job's PID srun's, so a signal reaches the step."
        ),
        "on_node() {",
        "    local node=$1",
        "    shift",
        _words(
            '    exec srun --overlap --nodes=1 --ntasks=1 --nodelist="$node" --cpus-per-task="$RLCAT_CPUS"',
            srun_options,
            prefix,
            '"$@"',
        ),
        "}",
        "",
        comment_line("The node's IPv4 address: " + _ip_source(launch)),
        *_node_ip_function(launch),
        "",
        comment_line("The steps that hold a Ray node: the job fails as soon as one of them ends."),
        "RLCAT_NODE_PIDS=()",
        "RLCAT_NODE_NAMES=()",
        "RLCAT_OTHER_PIDS=()",
        "check_nodes() {",
        "    local i rc",
        '    for i in "${!RLCAT_NODE_PIDS[@]}"; do',
        '        if ! kill -0 "${RLCAT_NODE_PIDS[$i]}" 2>/dev/null; then',
        '            rc=0; wait "${RLCAT_NODE_PIDS[$i]}" || rc=$?',
        '            die "the Ray ${RLCAT_NODE_NAMES[$i]} ended (exit $rc); the job stops"',
        "        fi",
        "    done",
        "}",
        comment_line("Runs a step in the background and waits for it, checking the Ray nodes meanwhile."),
        "watched() {",
        '    "$@" &',
        "    local pid=$! rc=0",
        '    RLCAT_OTHER_PIDS+=("$pid")',
        '    while kill -0 "$pid" 2>/dev/null; do',
        "        check_nodes",
        "        sleep 2",
        "    done",
        '    wait "$pid" || rc=$?',
        "    return $rc",
        "}",
        "",
        "teardown() {",
        "    local rc=$?",
        "    trap - EXIT INT TERM",
        '    say "teardown (exit $rc)"',
        "    " + comment_line("SIGTERM to a step reaches `ray start --block`, which stops that node's Ray."),
        '    local pids=("${RLCAT_NODE_PIDS[@]}" "${RLCAT_OTHER_PIDS[@]}")',
        "    if [[ ${#pids[@]} -gt 0 ]]; then",
        '        kill -TERM "${pids[@]}" 2>/dev/null || true',
        "        local deadline=$((SECONDS + 60))",
        '        while kill -0 "${pids[@]}" 2>/dev/null && [[ $SECONDS -lt $deadline ]]; do sleep 1; done',
        '        kill -KILL "${pids[@]}" 2>/dev/null || true',
        "    fi",
        *(f"    {line}" for line in run.stop),
        '    exit "$rc"',
        "}",
        "trap teardown EXIT",
        "trap 'exit 143' TERM",
        "trap 'exit 130' INT",
        "",
    ]
    lines += _site_lines(launch, kind, every_node)
    if run.start:
        lines += [
            comment_line(
                f"One {kind} container per node, with the plan's env (-e) before `ray start`; "
                "the image is pulled, never built, here."
            ),
            *(f"{line} ||\n    die 'a node could not start its container'" for line in run.start),
            "",
        ]
    lines += _tools_lines(_words(every_node, srun_options, prefix))
    lines += [
        comment_line("Env probe: each node's env, where Ray will start, holds the plan's values."),
        "read -r -d '' RLCAT_ENV_PROBE <<'RLCAT_ENV_PROBE' || true",
        SLURM_PROBE + "RLCAT_ENV_PROBE",
        _words(every_node, srun_options, prefix, 'python3 -c "$RLCAT_ENV_PROBE" \\'),
        f"    {probe_args} ||",
        "    die \"the env of a node differs from the plan's (see 'rlcat env probe' above)\"",
        "",
        'RLCAT_HEAD_IP=$(node_ip "$RLCAT_HEAD")',
        'say "head: $RLCAT_HEAD at $RLCAT_HEAD_IP:$RAY_PORT; nodes: ${RLCAT_NODES[*]}"',
        'on_node "$RLCAT_HEAD" ray start --head --node-ip-address="$RLCAT_HEAD_IP" --port="$RAY_PORT" \\',
        '    --dashboard-port="$((RLCAT_PORT_BASE + 1))" \\',
        '    --ray-client-server-port="$((RLCAT_PORT_BASE + 2))" \\',
        f'    $(node_ports 0) --num-cpus="$RLCAT_CPUS" {_ray_accelerators(launch)} --block &',
        'RLCAT_NODE_PIDS+=("$!")',
        'RLCAT_NODE_NAMES+=("head on $RLCAT_HEAD")',
        "",
        comment_line("The workers join once the head's GCS accepts connections."),
        "RLCAT_DEADLINE=$((SECONDS + RLCAT_READY_SECONDS))",
        'until (exec 3<>"/dev/tcp/$RLCAT_HEAD_IP/$RAY_PORT") 2>/dev/null; do',
        "    check_nodes",
        "    [[ $SECONDS -lt $RLCAT_DEADLINE ]] ||",
        '        die "the head did not listen within $RLCAT_READY_SECONDS s"',
        "    sleep 1",
        "done",
        "for ((k = 1; k < RLCAT_NODE_COUNT; k++)); do",
        "    node=${RLCAT_NODES[$k]}",
        '    node_ip=$(node_ip "$node")',
        '    on_node "$node" ray start --address="$RLCAT_HEAD_IP:$RAY_PORT" --node-ip-address="$node_ip" \\',
        f'        $(node_ports "$k") --num-cpus="$RLCAT_CPUS" {_ray_accelerators(launch)} --block &',
        '    RLCAT_NODE_PIDS+=("$!")',
        '    RLCAT_NODE_NAMES+=("worker on $node")',
        "done",
        "",
        comment_line(
            "verl's ray.init takes no address: RAY_ADDRESS makes it join this cluster (without it, "
            "it would start a Ray of its own on the head node)."
        ),
        'export RAY_ADDRESS="$RLCAT_HEAD_IP:$RAY_PORT"',
        comment_line(f"Ready when every node and {resource} has joined (polled, with a deadline)."),
        "read -r -d '' RLCAT_WAIT <<'RLCAT_WAIT' || true",
        WAIT_FOR_CLUSTER + "RLCAT_WAIT",
        'watched on_node "$RLCAT_HEAD" env RAY_ADDRESS="$RAY_ADDRESS" python3 -c "$RLCAT_WAIT" \\',
        f'    "$RLCAT_NODE_COUNT" "$RLCAT_ACCELERATORS" {resource} ||',
        "    die 'the cluster did not come up'",
        'say "cluster ready: $RLCAT_NODE_COUNT node(s), $RLCAT_ACCELERATORS ' + resource + '(s)"',
        "",
        comment_line(
            "The trainer, on the head node; extra Hydra overrides given to the script are passed on."
        ),
        "RLCAT_RC=0",
        'watched on_node "$RLCAT_HEAD" env RAY_ADDRESS="$RAY_ADDRESS" \\',
        "    " + trainer.replace("\n    ", "\n        ") + ' \\\n    "$@" || RLCAT_RC=$?',
        'say "the trainer ended (exit $RLCAT_RC)"',
        'exit "$RLCAT_RC"',
    ]
    return "\n".join(lines) + "\n"


# What each node checks before anything of Ray starts, as `bash -c` text with the image, the
# runtime and the pull policy as its arguments: the image is there (or is pulled as the policy
# says), else the job fails naming the node and the image. A node is named as Slurm names it (what
# sinfo and --nodelist say; Slurm sets SLURMD_NODENAME in every step, and docker and podman
# containers get it with -e), by its host name where nothing set it.
IMAGE_CHECK = """\
image=$1 runtime=$2 pull=$3
fail() { echo "rlcat: node ${SLURMD_NODENAME:-$(hostname)}: $*" >&2; exit 1; }
have() { "$runtime" image inspect "$image" >/dev/null 2>&1; }
get() { "$runtime" pull "$image" >/dev/null; }
case $pull in
    always) get || fail "$runtime pull $image failed (--pull always)" ;;
    missing) have || get || fail "no image $image, and $runtime pull $image failed (--pull missing)" ;;
    never) have || fail "no image $image (--pull never: load or pull it on every node first)" ;;
esac
"""
# What each node checks where its commands run (after the setup lines, in the container if any).
TOOLS_CHECK = """\
node=${SLURMD_NODENAME:-$(hostname)}
for tool in python3 ray; do
    command -v "$tool" >/dev/null ||
        { echo "rlcat: node $node: no $tool on PATH (after the setup lines)" >&2; exit 1; }
done
"""


def _site_lines(launch: Launch, kind: str, every_node: str) -> list[str]:
    """The variables passed by name, checked; the setup lines; the image on every node (docker,
    podman, a .sif file for apptainer); python3 and ray where the node's commands run."""
    site = launch.options.site
    lines: list[str] = []
    if site.pass_env:
        names = " ".join(given.text for given in site.pass_env)
        lines += [
            comment_line(
                "Passed by name (--pass-env): sbatch gives the job the submitting shell's variables; "
                "their values are never written here."
            ),
            f"for RLCAT_NAME in {names}; do",
            "    [[ -v $RLCAT_NAME ]] ||",
            '        die "$RLCAT_NAME is not in the job\'s environment (--pass-env): export it, then sbatch"',
            "done",
            "",
        ]
    if site.setup:
        lines += [
            comment_line(
                "The setup lines (--setup, [launch].setup), run as written by bash on each node before "
                "every command rlcat runs there (in the container, when there is one), then the command."
            ),
            "RLCAT_SETUP_LINES=(",
            *(f"    {shell_word(given.text)}" for given in site.setup),
            ")",
            """printf -v RLCAT_SETUP '%s\\n' "${RLCAT_SETUP_LINES[@]}" 'exec "$@"'""",
            "",
        ]
    image = image_of(launch) or ""
    if kind in ("docker", "podman"):
        lines += [
            comment_line(f"The image on every node (--pull {site.pull}), before any container starts."),
            "read -r -d '' RLCAT_IMAGE_CHECK <<'RLCAT_IMAGE_CHECK' || true",
            IMAGE_CHECK + "RLCAT_IMAGE_CHECK",
            f'{every_node} bash -c "$RLCAT_IMAGE_CHECK" \\',
            f"    rlcat-image {shell_word(image)} {kind} {site.pull} ||",
            "    die 'a node does not have the image (see above)'",
            "",
        ]
    elif kind == "apptainer" and image.endswith(".sif"):
        lines += [
            comment_line("The image file on every node."),
            f"{every_node} bash -c "
            + shell_word(
                "[[ -r $1 ]] || "
                '{ echo "rlcat: node ${SLURMD_NODENAME:-$(hostname)} cannot read the image $1" >&2; exit 1; }'
            )
            + f" rlcat-image {shell_word(image)} ||",
            "    die 'a node does not have the image (see above)'",
            "",
        ]
    return lines


def _tools_lines(in_node: str) -> list[str]:
    return [
        comment_line("python3 and ray on every node, where its commands run."),
        "read -r -d '' RLCAT_TOOLS_CHECK <<'RLCAT_TOOLS_CHECK' || true",
        TOOLS_CHECK + "RLCAT_TOOLS_CHECK",
        f'{in_node} bash -c "$RLCAT_TOOLS_CHECK" ||',
        "    die 'a node lacks python3 or ray (see above)'",
        "",
    ]


def _words(*parts: str) -> str:
    """Parts of a command line, the empty ones left out."""
    return " ".join(part for part in parts if part)


def _ip_source(launch: Launch) -> str:
    interface = launch.options.network_interface
    if interface:
        return f"the first address on {interface}, read on the node (the interface NCCL and Gloo use too)."
    return (
        "Slurm's NodeAddr, resolved if it is a name (hostname --ip-address may answer 127.0.1.1 or several)."
    )


def _node_ip_function(launch: Launch) -> list[str]:
    interface = launch.options.network_interface
    if interface:
        return [
            "node_ip() {",
            "    local ip",
            '    ip=$(srun --overlap --nodes=1 --ntasks=1 --nodelist="$1" \\',
            f"        ip -4 -o addr show dev {shell_word(interface)} \\",
            "        | awk '{ split($4, a, \"/\"); print a[1]; exit }') || true",
            f'    [[ -n $ip ]] || die "node $1 has no IPv4 address on {interface}"',
            '    printf "%s\\n" "$ip"',
            "}",
        ]
    return [
        "node_ip() {",
        "    local addr",
        "    addr=$(scontrol show node \"$1\" | grep -oE 'NodeAddr=[^ ]+' | cut -d= -f2) || true",
        "    if [[ ! $addr =~ ^[0-9]+\\.[0-9]+\\.[0-9]+\\.[0-9]+$ ]]; then",
        "        addr=$(getent ahostsv4 \"$addr\" | awk '{ print $1; exit }') || true",
        "    fi",
        '    [[ -n $addr ]] || die "no IPv4 address for node $1 (NodeAddr)"',
        '    printf "%s\\n" "$addr"',
        "}",
    ]
