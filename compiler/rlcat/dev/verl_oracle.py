"""The verl oracle: verl's own start-up checks judging the plans rlcat compiles.

:class:`Oracle` starts :data:`RUNNER` once in a release's oracle environment (:mod:`rlcat.dev.oracle_env`)
and feeds it cases; :func:`case_for` turns a compiled plan into a case: the entry config and
overrides rlcat emits, the entrypoint whose checks apply, and the ``config.json`` values of the local
model folder that stands in for the plan's model (verl reads the model's config and tokenizer at
start-up; the oracle never reaches the hub).
"""

from __future__ import annotations

import json
import subprocess
import tempfile
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from rlcat.compile.assemble import Compiled
from rlcat.dev.compose import ENTRY_DIRS
from rlcat.dev.oracle_env import BUILD_COMMAND, env_python, is_complete
from rlcat.emit.formats import override_texts
from rlcat.model.catalog import ModelEntry

#: The worker, run by path inside the oracle environment (it imports verl, never rlcat).
RUNNER = Path(__file__).with_name("oracle_runner.py")

#: A catalog model family → the ``model_type`` and architecture of its published ``config.json``
#: (what transformers' AutoConfig needs to read the folder; verl asserts exactly one architecture).
FAMILY_CONFIG: dict[str, tuple[str, str]] = {
    "qwen2": ("qwen2", "Qwen2ForCausalLM"),
    "qwen2.5": ("qwen2", "Qwen2ForCausalLM"),
    "qwen2.5-vl": ("qwen2_5_vl", "Qwen2_5_VLForConditionalGeneration"),
    "qwen3": ("qwen3", "Qwen3ForCausalLM"),
    "qwen3-moe": ("qwen3_moe", "Qwen3MoeForCausalLM"),
    "qwen3-vl": ("qwen3_vl", "Qwen3VLForConditionalGeneration"),
    "qwen3-vl-moe": ("qwen3_vl_moe", "Qwen3VLMoeForConditionalGeneration"),
    "qwen3.5": ("qwen3_5", "Qwen3_5ForConditionalGeneration"),
    "qwen3.5-moe": ("qwen3_5_moe", "Qwen3_5MoeForConditionalGeneration"),
    "glm4v": ("glm4v", "Glm4vForConditionalGeneration"),
    "gpt-oss": ("gpt_oss", "GptOssForCausalLM"),
    "deepseek-v3": ("deepseek_v3", "DeepseekV3ForCausalLM"),
    "seed-oss": ("seed_oss", "SeedOssForCausalLM"),
}
#: For a model path the catalog does not know (a local folder in an override).
DEFAULT_MODEL = {"model_type": "qwen3", "architectures": ["Qwen3ForCausalLM"]}

#: Entry configs whose entrypoint is the fully-async one (its own checks, no validate_config).
_FULLY_ASYNC = ("fully_async_ppo_trainer", "fully_async_ppo_megatron_trainer")


class OracleUnavailable(RuntimeError):
    """The release's oracle environment is not built (the message says how to build it)."""


def model_config(entry: ModelEntry | None) -> dict[str, Any]:
    """The ``config.json`` values of a catalog model's stand-in folder: its family's model type and
    architecture and the positions the catalog records."""
    if entry is None or entry.family not in FAMILY_CONFIG:
        return dict(DEFAULT_MODEL)
    model_type, architecture = FAMILY_CONFIG[entry.family]
    values: dict[str, Any] = {"model_type": model_type, "architectures": [architecture]}
    if entry.max_position_embeddings is not None:
        values["max_position_embeddings"] = entry.max_position_embeddings
    return values


def model_of(path: str, models: Mapping[str, ModelEntry]) -> ModelEntry | None:
    """The catalog model a plan's model path names: its hub id, or a local folder named like it
    (``$HOME/models/Qwen3-8B``)."""
    folder = path.rstrip("/").rsplit("/", 1)[-1].lower()
    for entry in models.values():
        if entry.hf_id and (path == entry.hf_id or folder == entry.hf_id.rsplit("/", 1)[-1].lower()):
            return entry
    return None


def entry_of(config_name: str) -> str:
    """The entrypoint whose start-up checks judge a plan of `config_name`."""
    return "fully_async" if config_name in _FULLY_ASYNC else "ppo"


def case_for(
    case_id: str,
    compiled: Compiled,
    models: Mapping[str, ModelEntry],
    extra: Sequence[str] = (),
    timeout: int = 60,
) -> dict[str, Any]:
    """The oracle case of a compiled plan: its overrides as rlcat emits them, then `extra`."""
    overrides = [*override_texts(compiled), *extra]
    path = next((o.setting.value for o in compiled.overrides if o.key == "actor_rollout_ref.model.path"), "")
    config_name = compiled.plan.config_name
    return {
        "id": case_id,
        "config_dir": ENTRY_DIRS[config_name],
        "config_name": config_name,
        "overrides": overrides,
        "entry": entry_of(config_name),
        "model": model_config(model_of(str(path), models)),
        "timeout": timeout,
    }


