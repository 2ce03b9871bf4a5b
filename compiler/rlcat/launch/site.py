"""What a site adds to a launch: folders the containers see (`--mount`), paths that live in the
image (`--in-image`), variables passed by name (`--pass-env`), shell lines run on each node
(`--setup`), sbatch options (`--sbatch-arg`) and how each node gets the image (`--pull`).

Each comes from the project file's `[launch]` table and from the command line, the project's
entries first. They are untrusted text (a project file may come from a pull request): each has one
parser here, and what does not parse, or would reach past its place, is RLC1013 at the file, line
and key (or the argument) that gave it.
"""

from __future__ import annotations

import os
import posixpath
import re
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, get_args

from rlcat.diagnostics import Diagnostic, RlcatError, Where, diag, printable
from rlcat.model.paths import placeholder_problem, split_placeholder
from rlcat.model.project import PullPolicy
from rlcat.syntax.bash import shell_word
from rlcat.syntax.docker_run import host_path_hazard

if TYPE_CHECKING:
    from rlcat.project import Project

SITE_CODE = "RLC1013"
PULL_POLICIES: tuple[str, ...] = get_args(PullPolicy)
# Variables --pass-env refuses: the container's or node's own (a host's PATH or HOME in a container
# breaks it; rlcat passes HOME and PWD itself), the loader's, and those Ray and Slurm set per job.
NOT_PASSED = frozenset({"PATH", "HOME", "PWD", "LD_PRELOAD", "LD_LIBRARY_PATH", "RAY_ADDRESS"})
NOT_PASSED_PREFIXES = ("SLURM_", "RAY_")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# characters no mount path, sbatch value or setup line carries: control characters (a line break
# would end an `#SBATCH` line or a shell line early)
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


@dataclass(frozen=True)
class Given:
    """One entry of a launch setting, and where it was given: the project file's line and key, or
    the command-line argument."""

    text: str
    where: Where = field(default_factory=dict)  # type: ignore[assignment]
    key: str | None = None

    def at(self) -> dict[str, object]:
        """diag(...) keyword arguments that point at the entry."""
        return {**self.where, **({"key": self.key} if self.key else {})}


def entries(
    project_values: Sequence[str], project_where: Where, setting: str, option: str, cli: Sequence[str]
) -> list[Given]:
    """The project's entries of `setting` (at its line, key `setting[i]`), then the command line's."""
    found = [Given(text, project_where, f"{setting}[{i}]") for i, text in enumerate(project_values)]
    return found + [Given(text, {"argument": f"{option} {text}"}) for text in cli]


@dataclass(frozen=True)
class SitePath:
    """A path as a launch writes it: absolute, or after a leading `~`/`$HOME` or `$PWD`
    (`variable`), which the node's shell resolves."""

    variable: str | None
    rest: str

    def bash(self) -> str:
        """The path as one bash word: `"$HOME"/data`, `/scratch`."""
        if self.variable is None:
            return shell_word(self.rest)
        return f'"${self.variable}"' + (shell_word(self.rest) if self.rest else "")

    def shown(self) -> str:
        """The path as a person types it: `~/data`, `$PWD/out`, `/scratch`."""
        lead = {"HOME": "~", "PWD": "$PWD"}.get(self.variable or "", "")
        return lead + self.rest if lead else self.rest

    def local(self) -> str:
        """The path with its variable resolved here (rlcat runs where the job is submitted: a
        cluster's shared HOME and working folder name the same folders on its nodes)."""
        base = {"HOME": os.path.expanduser("~"), "PWD": os.getcwd()}.get(self.variable or "", "")
        return posixpath.normpath(base + self.rest) if self.variable else posixpath.normpath(self.rest)


@dataclass(frozen=True)
class Mount:
    """`SRC:DST[:ro]`: a host folder and where the container sees it."""

    source: SitePath
    target: SitePath
    read_only: bool
    given: Given

    def bash(self) -> str:
        """SRC:DST[:ro] as one bash word, as docker -v, apptainer --bind and pyxis read it."""
        return f"{self.source.bash()}:{self.target.bash()}" + (":ro" if self.read_only else "")


@dataclass(frozen=True)
class SbatchArg:
    """One sbatch option, as `--name=value` or `--name` (a switch)."""

    name: str
    value: str | None
    given: Given

    def line(self) -> str:
        return f"#SBATCH {self.name}" + (f"={self.value}" if self.value is not None else "")


@dataclass(frozen=True)
class Site:
    """A launch's site settings, parsed."""

    mounts: tuple[Mount, ...] = ()
    in_image: tuple[SitePath, ...] = ()
    pass_env: tuple[Given, ...] = ()
    setup: tuple[Given, ...] = ()
    sbatch_args: tuple[SbatchArg, ...] = ()
    pull: str = "missing"


