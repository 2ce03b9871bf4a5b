"""Every reader a RayJob's `spec.entrypoint` passes through on its way to the trainer, per KubeRay
submission mode, as commands that run here with real shells (tests import it).

- HTTPMode: the operator POSTs the entrypoint as JSON (ConvertRayJobToReq: no shell); Ray's job
  supervisor runs it with `subprocess.Popen(entrypoint, shell=True)`, i.e. `/bin/sh -c` (dash here;
  bash where an image links /bin/sh to it, so both run).
- K8sJobMode (KubeRay's default): Kubernetes expands `$(NAME)` and `$$` in the submitter container's
  args; the submitter runs `/bin/bash -ce --` on the line BuildJobSubmitCommand joins with spaces
  (`... ray job submit --address A --no-wait --metadata-json "M" --submission-id ID -- ENTRYPOINT ;
  fi ; ray job logs ...`); `ray job submit` joins the words bash gave it (FAKE_RAY: with
  `subprocess.list2cmdline` before ray-project/ray#63797, `shlex.join` after, as RAY_CLI_JOIN says)
  and the supervisor runs that with `/bin/sh -c`. The wait loop before it (a health probe) is left
  out: it never reads the entrypoint.
"""

from __future__ import annotations

import json
import re
from typing import Any

RAY_JOINS = ("list2cmdline", "shlex.join")

# `ray` for the K8sJobMode chain: `job status` says "not submitted yet", `job submit` joins its
# entrypoint words as Ray's CLI does and runs the result as the supervisor does (shell=True).
FAKE_RAY = """#!{real}
import os, shlex, subprocess, sys
args = sys.argv[1:]
if args[:2] == ["job", "status"]:
    sys.exit(1)
if args[:2] == ["job", "submit"]:
    words = args[args.index("--") + 1 :]
    join = subprocess.list2cmdline if os.environ["RAY_CLI_JOIN"] == "list2cmdline" else shlex.join
    sys.exit(subprocess.run(join(words), shell=True).returncode)
"""

ADDRESS = "http://rayjob-head-svc.default.svc.cluster.local:8265"
JOB_ID = "rayjob-abcde"


def _go_quote(text: str) -> str:
    """Go's strconv.Quote for the ASCII JSON KubeRay quotes (`"` and `\\` escaped)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def k8s_args(text: str, env: dict[str, str] | None = None) -> str:
    """A container arg as Kubernetes passes it: `$$` is `$`, `$(NAME)` of a defined NAME its value."""
    known = env or {}

    def expand(found: re.Match[str]) -> str:
        if found.group(0) == "$$":
            return "$"
        return known.get(found.group(1), found.group(0))

    return re.sub(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)", expand, text)


def submitter_line(spec: dict[str, Any]) -> str:
    """The K8sJobMode submitter's `bash -c` text (after Kubernetes' arg expansion)."""
    words = ["if", "!", "ray", "job", "status", "--address", ADDRESS, JOB_ID, ">/dev/null", "2>&1", ";"]
    words += ["then"]
    words += ["ray", "job", "submit", "--address", ADDRESS, "--no-wait"]
    if spec.get("metadata"):
        words += ["--metadata-json", _go_quote(json.dumps(spec["metadata"], separators=(",", ":")))]
    words += ["--submission-id", JOB_ID, "--", spec["entrypoint"].strip(), ";", "fi", ";"]
    words += ["ray", "job", "logs", "--address", ADDRESS, "--follow", JOB_ID]
    return k8s_args(" ".join(words))


def chain(job: dict[str, Any]) -> list[tuple[list[str], dict[str, str]]]:
    """The commands (argv, extra env) that deliver `job`'s entrypoint here, one per variant of the
    mode's readers; each must give the trainer the same argv."""
    spec = job["spec"]
    if spec.get("submissionMode", "K8sJobMode") == "HTTPMode":
        return [(["/bin/sh", "-c", spec["entrypoint"]], {}), (["bash", "-c", spec["entrypoint"]], {})]
    # utils.GetContainerCommand(["e"]): `/bin/bash -ce --`
    return [(["bash", "-ce", "--", submitter_line(spec)], {"RAY_CLI_JOIN": join}) for join in RAY_JOINS]
