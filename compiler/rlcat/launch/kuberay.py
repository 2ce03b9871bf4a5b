"""`--target kuberay`: a KubeRay RayJob manifest (`kubectl apply -f rayjob.yaml`): KubeRay starts
a RayCluster of the recipe's nodes, submits the entrypoint, and deletes the cluster when the job
ends.

The plan's env goes into the container env of the head and worker pods, so `ray start` and every
raylet have it from the start; it is not repeated in the job's runtime env, which keeps verl's
ray.init free of runtime-env conflicts (RLC1003), keeps `$` literal (Ray expands runtime-env
values; Kubernetes expands only `$(NAME)`, escaped here as `$$(NAME)`), and keeps the NOSET
variables in the raylets' env, where Ray's job supervisor cannot drop them.

The job is submitted in KubeRay's HTTPMode: the operator POSTs `spec.entrypoint` to the Ray
dashboard as it is (ConvertRayJobToReq), and Ray's job supervisor runs it with
`subprocess.Popen(entrypoint, shell=True)`: one shell, `/bin/sh`, so the argv is quoted once, for
POSIX sh (ENTRYPOINT_SHELLS). The default K8sJobMode passes it through more readers, one of which
no quoting can serve: the submitter pod runs `/bin/bash -c` on a line KubeRay builds by joining
`ray job submit ... -- ENTRYPOINT ;` with spaces (BuildJobSubmitCommand, after Kubernetes' own
`$(NAME)` expansion of container args), then `ray job submit` joins the words bash produced again
before the supervisor's `/bin/sh` reads them: with `subprocess.list2cmdline` (Windows quoting, no
escape for `$` or backticks) before ray-project/ray#63797, with `shlex.join` after (Ray 2.60). A
line right for one join is wrong for the other, so the mode that removes both the bash layer and the
re-join is the one emitted. HTTPMode with `authOptions.mode: token` needs KubeRay 1.5.1
(ray-project/kuberay#4204, released in 1.5.1 by #4214), the version the manifest's header names."""

from __future__ import annotations

import re
from typing import Any

from rlcat import __version__
from rlcat.diagnostics import Diagnostic, RlcatError, diag
from rlcat.launch import checks
from rlcat.launch.base import YAML_HINT, Launch, Target, image_of
from rlcat.launch.command import RAY_AUTH_MODE, ray_accelerator
from rlcat.syntax.bash import POSIX_SH, Shell, shell_word, through_shells
from rlcat.syntax.yaml_text import yaml_document

# The shells `spec.entrypoint` passes through in HTTPMode, outermost first: Ray's job supervisor's
# `/bin/sh -c` (ray/dashboard/modules/job/job_supervisor.py, Popen(shell=True)).
SUBMISSION_MODE = "HTTPMode"
ENTRYPOINT_SHELLS: tuple[Shell, ...] = (POSIX_SH,)

# The extended resource a GPU node advertises, by vendor (device plugins of NVIDIA, AMD, Huawei).
GPU_RESOURCE = {"nvidia": "nvidia.com/gpu", "amd": "amd.com/gpu", "huawei": "huawei.com/Ascend910"}


def k8s_env_value(value: str) -> str:
    """`value` as Kubernetes passes it on: it expands `$(NAME)` in env values and reads `$$` as
    `$`, so doubling every `$` keeps the text as it is."""
    return value.replace("$", "$$")


def k8s_name(text: str) -> str:
    """A DNS-1123 label from a recipe name (lowercase, digits and `-`, at most 63 characters)."""
    name = re.sub(r"[^a-z0-9-]+", "-", text.lower()).strip("-")[:63].strip("-")
    return name or "rlcat"


def _ray_version(launch: Launch) -> str | None:
    found = re.match(r"\d+\.\d+\.\d+", launch.compiled.profile.software.get("Ray", ""))
    return found.group(0) if found else None


# --pull (and the project's [launch].pull) as the kubelet reads it on every node of the RayCluster:
# docker's `missing` is Kubernetes' IfNotPresent (also Kubernetes' own default for a tagged image)
IMAGE_PULL_POLICY = {"always": "Always", "missing": "IfNotPresent", "never": "Never"}