@dataclass
class Oracle:
    """One runner process for one verl release; :meth:`judge` sends it cases, in order.

    ``with Oracle(version) as oracle: oracle.judge(cases)``. The runner's stderr (verl's logging) goes
    to a log file in the oracle's temporary folder, so a chatty release never blocks the pipe."""

    version: str
    timeout: float = 600.0  # the longest wait for one reply: verl's import, or a runner past its cases' bound
    hello: dict[str, Any] = field(default_factory=dict)
    _process: subprocess.Popen[str] | None = None
    _tmp: tempfile.TemporaryDirectory[str] | None = None

    def __enter__(self) -> Oracle:
        """Start the runner; verl's import runs while the caller goes on (it waits at the first
        :meth:`judge`), so the runners of several releases import at the same time."""
        if not is_complete(self.version):
            raise OracleUnavailable(
                f"no verl {self.version} oracle environment (build it once per machine with "
                f"`{BUILD_COMMAND} --release {self.version}`)"
            )
        self._tmp = tempfile.TemporaryDirectory(prefix="rlcat-oracle-")
        tmp = Path(self._tmp.name)
        with (tmp / "runner.log").open("w") as log:
            self._process = subprocess.Popen(
                [str(env_python(self.version)), str(RUNNER), "--models", str(tmp / "models")],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                text=True,
                cwd=tmp,
            )
        return self

    def __exit__(self, *exc: object) -> None:
        if self._process is not None:
            if self._process.stdin:
                self._process.stdin.close()
            try:
                self._process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
            if self._process.stdout:
                self._process.stdout.close()
        if self._tmp is not None:
            self._tmp.cleanup()

    @property
    def log(self) -> str:
        """What the runner wrote on stderr so far (verl's warnings, a crash's traceback)."""
        assert self._tmp is not None
        return (Path(self._tmp.name) / "runner.log").read_text(encoding="utf-8", errors="replace")

    def _read_line(self, timeout: float) -> dict[str, Any]:
        assert self._process is not None and self._process.stdout is not None
        got: list[str] = []
        reader = threading.Thread(target=lambda out=self._process.stdout: got.append(out.readline()))
        reader.start()
        reader.join(timeout)
        if reader.is_alive() or not got or not got[0]:
            self._process.kill()
            raise RuntimeError(f"the verl {self.version} oracle stopped answering:\n{self.log[-3000:]}")
        reply: dict[str, Any] = json.loads(got[0])
        return reply

    def ready(self) -> dict[str, Any]:
        """The runner's greeting (the versions it runs), once verl is imported."""
        if not self.hello:
            self.hello = self._read_line(self.timeout)
        return self.hello

    def judge(self, cases: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
        """The verdict of every case, in order. All cases are written by a thread while the replies
        are read, so the pipe never fills up either way."""
        assert self._process is not None and self._process.stdin is not None
        self.ready()
        # the same case twice (a plan that two platforms compile alike) is judged once
        asked = list(cases)
        key_of = [json.dumps({k: v for k, v in c.items() if k != "id"}, sort_keys=True) for c in asked]
        first: dict[str, int] = {}  # a case's key → its place in the batch sent
        batch: list[dict[str, Any]] = []
        for case, key in zip(asked, key_of, strict=True):
            if key not in first:
                first[key] = len(batch)
                batch.append(case)
        stdin: IO[str] = self._process.stdin

        def feed() -> None:
            for case in batch:
                stdin.write(json.dumps(case) + "\n")
                stdin.flush()

        writer = threading.Thread(target=feed, daemon=True)
        writer.start()
        replies = [self._read_line(self.timeout) for _ in batch]
        writer.join()
        return [
            {**replies[first[key]], "id": case.get("id")} for case, key in zip(asked, key_of, strict=True)
        ]


def judge_all(
    oracles: Mapping[str, Oracle], cases: Mapping[str, Sequence[dict[str, Any]]]
) -> dict[str, list[dict[str, Any]]]:
    """Each release's cases judged by its oracle, the releases at the same time (one thread each)."""
    replies: dict[str, list[dict[str, Any]]] = {}
    errors: list[BaseException] = []

    def run(version: str) -> None:
        try:
            replies[version] = oracles[version].judge(cases[version])
        except BaseException as exc:  # re-raised below, in the caller's thread
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(v,)) for v in cases if v in oracles]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return replies