def site_path(text: str) -> SitePath | str:
    """The path of `text`, or why it is refused."""
    if not text or _CONTROL.search(text):
        return "an empty path, or one with a control character"
    variable, rest = split_placeholder(text)
    if variable is None and not text.startswith("/"):
        return f"{printable(text)} is not absolute: write /PATH, or start it with ~, $HOME or $PWD"
    problem = placeholder_problem(text)
    if problem is not None:
        return problem
    if ".." in rest.split("/"):
        return f"{printable(text)} holds `..`: write the path it names"
    if "," in text:
        return f"{printable(text)} holds `,`, which separates mounts for pyxis"
    return SitePath(variable, rest.rstrip("/") if rest != "/" else rest)


def parse_mount(given: Given) -> Mount | Diagnostic:
    """SRC:DST[:ro|:rw], each path absolute or after ~/$HOME/$PWD; neither side the host's root, a
    system or runtime folder, a home folder as a whole, or a home's credential folder
    (syntax.docker_run.host_path_hazard, the rule RLC904 applies to a profile's bind mounts, with
    data folders inside homes allowed)."""
    parts = given.text.split(":")
    mode = parts.pop() if len(parts) == 3 else "rw"
    if len(parts) != 2 or mode not in ("ro", "rw"):
        return _refused(
            given,
            f"--mount {printable(given.text)} is not SRC:DST or SRC:DST:ro",
            "--mount /scratch/data:/data:ro",
        )
    paths = [site_path(part) for part in parts]
    for path in paths:
        if isinstance(path, str):
            return _refused(given, path)
    source, target = paths
    assert isinstance(source, SitePath) and isinstance(target, SitePath)
    for side, path, what in (
        (source, parts[0], "mounts host folder"),
        (target, parts[1], "covers the container's"),
    ):
        hazard = host_path_hazard(side.local(), home_data=True)
        if hazard is not None:
            return _refused(
                given,
                f"{what} {printable(path)} ({hazard}): host code, credentials or the container's own system",
                "mount the data folder itself (/scratch/data, ~/data), never a home, / or a system folder",
            )
    return Mount(source, target, mode == "ro", given)


def check_pass_env(given: Given, planned: Sequence[str]) -> Diagnostic | None:
    """A variable name the job may get by name."""
    name = given.text
    if not _ENV_NAME.fullmatch(name):
        return _refused(given, f"{printable(name)} is not a variable name")
    if name in NOT_PASSED or name.startswith(NOT_PASSED_PREFIXES):
        return _refused(
            given,
            f"{name} is not passed: it is the node's or the container's own, or Ray's or Slurm's per job",
        )
    if name in planned:
        return _refused(
            given,
            f"the plan's env sets {name}: passing the submitter's value too would make two",
            "leave one out",
        )
    return None


def check_setup_line(given: Given) -> Diagnostic | None:
    """A setup line is bash code by intent, run as written; it must be one line that bash parses on
    its own (`bash -n`), so it cannot reach into the script around it: no line break, no
    here-document (its body would be the lines after it), no unbalanced quote or `if`, no trailing
    backslash joining it to the next line."""
    line = given.text
    if _CONTROL.sub("", line.replace("\t", " ")) != line.replace("\t", " "):
        return _refused(given, "a setup entry is one line: no line break or control character")
    if re.search(r"(?<!<)<<(?!<)", line):
        return _refused(given, "a here-document takes the lines after it: write the setup line without one")
    if re.search(r"(?<!\\)(\\\\)*\\$", line):
        return _refused(given, "a trailing backslash joins the line to the next one")
    bash = shutil.which("bash")
    if bash is None:
        return _refused(given, "bash is not on PATH here, so the setup line cannot be checked")
    checked = subprocess.run(
        [bash, "--norc", "--noprofile", "-n"], input=line + "\n", capture_output=True, text=True, check=False
    )
    if checked.returncode != 0 or checked.stderr.strip():
        said = checked.stderr.strip().splitlines()[-1:] or ["it does not parse"]
        said = [re.sub(r"^\S*bash: line \d+: ", "", said[0])]
        return _refused(given, f"bash does not parse the setup line on its own: {printable(said[0])}")
    return None


