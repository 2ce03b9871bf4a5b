from __future__ import annotations

import textwrap
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from rlcat.diagnostics import Severity
from rlcat.guards.base import Context, Finding, Guard, hint, register, said
from rlcat.guards.security.values import quoted
from rlcat.syntax.docker_run import DockerRunError, docker_run_flags


@dataclass(frozen=True)
class Hazard:
    """What a variable makes a launch run, and where that behaviour is documented."""

    effect: str
    reference: str


# Variables named exactly. The rule: the variable names code to run, a file or folder code is loaded
# from, or changes how a shell reads the scripts it runs, for a program every launch may start (the
# dynamic loader, the shells, the language runtimes, the compilers Triton and PyTorch run).
NAMED: dict[str, Hazard] = {
    "LD_PRELOAD": Hazard(
        "the dynamic loader ld.so loads the shared objects it names into every dynamically linked "
        "program, before the program's own libraries",
        "ld.so(8) ENVIRONMENT: LD_PRELOAD",
    ),
    "LD_AUDIT": Hazard(
        "the dynamic loader ld.so loads the auditing shared objects it names into every dynamically "
        "linked program and calls them at each library event",
        "ld.so(8) ENVIRONMENT: LD_AUDIT; rtld-audit(7)",
    ),
    "LD_LIBRARY_PATH": Hazard(
        "folders the dynamic loader ld.so searches for every program's libraries before the system's",
        "ld.so(8) ENVIRONMENT: LD_LIBRARY_PATH",
    ),
    "GCONV_PATH": Hazard(
        "folders where glibc's iconv looks for gconv modules, shared objects it loads to convert "
        "character sets (the pkexec exploit CVE-2021-4034 used it)",
        "glibc manual, 6.5.3 The iconv Implementation in the GNU C Library",
    ),
    "PATH": Hazard(
        "the folders searched for every command named without a folder: the launch script's "
        "`python3`, and every program a launched process starts",
        "POSIX XBD 8.3 Other Environment Variables; Bash manual 5.1 Bourne Shell Variables",
    ),
    "BASH_ENV": Hazard(
        "bash reads and runs the file it names before running any script, so every bash script the "
        "launch starts runs that file first",
        "Bash manual 6.2 Bash Startup Files",
    ),
    "ENV": Hazard(
        "sh, and bash in POSIX mode, read and run the file it names when they start interactively",
        "POSIX sh(1) ENVIRONMENT VARIABLES; Bash manual 6.2 Bash Startup Files",
    ),
    "SHELLOPTS": Hazard(
        "bash turns on the options it lists when it starts: `xtrace`, for one, makes every bash "
        "script expand PS4 before each command",
        "Bash manual 5.2 Bash Variables",
    ),
    "BASHOPTS": Hazard(
        "bash turns on the shopt options it lists when it starts (`nullglob`, `extglob`, "
        "`extdebug`), changing what every script's words expand to",
        "Bash manual 5.2 Bash Variables; 4.3.2 The Shopt Builtin",
    ),
    "PS4": Hazard(
        "bash expands it, command substitution included, before each command it traces; with "
        "SHELLOPTS=xtrace that runs its code in every bash script (bash ignores it when run as root)",
        "Bash manual 5.2 Bash Variables; 6.9 Controlling the Prompt",
    ),
    "PS0": Hazard(
        "an interactive bash expands it, command substitution included, after reading each command",
        "Bash manual 5.2 Bash Variables; 6.9 Controlling the Prompt",
    ),
    "PS1": Hazard(
        "an interactive bash expands it, command substitution included, before each prompt",
        "Bash manual 5.1 Bourne Shell Variables; 6.9 Controlling the Prompt",
    ),
    "PS2": Hazard(
        "an interactive bash expands it, command substitution included, before each continuation line",
        "Bash manual 5.1 Bourne Shell Variables; 6.9 Controlling the Prompt",
    ),
    "PROMPT_COMMAND": Hazard(
        "an interactive bash runs it as a command before each prompt",
        "Bash manual 5.2 Bash Variables",
    ),
    "IFS": Hazard(
        "the characters a shell splits unquoted expansions at; POSIX lets a shell take it from the "
        "environment (bash and dash reset it, other shells need not), and one that does splits every "
        "unquoted expansion of its scripts into other words",
        "POSIX XCU 2.5.3 Shell Variables; Bash manual 5.1 Bourne Shell Variables",
    ),
    "GLOBIGNORE": Hazard(
        "file names bash leaves out of every pathname expansion, so a script's `*` matches other files",
        "Bash manual 5.2 Bash Variables; 3.5.8 Filename Expansion",
    ),
    "CDPATH": Hazard(
        "folders `cd` searches for a relative folder name, so a script's `cd build` can enter a folder "
        "elsewhere and run what it finds there",
        "POSIX cd(1); Bash manual 5.1 Bourne Shell Variables",
    ),
    "HOME": Hazard(
        "where shells read their startup files (~/.bashrc) and Python finds the user site-packages "
        "(~/.local/lib/pythonX.Y/site-packages), whose .pth files run at start-up; rlcat's `~/` data "
        "paths resolve under it too",
        "Bash manual 6.2 Bash Startup Files; Python docs, site module (site.USER_BASE, .pth files)",
    ),
    "PYTHONPATH": Hazard(
        "folders searched for modules before the installed packages, so any import can load other code",
        "Python docs, Command line and environment: PYTHONPATH",
    ),
    "PYTHONHOME": Hazard(
        "the folder Python takes its standard library from",
        "Python docs, Command line and environment: PYTHONHOME",
    ),
    "PYTHONPLATLIBDIR": Hazard(
        "the name of the library folder under Python's prefix; a relative value such as `../../x` moves "
        "the standard library to another folder",
        "Python docs, Command line and environment: PYTHONPLATLIBDIR",
    ),
    "PYTHONUSERBASE": Hazard(
        "the user base folder: Python adds its site-packages to the module path and runs the `import` "
        "lines of its .pth files at start-up",
        "Python docs, Command line and environment: PYTHONUSERBASE; site module (.pth files)",
    ),
    "PYTHONSTARTUP": Hazard(
        "a file of Python code every interactive interpreter runs before its first prompt",
        "Python docs, Command line and environment: PYTHONSTARTUP",
    ),
    "PERL5LIB": Hazard(
        "folders perl searches for modules before the installed ones",
        "perlrun(1) ENVIRONMENT",
    ),
    "PERLLIB": Hazard(
        "folders perl searches for modules before the installed ones (when PERL5LIB is unset)",
        "perlrun(1) ENVIRONMENT",
    ),
    "PERL5OPT": Hazard(
        "command-line switches for every perl: `-M` loads a module, `-d` the debugger PERL5DB names",
        "perlrun(1) ENVIRONMENT",
    ),
    "PERL5DB": Hazard(
        "the code perl runs to load its debugger under `-d`, which PERL5OPT can add",
        "perlrun(1) ENVIRONMENT",
    ),
    "RUBYOPT": Hazard(
        "command-line options for every ruby: `-r` requires a library first",
        "ruby(1) ENVIRONMENT",
    ),
    "RUBYLIB": Hazard(
        "folders ruby searches for libraries before the installed ones",
        "ruby(1) ENVIRONMENT",
    ),
    "NODE_OPTIONS": Hazard(
        "command-line options for every node: `--require` and `--import` preload a module",
        "Node.js docs, Command-line API: NODE_OPTIONS",
    ),
    "NODE_PATH": Hazard(
        "folders node searches for modules",
        "Node.js docs, Command-line API: NODE_PATH",
    ),
    "JAVA_TOOL_OPTIONS": Hazard(
        "options every JVM reads: `-javaagent:` and `-agentpath:` load an agent's code",
        "JVM Tool Interface specification, Command-Line Option: JAVA_TOOL_OPTIONS",
    ),
    "JDK_JAVA_OPTIONS": Hazard(
        "options the java launcher (JDK 9 and later) adds to its command line, agents included",
        "java(1) Using the JDK_JAVA_OPTIONS Launcher Environment Variable",
    ),
    "_JAVA_OPTIONS": Hazard(
        "options HotSpot JVMs read before their command line, agents included",
        "Oracle Java troubleshooting guide, Environment Variables and System Properties",
    ),
    "CC": Hazard(
        "the C compiler Triton runs to build each kernel's launcher, and setuptools for extensions",
        "triton/runtime/build.py (get_cc)",
    ),
    "CXX": Hazard(
        "the C++ compiler PyTorch's inductor and torch.utils.cpp_extension run",
        "torch/_inductor/config.py (cpp.cxx); torch/utils/cpp_extension.py",
    ),
}

