"""`--verl-native`: verl's own start-up checks judge what `validate`, `lint` or `compile` looked at,
with an interpreter that has verl, in a subprocess (:mod:`rlcat.native.process`).

A plan or a script's launch becomes an :class:`Ask`: the entry config, the overrides as verl receives
them, the model path, and where each key's value was set. Its case runs what ``main_ppo`` runs before
any GPU work (the runner's docstring says what); a refusal becomes one RLC450 finding at the file and
line that set the key verl's message is about, verl's own message quoted (escaped where every finding
is, by its reporter). Without verl (no interpreter, or ``import verl`` fails there) the command says
so in one line and nothing else changes.

The model: verl reads ``config.json`` and a tokenizer from the model path at start-up. A path that is
a folder here holding a ``config.json`` is used as it is; any other path (a hub id, a folder of
another machine) is pointed at a stand-in folder (:mod:`rlcat.native.models`). The runner sets
``HF_HUB_OFFLINE=1`` and refuses every connection outside loopback: never the network.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rlcat.diagnostics import Diagnostic, Where, diag
from rlcat.native.process import RunnerGone, VerlProcess
from rlcat.verl.names import ENTRY_DIRS

#: One plan's checks; past it the runner stops the case and goes on (RLC451).
CASE_SECONDS = 60
#: Starting the runner (importing verl: about 14 s of CPU) and each reply after it.
START_SECONDS = 300.0
#: The longest quote of verl's message in a finding.
QUOTE_LIMIT = 2000

#: Entry configs whose entrypoint is the fully-async one (its own checks, no validate_config).
_FULLY_ASYNC = ("fully_async_ppo_trainer", "fully_async_ppo_megatron_trainer")


def entry_of(config_name: str) -> str:
    """The entrypoint whose start-up checks judge a plan of `config_name`."""
    return "fully_async" if config_name in _FULLY_ASYNC else "ppo"


def case(
    case_id: str,
    config_name: str,
    overrides: Sequence[str],
    model: Mapping[str, Any],
    timeout: int = CASE_SECONDS,
    *,
    local_models: bool = False,
) -> dict[str, Any]:
    """One case for the runner (its protocol is in runner.py). `local_models`: a model path that is
    a folder here with a config.json is kept; else every model path points at the stand-in."""
    found: dict[str, Any] = {
        "id": case_id,
        "config_dir": ENTRY_DIRS[config_name],
        "config_name": config_name,
        "overrides": list(overrides),
        "entry": entry_of(config_name),
        "model": dict(model),
        "timeout": timeout,
    }
    if local_models:
        found["local_models"] = True
    return found


@dataclass(frozen=True)
class Ask:
    """What verl is asked to start: an entry config and its overrides (as verl receives them), the
    model path, where each key's value was set, and where a refusal no key explains points."""

    config_name: str
    overrides: tuple[str, ...]
    model: Mapping[str, Any]  # the stand-in's config.json (rlcat.native.models.stand_in)
    origins: Mapping[str, Where]
    at: Where
    # the values as text, to tell which key a message that names several is about
    values: Mapping[str, str] = field(default_factory=dict)

    def names_code(self) -> str | None:
        """The override that would make verl's checks run code the plan names, or None: a
        `_target_` anywhere in it, key or value (the class verl builds a section into; Hydra calls
        whatever it names, nested values too) or Hydra's own settings (`hydra.searchpath` adds
        config folders)."""
        for text in self.overrides:
            key = text.split("=", 1)[0].lstrip("+~")
            if key.split(".")[0] == "hydra" or "_target_" in text:
                return text
        return None

    def case(self) -> dict[str, Any]:
        return case("native", self.config_name, self.overrides, self.model, local_models=True)


def python_of(given: Path | None) -> tuple[Path | None, str | None]:
    """The interpreter to ask and None, or None and why there is none: `--verl-python PATH` as
    given, else this interpreter when it can find verl (its import is the runner's to try)."""
    if given is not None:
        if not given.is_file() or not os.access(given, os.X_OK):
            return None, f"--verl-python {given} is not an executable file"
        return given, None
    if not has_verl():
        return None, f"no verl in {sys.executable} (give --verl-python PATH: the Python of a verl image)"
    return Path(sys.executable), None


def has_verl() -> bool:
    """Whether this interpreter finds verl's package (its trainer in it), without importing it: a
    folder named verl on the path (a checkout's tests/verl) is not verl."""
    spec = importlib.util.find_spec("verl")
    folders = (spec.submodule_search_locations or []) if spec is not None else []
    return any((Path(folder) / "trainer" / "main_ppo.py").is_file() for folder in folders)