# sbatch 22.05's options (`sbatch --help`), long name → takes a value ("=" optional for those
# marked None: --exclusive[=user], --export[=names], --nice[=value], --propagate[=rlimits]).
SBATCH_OPTIONS: dict[str, bool | None] = {
    "--array": True, "--account": True, "--bb": True, "--bbf": True, "--begin": True,
    "--comment": True, "--cpu-freq": True, "--cpus-per-task": True, "--dependency": True,
    "--deadline": True, "--delay-boot": True, "--chdir": True, "--error": True, "--export": None,
    "--export-file": True, "--get-user-env": False, "--gid": True, "--gres": True,
    "--gres-flags": True, "--hold": False, "--ignore-pbs": False, "--input": True,
    "--job-name": True, "--no-kill": False, "--licenses": True, "--clusters": True,
    "--container": True, "--distribution": True, "--mail-type": True, "--mail-user": True,
    "--mcs-label": True, "--ntasks": True, "--nice": None, "--no-requeue": False,
    "--ntasks-per-node": True, "--nodes": True, "--output": True, "--overcommit": False,
    "--partition": True, "--parsable": False, "--power": True, "--priority": True,
    "--profile": True, "--propagate": None, "--qos": True, "--quiet": False, "--reboot": False,
    "--requeue": False, "--oversubscribe": False, "--core-spec": True, "--signal": True,
    "--spread-job": False, "--switches": True, "--thread-spec": True, "--time": True,
    "--time-min": True, "--uid": True, "--use-min-nodes": False, "--verbose": False,
    "--wait": False, "--wckey": True, "--wrap": None, "--cluster-constraint": True,
    "--contiguous": False, "--constraint": True, "--nodefile": True, "--mem": True,
    "--mincpus": True, "--reservation": True, "--tmp": True, "--nodelist": True,
    "--exclude": True, "--exclusive": None, "--mem-per-cpu": True, "--sockets-per-node": True,
    "--cores-per-socket": True, "--threads-per-core": True, "--extra-node-info": True,
    "--ntasks-per-core": True, "--ntasks-per-socket": True, "--cpus-per-gpu": True,
    "--gpus": True, "--gpu-bind": True, "--gpu-freq": True, "--gpus-per-node": True,
    "--gpus-per-socket": True, "--gpus-per-task": True, "--mem-per-gpu": True,
}  # fmt: skip
SBATCH_SHORT = {
    "-a": "--array", "-A": "--account", "-b": "--begin", "-c": "--cpus-per-task",
    "-d": "--dependency", "-D": "--chdir", "-e": "--error", "-H": "--hold", "-i": "--input",
    "-J": "--job-name", "-k": "--no-kill", "-L": "--licenses", "-M": "--clusters",
    "-m": "--distribution", "-n": "--ntasks", "-N": "--nodes", "-o": "--output",
    "-O": "--overcommit", "-p": "--partition", "-q": "--qos", "-Q": "--quiet",
    "-s": "--oversubscribe", "-S": "--core-spec", "-t": "--time", "-v": "--verbose",
    "-W": "--wait", "-C": "--constraint", "-F": "--nodefile", "-w": "--nodelist",
    "-x": "--exclude", "-B": "--extra-node-info", "-G": "--gpus",
}  # fmt: skip
# What the script sets or relies on itself, and why an sbatch option may not change it.
SBATCH_CONTROLLED = {
    "--nodes": "the plan's nodes (resources.nodes): change the recipe, or --set resources.nodes=N",
    "--ntasks": "one task per node, which the script's srun steps rely on",
    "--ntasks-per-node": "one task per node, which the script's srun steps rely on",
    "--gpus-per-node": "the plan's GPUs per node: --set resources.gpus_per_node=N",
    "--gpus": "the plan's GPUs per node: --set resources.gpus_per_node=N",
    "--gpus-per-task": "the plan's GPUs per node: --set resources.gpus_per_node=N",
    "--gres": "the plan's accelerators per node: --set resources.gpus_per_node=N",
    "--cpus-per-task": "rlcat's --cpus-per-node",
    "--exclusive": "rlcat's --cpus-per-node (without it the job has whole nodes)",
    "--output": "rlcat names the output file of each submission, so --wait reads the job's own",
    "--error": "rlcat names the output file of each submission, so --wait reads the job's own",
    "--input": "the script reads nothing from its stdin",
    "--parsable": "rlcat's --submit reads sbatch's answer itself",
    "--wait": "rlcat's --submit --wait follows the job itself",
    "--array": "one job runs one plan: an array would start the cluster many times",
    "--wrap": "the script is the job",
    "--export": "the job's env is the plan's and the --pass-env names; --export would change what reaches it",
    "--export-file": "the job's env is the plan's and the --pass-env names",
    "--get-user-env": "the job's env is the plan's and the --pass-env names",
    "--container": "rlcat's --container starts the node's container",
    "--uid": "the job runs as its submitter",
    "--gid": "the job runs as its submitter",
    "--clusters": "rlcat's --submit --wait follows the job on the cluster it was submitted to",
    "--chdir": "the job's output and relative paths are the submitting folder's",
}
_SBATCH_VALUE = re.compile(r"[^\s'\"\\`$#;]+")