# Every variable that starts with one of these.
PREFIXES: dict[str, Hazard] = {
    "LD_": Hazard(
        "read by the dynamic loader ld.so, which starts every dynamically linked program: the LD_ "
        "variables choose, load and bind its libraries, or (LD_TRACE_LOADED_OBJECTS) list them "
        "instead of running the program",
        "ld.so(8) ENVIRONMENT",
    ),
    "DYLD_": Hazard(
        "read by macOS's dynamic loader dyld: DYLD_INSERT_LIBRARIES loads libraries into every process, "
        "DYLD_LIBRARY_PATH and DYLD_FRAMEWORK_PATH are searched first",
        "dyld(1) ENVIRONMENT VARIABLES",
    ),
}

# Flagged only when the value names a file (holds a `/`): a bare name picks a plugin installed in
# the library path, which is how clusters select their network plugin (NCCL_NET_PLUGIN=ofi).
PLUGIN_FILES: dict[str, Hazard] = {
    name: Hazard(
        f"NCCL and RCCL load the {kind} plugin library it names; a path loads that file instead of "
        "an installed plugin",
        reference,
    )
    for name, kind, reference in (
        ("NCCL_NET_PLUGIN", "network", "NCCL docs, Environment Variables: NCCL_NET_PLUGIN"),
        ("NCCL_TUNER_PLUGIN", "tuner", "NCCL docs, Environment Variables: NCCL_TUNER_PLUGIN"),
        ("NCCL_PROFILER_PLUGIN", "profiler", "NCCL docs, Environment Variables: NCCL_PROFILER_PLUGIN"),
        ("NCCL_ENV_PLUGIN", "environment", "RCCL docs, Using the RCCL environment plugin API"),
    )
}