class NativeChecks:
    """verl's checks for one command: the runner starts at the first ask and answers every ask
    after it; `say` gets the one line that tells why verl could not be asked, once."""

    def __init__(
        self, python: Path | None, say: Callable[[str], None], process: VerlProcess | None = None
    ) -> None:
        """`process`: a runner already started, lent (it is not ended here): the tests share one."""
        self.given = python
        self.say = say
        self.unavailable: str | None = None
        self.version = ""
        self._process = process
        self._owned = process is None
        self._asked: dict[str, list[Diagnostic]] = {}

    def __enter__(self) -> NativeChecks:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._process is not None and self._owned:
            self._process.__exit__(*exc)

    def _give_up(self, why: str) -> None:
        self.unavailable = why
        self.say(f"--verl-native: verl's own checks were not run: {why}")

    def _runner(self) -> VerlProcess | None:
        if self._process is not None and not self.version:
            self.version = str(self._process.ready().get("verl", "?"))
        if self._process is None and self.unavailable is None:
            python, why = python_of(self.given)
            if python is None:
                self._give_up(why or "no interpreter")
                return None
            process = VerlProcess(python, timeout=START_SECONDS, name=f"verl's checks in {python}")
            process.__enter__()
            self._process = process
            try:
                self.version = str(process.ready().get("verl", "?"))
            except RunnerGone as exc:
                if exc.late:
                    self._give_up(f"verl did not start in {python} within {START_SECONDS:g} s")
                else:
                    self._give_up(f"`import verl` fails in {python}: {process.last_words() or 'no message'}")
        return None if self.unavailable else self._process

    def judge(self, ask: Ask) -> list[Diagnostic]:
        """verl's findings on `ask`: none when it accepts (or cannot be asked), else one."""
        if ask.config_name not in ENTRY_DIRS:
            return []  # an entry config rlcat does not know the folder of: lint says so already
        key = json.dumps(ask.case(), sort_keys=True)
        if key in self._asked:
            return self._asked[key]
        code = ask.names_code()
        if code is not None:
            where = ask.origins.get(code.split("=", 1)[0].lstrip("+~"), ask.at)
            why = f"not handed to verl: {code.split('=', 1)[0]} names code verl's checks would run"
            return [diag("RLC451", why, hint="verl's own checks run on plans that name no code", **where)]
        runner = self._runner()
        if runner is None:
            return []
        try:
            reply = runner.judge([ask.case()])[0]
        except RunnerGone as exc:
            self._asked[key] = [diag("RLC451", str(exc), **ask.at)]
            self.unavailable = str(exc)  # a runner that died answers nothing more
            return self._asked[key]
        self._asked[key] = findings(reply, ask, self.version)
        return self._asked[key]


_DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+")


def culprit(reply: Mapping[str, Any], ask: Ask) -> str | None:
    """The key of `ask` verl's refusal is about: the key it names, else the first key of the plan
    its message names whole (`actor_rollout_ref.rollout.mode`), else the key of the section it judged
    whose name its message mentions first (`expert_parallel_size must be equal to ...`), else the
    section's `path` (a model section: the folder verl read)."""
    named = reply.get("key")
    if isinstance(named, str) and named in ask.origins:
        return named
    message = str(reply.get("message") or "")
    for token in _DOTTED.findall(message):
        if token in ask.origins:
            return str(token)
    section = str(reply.get("section") or "")
    keys = [k for k in ask.origins if k.startswith(f"{section}.")] if section else []
    best: tuple[int, int, str] | None = None
    for key in keys or list(ask.origins):
        leaf = key.rsplit(".", 1)[-1]
        found = re.search(rf"(?<![\w.]){re.escape(leaf)}(?!\w)", message)
        if found is None:
            continue
        value = ask.values.get(key, "")
        rank = (found.start(), 0 if value and value in message else 1, key)
        best = rank if best is None or rank < best else best
    if best is None and f"{section}.path" in ask.origins:
        return f"{section}.path"  # the model folder verl read (actor_rollout_ref.model dataclass)
    return best[2] if best else None


def findings(reply: Mapping[str, Any], ask: Ask, version: str) -> list[Diagnostic]:
    """A verdict as findings: none for `accepted`; RLC450 for a refusal, at the line that set the
    key it is about (else `ask.at`); RLC451 for a case that did not finish."""
    verdict = reply.get("verdict")
    if verdict == "accepted":
        return []
    message = str(reply.get("message") or "")
    if len(message) > QUOTE_LIMIT:
        message = message[:QUOTE_LIMIT] + "…"
    if verdict != "refused":
        return [
            diag(
                "RLC451", f"verl {version}'s start-up checks did not finish ({verdict}): {message}", **ask.at
            )
        ]
    key = culprit(reply, ask)
    where = ask.origins[key] if key is not None else ask.at
    stage = str(reply.get("stage") or "start-up")
    raised = f"{reply.get('type') or 'error'} at {reply.get('at')}" if reply.get("at") else reply.get("type")
    return [
        diag(
            "RLC450",
            f'verl {version} refuses it at start-up ({stage}): "{message}"',
            key=key,
            hint=f"verl's own check ({raised}); rlcat's checks let it through",
            **where,
        )
    ]