def _container(launch: Launch, name: str, image: str) -> dict[str, Any]:
    command = launch.command
    mode = command.env_vars[RAY_AUTH_MODE]
    # with authOptions.mode token, KubeRay sets RAY_AUTH_MODE and the generated RAY_AUTH_TOKEN itself
    env = [
        {"name": var.name, "value": k8s_env_value(var.value)}
        for var in command.env
        if not (var.name == RAY_AUTH_MODE and mode == "token")
    ]
    gpus = {GPU_RESOURCE[launch.compiled.profile.vendor]: command.gpus_per_node}
    return {
        "name": name,
        "image": image,
        "imagePullPolicy": IMAGE_PULL_POLICY[launch.options.site.pull],
        "env": env,
        "resources": {"limits": gpus, "requests": gpus},
    }


def _group(launch: Launch, container: str, image: str) -> dict[str, Any]:
    count = launch.command.gpus_per_node
    resource = ray_accelerator(launch.compiled.profile.family)
    # stated, not detected: Ray counts Ascend NPUs as a custom resource, GPUs with num-gpus
    # KubeRay hands rayStartParams to a shell: the resources JSON goes in escaped double quotes
    custom = '"{\\"' + resource + '\\": ' + str(count) + '}"'
    params = {"num-gpus": str(count)} if resource == "GPU" else {"resources": custom}
    return {
        "rayStartParams": params,
        "template": {"spec": {"containers": [_container(launch, container, image)]}},
    }


def manifest(launch: Launch) -> dict[str, Any]:
    image = image_of(launch)
    if image is None:
        raise RlcatError([_no_image(launch)])
    command = launch.command
    plan = launch.compiled.plan
    cluster: dict[str, Any] = {}
    version = _ray_version(launch)
    if version:
        cluster["rayVersion"] = version
    cluster["authOptions"] = {"mode": command.env_vars[RAY_AUTH_MODE]}
    cluster["headGroupSpec"] = _group(launch, "ray-head", image)
    if command.nodes > 1:
        workers = command.nodes - 1
        cluster["workerGroupSpecs"] = [
            {"groupName": "gpu-workers", "replicas": workers, "minReplicas": workers, "maxReplicas": workers}
            | _group(launch, "ray-worker", image)
        ]
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayJob",
        "metadata": {
            "name": k8s_name(plan.recipe),
            "labels": {"app.kubernetes.io/managed-by": "rlcat"},
        },
        "spec": {
            "entrypoint": through_shells(command.argv, ENTRYPOINT_SHELLS),
            "submissionMode": SUBMISSION_MODE,
            "shutdownAfterJobFinishes": True,
            "ttlSecondsAfterFinished": 600,
            "metadata": {"rlcat_recipe": plan.recipe, "rlcat_platform": plan.platform},
            "rayClusterSpec": cluster,
        },
    }


def _no_image(launch: Launch) -> Diagnostic:
    return diag(
        "RLC1011",
        f"the {launch.compiled.profile.name} profile names no container image, and a RayJob's pods need one",
        argument="--image",
        hint="--image REGISTRY/verl:TAG (the image verl and this platform's software run in)",
    )


class KubeRay(Target):
    name = "kuberay"
    summary = "a KubeRay RayJob manifest: a RayCluster of the recipe's nodes, the trainer as its job"

    def checks(self, launch: Launch) -> list[Diagnostic]:
        found = checks.gpu_visibility(launch)
        if image_of(launch) is None:
            found.append(_no_image(launch))
        return found

    def render(self, launch: Launch) -> str:
        plan = launch.compiled.plan
        return yaml_document(
            manifest(launch),
            header=[
                f"{plan.recipe} on {plan.platform} (verl {plan.verl_version}), generated by rlcat "
                f"{__version__}; start it with: kubectl apply -f THIS_FILE (KubeRay >= 1.5.1)",
                "Regenerate with: " + " ".join(shell_word(a) for a in launch.regenerate),
            ],
            hint=YAML_HINT,
        )