def hazard(name: str, value: str) -> Hazard | None:
    """Why setting `name` to `value` changes what a launch runs, or None when it does not."""
    found = NAMED.get(name)
    if found is not None:
        return found
    for prefix, prefixed in PREFIXES.items():
        if name.startswith(prefix):
            return prefixed
    plugin = PLUGIN_FILES.get(name)
    return plugin if plugin is not None and "/" in value else None


@dataclass(frozen=True)
class DockerRunVariable:
    """A variable a profile's `docker_run` sets in the container (`-e NAME=VALUE`, `--env=NAME`),
    the index of its entry, the option as written, and what it changes."""

    entry: int
    option: str
    name: str
    hazard: Hazard


def docker_run_variables(docker_run: Sequence[str]) -> list[DockerRunVariable]:
    """The variables of a profile's `docker_run` that change what runs, judged as `env:` is. A bare
    `-e NAME` passes the host's value on: judged with an empty value. An entry that does not parse
    is the profile model's refusal (model.platform), not a finding."""
    try:
        flags = docker_run_flags(docker_run).flags
    except DockerRunError:
        return []
    found = []
    for flag in flags:
        if flag.name == "--env" and flag.value is not None:
            name, _, value = flag.value.partition("=")
            danger = hazard(name, value)
            if danger is not None:
                found.append(DockerRunVariable(flag.entry, f"{flag.name}={flag.value}", name, danger))
    return found


def _listing() -> str:
    """The docs' list of flagged variables, from the tables the check uses."""
    lines = [f"- `{prefix}*`: {h.effect} ({h.reference})." for prefix, h in PREFIXES.items()]
    lines += [f"- `{name}`: {h.effect} ({h.reference})." for name, h in NAMED.items()]
    lines += [f"- `{name}` set to a path: {h.effect} ({h.reference})." for name, h in PLUGIN_FILES.items()]
    return "\n".join(
        textwrap.fill(line, width=100, subsequent_indent="  ", break_on_hyphens=False, break_long_words=False)
        for line in lines
    )