def parse_sbatch_arg(given: Given) -> SbatchArg | Diagnostic:
    """`--name=value`, `--name` (a switch), `-X value` or `-Xvalue`: an option of sbatch 22.05
    that rlcat does not set itself, with a value of printable characters that neither a shell nor
    sbatch's own `#SBATCH` reader could split or expand."""
    text = given.text.strip()
    if text.startswith("--"):
        name, eq, value = text.partition("=")
        has_value: str | None = value if eq else None
        if " " in name:
            name, _, rest = name.partition(" ")
            has_value = rest.strip()
    elif re.fullmatch(r"-[A-Za-z].*", text):
        name = SBATCH_SHORT.get(text[:2], text[:2])
        has_value = text[2:].strip() or None
    else:
        return _refused(given, f"{printable(text)} is not an sbatch option", "--sbatch-arg=--partition=gpu")
    takes = SBATCH_OPTIONS.get(name, "unknown")
    if takes == "unknown":
        return _refused(
            given, f"{printable(name)} is not an sbatch option (sbatch 22.05)", "sbatch --help lists them"
        )
    if name in SBATCH_CONTROLLED:
        return _refused(given, f"{name} is set by rlcat: {SBATCH_CONTROLLED[name]}")
    if takes is True and not has_value:
        return _refused(given, f"{name} needs a value: {name}=VALUE")
    if takes is False and has_value is not None:
        return _refused(given, f"{name} is a switch: write it without a value")
    if has_value is not None and not _SBATCH_VALUE.fullmatch(has_value):
        return _refused(
            given,
            f"the value of {name} holds a space, quote, `\\`, `$`, `#`, `;` or a control character, "
            "which sbatch's #SBATCH reader or a shell would split or expand",
        )
    return SbatchArg(name, has_value, given)


def _refused(given: Given, message: str, hint: str | None = None) -> Diagnostic:
    return diag(SITE_CODE, message, **given.at(), **({"hint": hint} if hint else {}))


@dataclass(frozen=True)
class SiteArguments:
    """The command line's site options, as typed (each list repeatable)."""

    mounts: Sequence[str] = ()
    in_image: Sequence[str] = ()
    pass_env: Sequence[str] = ()
    setup: Sequence[str] = ()
    sbatch_args: Sequence[str] = ()
    pull: str | None = None


def read_site(project: Project | None, arguments: SiteArguments) -> Site:
    """The project file's `[launch]` entries, then the command line's, each parsed and checked;
    RlcatError with every problem (RLC1013) at the file, line and key or the argument."""
    settings = project.settings.launch if project is not None else None

    def given(setting: str, option: str, cli: Sequence[str]) -> list[Given]:
        values: list[str] = []
        where: Where = {}
        if settings is not None and project is not None:
            holder: Any = settings.slurm if setting.startswith("slurm.") else settings
            values = list(getattr(holder, setting.removeprefix("slurm.")))
            where = project.where(f"launch.{setting}")
        return entries(values, where, f"launch.{setting}", option, cli)

    problems: list[Diagnostic] = []
    mounts = []
    for entry in given("mounts", "--mount", arguments.mounts):
        parsed = parse_mount(entry)
        (problems.append(parsed) if isinstance(parsed, Diagnostic) else mounts.append(parsed))
    in_image = []
    for entry in given("in_image", "--in-image", arguments.in_image):
        path = site_path(entry.text)
        (problems.append(_refused(entry, path)) if isinstance(path, str) else in_image.append(path))
    sbatch_args = []
    for entry in given("slurm.sbatch_args", "--sbatch-arg", arguments.sbatch_args):
        arg = parse_sbatch_arg(entry)
        (problems.append(arg) if isinstance(arg, Diagnostic) else sbatch_args.append(arg))
    setup = given("setup", "--setup", arguments.setup)
    problems += [p for entry in setup if (p := check_setup_line(entry)) is not None]
    pass_env = given("pass_env", "--pass-env", arguments.pass_env)
    problems += [p for entry in pass_env if (p := check_pass_env(entry, ())) is not None]
    if problems:
        raise RlcatError(problems)
    pull = arguments.pull or (settings.pull if settings is not None else None) or "missing"
    names = list(dict.fromkeys(g.text for g in pass_env))
    unique = tuple(next(g for g in pass_env if g.text == name) for name in names)
    return Site(tuple(mounts), tuple(in_image), unique, tuple(setup), tuple(sbatch_args), pull)