_DOCS = """\
The launch environment sets a variable that changes which programs or libraries run.

**Why**: a recipe's `env:` (and its `platforms:` block, a `--set env.NAME=...`, a platform profile's
`env` and tweaks, and the `-e`/`--env` options of its `docker_run`, which set the container's env
on every node) is exported before verl starts, to every process of the launch. Some variables do
not configure verl at all: they name code to load (LD_PRELOAD, PYTHONPATH), a program to run (CC),
or change how a shell reads the scripts it runs (BASH_ENV, SHELLOPTS with PS4). In a pull request,
one line of such an `env:` entry runs code of the author's choosing on every node, and nothing in
the recipe's training settings shows it. The finding points at the file and line that set the
variable (or the command-line argument); the launch environment is not the place for these, so a
recipe that really needs one says why with `allow:`, where reviewers see it.

The variables flagged, and what each one changes:

{listing}

Not flagged: PYTHONSAFEPATH and PYTHONNOUSERSITE only take folders off the module path; PYTHONINSPECT
names no code (a process started from a terminal opens a prompt after its program ends, one without
a terminal runs as before); PYTHONBREAKPOINT, PYTHONWARNINGS and Ray's RAY_RUNTIME_ENV_HOOK name
modules that are already importable, and reach other code only together with a flagged variable;
GLIBC_TUNABLES names no file; device selection and tuning (CUDA_VISIBLE_DEVICES, HIP_VISIBLE_DEVICES,
NCCL_* other than plugin paths, PYTORCH_ALLOC_CONF). Cache folders (TRITON_CACHE_DIR,
TORCHINDUCTOR_CACHE_DIR, HF_HOME, PYTHONPYCACHEPREFIX) hold code compiled earlier and are left to
review: clusters point them at local disks as a matter of course. bash's exported functions
(`BASH_FUNC_name%%`) cannot be set at all: an environment variable's name in rlcat is
`[A-Za-z_][A-Za-z0-9_]*`.

**Bad**:

```yaml
env:
  LD_PRELOAD: ./tools/libfaster_malloc.so
  PYTHONPATH: ./patches
```

**Good**: libraries and patches belong in the image the platform profile names; the recipe sets only
what configures the run.

```yaml
env:
  VLLM_ALLREDUCE_USE_SYMM_MEM: "0"
```

When a recipe does need one of these, it says why:

```yaml
env:
  LD_PRELOAD: /usr/lib/x86_64-linux-gnu/libjemalloc.so.2
allow:
  RLC901: jemalloc from the image's own package, as the cluster's runbook asks
```
"""


@register
class EnvironmentThatChangesWhatRuns(Guard):
    # the docs page lists every flagged variable from the tables above, so the page and the check
    # cannot disagree
    __doc__ = _DOCS.format(listing=_listing())

    id = "RLC901"
    name = "environment_that_changes_what_runs"
    title = "the launch environment changes which programs or libraries run"
    severity = Severity.WARNING
    source = (
        "ld.so(8), ENVIRONMENT: https://man7.org/linux/man-pages/man8/ld.so.8.html",
        "Bash Reference Manual, 5 Shell Variables and 6.2 Bash Startup Files: "
        "https://www.gnu.org/software/bash/manual/bash.html",
        "POSIX.1-2017 XCU 2.5.3 Shell Variables and sh(1): https://pubs.opengroup.org/onlinepubs/9699919799/",
        "Python docs, Command line and environment: https://docs.python.org/3/using/cmdline.html#environment-variables",
        "Python docs, site module (.pth files, USER_BASE): https://docs.python.org/3/library/site.html",
        "perlrun(1) ENVIRONMENT: https://perldoc.perl.org/perlrun#ENVIRONMENT",
        "Node.js docs, Command-line API: https://nodejs.org/api/cli.html#environment-variables",
        "JVM TI specification, JAVA_TOOL_OPTIONS: https://docs.oracle.com/en/java/javase/21/docs/specs/jvmti.html",
        "NCCL docs, Environment Variables: https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html",
        "Qualys, CVE-2021-4034 (pkexec, GCONV_PATH): https://www.qualys.com/2022/01/25/cve-2021-4034/pwnkit.txt",
        "triton-lang/triton python/triton/runtime/build.py (CC)",
    )
    since = "0.1.0"

    def check(self, ctx: Context) -> Iterator[Finding]:
        for name, history in ctx.plan.env.items():
            if history.removed:
                continue
            setting = history.final
            value = str(setting.value)
            found = hazard(name, value)
            if found is None:
                continue
            yield Finding(
                f"env {name}={quoted(value)} from {setting.origin.where()}: {found.effect}",
                env=name,
                hint=hint(
                    "put it in the image or the cluster's environment instead",
                    said(f'; if the recipe needs it, say why: allow: {{{self.id}: "the reason"}}', ""),
                ),
            )
        for variable in docker_run_variables(ctx.profile.docker_run):
            option = quoted(variable.option)
            yield Finding(
                f"docker_run {option} of platform {ctx.profile.name}: {variable.hazard.effect}",
                hint="put it in the image instead; a platform profile's docker_run is not the place for it",
            )
