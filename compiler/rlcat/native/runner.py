"""verl's own start-up checks, run on composed plans: the worker of `--verl-native` and of the
verl oracle.

This file runs with an interpreter that has verl (an oracle environment of ``rlcat dev verl-oracle``,
or the user's ``--verl-python``), by path: ``python runner.py --models DIR``. It imports verl, never
rlcat.
It reads one case per line on stdin (JSON) and writes one verdict per line on stdout (JSON), so
verl's import (seconds) is paid once for many cases. The first line it writes is a greeting with the
versions it runs; a case is

    {"id": "...", "config_dir": "verl/trainer/config", "config_name": "ppo_trainer",
     "overrides": ["key=value", ...], "entry": "ppo" | "fully_async",
     "model": {"model_type": "qwen3", "architectures": ["Qwen3ForCausalLM"], ...},
     "timeout": 60, "local_models": false}

and its verdict ``{"id", "verdict": "accepted" | "refused" | "timeout" | "unsupported", "stage",
"type", "message", "section", "key", "at", "printed", "blocked", "seconds"}``. ``stage`` names the
step of verl's start-up that refused (see :func:`check`), ``section`` the config section it
concerns, ``key`` the key where verl's message names one, ``at`` verl's file and line that raised.

Never the network: ``HF_HUB_OFFLINE``/``TRANSFORMERS_OFFLINE`` are set before verl is imported, every
model, tokenizer and HF config path of the composed config is pointed at a local folder made from the
case's ``model`` (its published ``config.json`` values, a tiny word-level tokenizer, a one-line chat
template; no weights) — but with ``local_models``, a path that resolves to a folder here holding a
``config.json`` is kept (a user's own model folder) — and an audit hook refuses any socket
connection outside 127.0.0.0/8 (each refusal is counted in the verdict as ``blocked``).
"""

from __future__ import annotations

import argparse
import ast
import collections
import contextlib
import copy
import functools
import hashlib
import importlib.util
import io
import ipaddress
import json
import os
import pickle
import re
import signal
import sys
import time
import traceback
from pathlib import Path
from types import ModuleType
from typing import IO, Any

for _name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE"):
    os.environ[_name] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")

BLOCKED: list[str] = []


def _loopback_only(event: str, args: tuple[Any, ...]) -> None:
    """Refuse a connection outside 127.0.0.0/8 (and ::1); Unix sockets pass."""
    if event not in {"socket.connect", "socket.sendto", "socket.getaddrinfo"}:
        return
    address = args[1] if event != "socket.getaddrinfo" else args[0]
    host = address[0] if isinstance(address, tuple) else address
    if isinstance(host, bytes):
        host = host.decode()
    if not isinstance(host, str) or (event != "socket.getaddrinfo" and "/" in host):
        return
    if host in {"localhost", ""}:
        return
    try:
        if ipaddress.ip_address(host.split("%")[0]).is_loopback:
            return
    except ValueError:
        pass  # a host name: not loopback
    BLOCKED.append(f"{event} {host}")
    raise ConnectionRefusedError(f"verl oracle: no network ({event} to {host})")


sys.addaudithook(_loopback_only)


def _protocol_stdout() -> IO[str]:
    """The real stdout, kept for the protocol; what else writes to stdout (verl prints, from its
    import on) goes to stderr."""
    protocol = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return protocol


PROTOCOL = _protocol_stdout() if __name__ == "__main__" else sys.stdout

# verl, transformers and huggingface_hub read the offline variables when they are imported: the
# imports come after them and after the hook, on purpose (E402)
_IMPORTING = time.monotonic()
import torch  # noqa: E402
from hydra import compose as hydra_compose  # noqa: E402
from hydra import initialize_config_dir  # noqa: E402
from hydra._internal.config_loader_impl import ConfigLoaderImpl  # noqa: E402
from hydra.core.global_hydra import GlobalHydra  # noqa: E402
from hydra.core.override_parser.overrides_parser import OverridesParser  # noqa: E402
from omegaconf import DictConfig, OmegaConf, open_dict  # noqa: E402
from tokenizers import Tokenizer, pre_tokenizers  # noqa: E402
from tokenizers import models as tokenizer_models  # noqa: E402
from transformers import PreTrainedTokenizerFast  # noqa: E402
from verl.trainer.ppo.utils import need_critic, need_reference_policy  # noqa: E402
from verl.utils import config as verl_config  # noqa: E402
from verl.utils.config import omega_conf_to_dataclass, validate_config  # noqa: E402
from verl.utils.device import auto_set_device  # noqa: E402

import verl  # noqa: E402

try:
    from verl.experimental.reward_loop import migrate_legacy_reward_impl
except ModuleNotFoundError as exc:  # a release without the reward loop has nothing to migrate
    if not (exc.name or "").startswith("verl.experimental"):
        raise
    migrate_legacy_reward_impl = None


def _beside(name: str) -> ModuleType:
    """A module of the file `name`.py beside this one, loaded by its path: this file runs without
    rlcat, so its rlcat.native sibling cannot be imported by its package name."""
    spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name(f"{name}.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


hydra_once = _beside("hydra_once")  # rlcat.native.hydra_once: what rlcat's own composes use too
IMPORT_SECONDS = time.monotonic() - _IMPORTING
VERL_ROOT = Path(verl.__file__).resolve().parent.parent

MODEL_KEYS = ("path", "tokenizer_path", "hf_config_path")


CHAT_TEMPLATE = "{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"


class CaseTimeout(Exception):
    pass


class Unsupported(Exception):
    """The release does not ship the entrypoint whose checks the case needs (verl 0.7.1's wheel has
    the fully-async configs but not its code, which lived in the repository's recipe/ folder)."""


def _on_alarm(signum: int, frame: Any) -> None:
    raise CaseTimeout("the case ran past its time")


def model_folder(root: Path, spec: dict[str, Any]) -> Path:
    """A local model folder for `spec` (config.json values), made once per spec under `root`."""
    text = json.dumps(spec, sort_keys=True)
    folder = root / hashlib.sha256(text.encode()).hexdigest()[:16]
    if (folder / "tokenizer_config.json").is_file():
        return folder

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(text + "\n", encoding="utf-8")
    words = ["<unk>", "<pad>", "<s>", "</s>", "user", "assistant", "system", ":", "hello", "world"]
    tok = Tokenizer(tokenizer_models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, unk_token="<unk>", pad_token="<pad>", bos_token="<s>", eos_token="</s>"
    )
    fast.chat_template = CHAT_TEMPLATE
    fast.save_pretrained(str(folder))
    return folder


def _local_model(cfg: Any, path: str) -> bool:
    """Whether the value at `path` resolves to a folder here that holds a config.json."""
    try:
        value = OmegaConf.select(cfg, path, throw_on_resolution_failure=False)
    except Exception:  # an interpolation that does not resolve here: not a folder here
        return False
    return isinstance(value, str) and bool(value) and (Path(value).expanduser() / "config.json").is_file()


def trusts_remote_code(cfg: Any) -> bool:
    """Whether any `trust_remote_code` of the config is not plainly false (an interpolation counts
    as true: only running would tell)."""
    found = False

    def walk(node: Any) -> None:
        nonlocal found
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "trust_remote_code" and value not in (False, None, "false", "False"):
                    found = True
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(OmegaConf.to_container(cfg, resolve=False))
    return found


def point_models_at(cfg: Any, folder: Path, keep_local: bool = False) -> list[str]:
    """Set every model, tokenizer and HF config path of `cfg` to `folder`, but for a value that
    refers to another key (it resolves to the path set there) and, with `keep_local`, a path to a
    model folder here. Returns the keys set."""
    done: list[str] = []

    def walk(node: Any, prefix: str) -> None:
        for key in list(node.keys()):
            child = node._get_node(key)
            path = f"{prefix}{key}"
            if isinstance(child, DictConfig):
                if not child._is_missing() and not child._is_none() and not child._is_interpolation():
                    walk(child, path + ".")
                continue
            in_model = "model" in prefix.rstrip(".").rsplit(".", 1)[-1]
            value = child._value()
            # a value that refers to another key (critic.model.path: ${actor_rollout_ref.model.path})
            # follows that key; a path built from the environment (${oc.env:HOME}/models/X) is replaced
            refers = isinstance(value, str) and "${" in value and "oc.env" not in value
            if key in MODEL_KEYS and in_model and isinstance(value, str) and not refers:
                if keep_local and _local_model(cfg, path):
                    continue
                node[key] = str(folder)
                done.append(path)

    walk(cfg, "")
    return done


def compose(verl_root: Path, case: dict[str, Any]) -> Any:
    """The case's config as Hydra composes it. A case may say that its first `base` overrides are a
    plan others share (a plan rlcat compiled, and the perturbations put on it): that plan is composed
    once, and each case gets a fresh copy with the rest applied by Hydra's own step for key
    overrides (`ConfigLoaderImpl._apply_overrides_to_config`, what a compose does after merging the
    defaults), which gives the config a compose of the whole list gives (tests/oracle checks it).
    A rest that names a config group or Hydra itself is composed whole."""
    overrides = list(case["overrides"])
    base = int(case.get("base") or 0)
    if not 0 < base <= len(overrides) or not all(_plain_key_override(o) for o in overrides[base:]):
        return _compose(verl_root, case["config_dir"], case["config_name"], tuple(overrides))
    shared = _composed_base(verl_root, case["config_dir"], case["config_name"], tuple(overrides[:base]))
    cfg = pickle.loads(shared)
    ConfigLoaderImpl._apply_overrides_to_config(
        OverridesParser.create().parse_overrides(overrides[base:]), cfg
    )
    return cfg


def _plain_key_override(text: str) -> bool:
    """`a.b=1`, `+a.b=1`, `++a.b=1` or `~a.b`: a dotted key of the config, not a group or `hydra.`."""
    key = text.split("=", 1)[0].lstrip("+~")
    return "." in key and "/" not in key and not key.startswith("hydra.")


def _compose(verl_root: Path, config_dir: str, config_name: str, overrides: tuple[str, ...]) -> Any:
    if GlobalHydra.instance().is_initialized():
        GlobalHydra.instance().clear()
    folder = (verl_root / config_dir).resolve()
    with initialize_config_dir(config_dir=str(folder), version_base=None, job_name="verl_oracle"):
        return hydra_compose(config_name=config_name, overrides=list(overrides))


@functools.lru_cache(maxsize=2048)
def _composed_base(verl_root: Path, config_dir: str, config_name: str, overrides: tuple[str, ...]) -> bytes:
    """A shared plan, composed once and kept pickled (about 100 KB: every plan of a catalog fits, where
    the configs themselves would take gigabytes); each case loads its own copy from it."""
    cfg = _compose(verl_root, config_dir, config_name, overrides)
    return pickle.dumps(cfg, protocol=pickle.HIGHEST_PROTOCOL)


class Stage:
    """Which step of verl's start-up is running, and the config section it judges."""

    def __init__(self) -> None:
        self.name, self.section = "compose", ""

    def __call__(self, name: str, section: str = "") -> None:
        self.name, self.section = name, section


def _to_dataclass(stage: Stage, cfg: Any, section: str) -> None:
    _build(stage, OmegaConf.select(cfg, section), section)


def _build(stage: Stage, node: Any, section: str) -> None:
    """The dataclass verl's worker builds from `node` (the config is resolved by now)."""
    stage(f"{section} dataclass", section)
    _made(node)


# A dataclass verl built without a complaint from these very values (and type), in this process:
# built again, it would pass again and be equal (its checks read its values and the stand-in model
# folder, which never changes), so it is kept, not built again. Plans that differ in a batch size
# share their model, reference, rollout and most actor sections; a build costs a case more than
# anything but the resolve. At most _MADE_AT_MOST are kept (the oldest go first).
_MADE: collections.OrderedDict[str, Any] = collections.OrderedDict()
_MADE_AT_MOST = 1024


def _made(config: Any, dataclass_type: Any = None) -> Any:
    """verl's `omega_conf_to_dataclass(config, dataclass_type)`, built once per values and type."""
    if not isinstance(config, DictConfig):  # a dict, or an object verl passes through
        return omega_conf_to_dataclass(config, dataclass_type)
    try:
        values = OmegaConf.to_container(config, resolve=True)
    except Exception:  # what verl's own build raises for it, with its own message
        return omega_conf_to_dataclass(config, dataclass_type)
    text = json.dumps([repr(dataclass_type), values], sort_keys=True, default=repr)
    key = hashlib.sha256(text.encode()).hexdigest()  # a digest: memory stays small
    if key not in _MADE:
        _MADE[key] = omega_conf_to_dataclass(config, dataclass_type)
        if len(_MADE) > _MADE_AT_MOST:
            _MADE.popitem(last=False)
    return _MADE[key]


def _remember_builds() -> None:
    """verl's own callers of omega_conf_to_dataclass (validate_config builds the actor and the
    critic) get `_made`'s, each a copy: verl's `validate` may set attributes of what it built."""
    verl_config.omega_conf_to_dataclass = lambda config, dataclass_type=None: copy.deepcopy(
        _made(config, dataclass_type)
    )


def _workers(stage: Stage, cfg: Any, need_ref: bool, need_critic: bool, *, validated: bool) -> None:
    """The dataclasses verl's trainer and workers build from the config before touching a GPU, in
    their order (verl/trainer/ppo/v1/trainer_base.py, verl/workers/engine_workers.py init_model):
    the model, the reference (with the worker's renaming of its log-prob keys), the actor, the
    rollout, the checkpoint engine, then the critic. After validate_config (`validated`), which built
    the actor and the critic from the same config, those two are not built again."""
    _to_dataclass(stage, cfg, "actor_rollout_ref.model")
    if need_ref:
        ref = cfg.actor_rollout_ref.ref.copy()
        with open_dict(ref):  # engine_workers.py ActorRolloutRefWorker.init_model, "1. build reference model"
            ref.ppo_mini_batch_size = cfg.actor_rollout_ref.actor.ppo_mini_batch_size
            ref.ppo_micro_batch_size = ref.pop("log_prob_micro_batch_size", None)
            ref.ppo_micro_batch_size_per_gpu = ref.pop("log_prob_micro_batch_size_per_gpu", None)
            ref.use_dynamic_bsz = ref.pop("log_prob_use_dynamic_bsz", False)
            ref.ppo_max_token_len_per_gpu = ref.pop("log_prob_max_token_len_per_gpu", None)
        _build(stage, ref, "actor_rollout_ref.ref")
    if not validated:
        _to_dataclass(stage, cfg, "actor_rollout_ref.actor")
    _to_dataclass(stage, cfg, "actor_rollout_ref.rollout")
    if "checkpoint_engine" in cfg.actor_rollout_ref.rollout:
        _to_dataclass(stage, cfg, "actor_rollout_ref.rollout.checkpoint_engine")
    if need_critic and not validated:
        _to_dataclass(stage, cfg, "critic")


def _resolves_first() -> bool:
    """Whether the release's main_ppo resolves the config before validate_config: 0.7.1 validates in
    its task runner, after `OmegaConf.resolve`; 0.9 validates in `main()`, before its task runner
    resolves. Read from the release's own file: does `main()` call validate_config?"""
    path = verl_file("verl/trainer/main_ppo.py")
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.FunctionDef) and node.name == "main":
            calls = [c for c in ast.walk(node) if isinstance(c, ast.Call)]
            return not any(ast.unparse(c.func).endswith("validate_config") for c in calls)
    return False


def _ppo(stage: Stage, cfg: Any) -> None:
    """verl/trainer/main_ppo.py: auto_set_device, validate_config and the task runner's
    `OmegaConf.resolve` in the release's order, then the trainer's and the workers' dataclasses."""
    stage("auto_set_device")
    auto_set_device(cfg)
    need_ref, critic = need_reference_policy(cfg), need_critic(cfg)
    if RESOLVES_FIRST:
        stage("resolve")
        OmegaConf.resolve(cfg)
    stage("validate_config")
    validate_config(config=cfg, use_reference_policy=need_ref, use_critic=critic)
    if not RESOLVES_FIRST:
        stage("resolve")
        OmegaConf.resolve(cfg)
    _workers(stage, cfg, need_ref, critic, validated=True)


def _fully_async(stage: Stage, cfg: Any) -> None:
    """verl/experimental/fully_async_policy/fully_async_main.py main() and what its task runner, the
    FullyAsyncTrainer and the FullyAsyncRollouter check before their workers start. That entrypoint
    does not call validate_config."""
    stage("fully_async main")
    if not hasattr(cfg, "async_training"):
        raise RuntimeError("must set async_training config")
    auto_set_device(cfg)
    cfg.actor_rollout_ref.rollout.nnodes = cfg.rollout.nnodes
    cfg.actor_rollout_ref.rollout.n_gpus_per_node = cfg.rollout.n_gpus_per_node
    if migrate_legacy_reward_impl is not None:
        cfg = migrate_legacy_reward_impl(cfg)
    stage("resolve")
    OmegaConf.resolve(cfg)
    # FullyAsyncTrainer.__init__ and FullyAsyncRollouter.__init__ (fully_async_trainer.py,
    # fully_async_rollouter.py), in that order; the messages are verl's own
    stage("FullyAsyncTrainer", "actor_rollout_ref")
    assert not cfg.actor_rollout_ref.hybrid_engine
    stage("FullyAsyncRollouter", "data")
    assert not cfg.actor_rollout_ref.hybrid_engine
    assert cfg.data.train_batch_size == 0, "train_batch_size must be zero"
    assert cfg.data.gen_batch_size == 1, "gen_batch_size must be one"
    stage("FullyAsyncRollouter", "async_training")
    assert cfg.async_training.staleness_threshold >= 0, "staleness_threshold must larger than 0"
    assert cfg.async_training.trigger_parameter_sync_step >= 1, (
        "trigger_parameter_sync_step must larger or equal than 1"
    )
    stage("FullyAsyncRollouter._validate_config", "actor_rollout_ref.rollout")
    validate = method_from_source(verl_file(ROLLOUTER), "FullyAsyncRollouter", "_validate_config")
    if validate is not None:
        validate(type("Rollouter", (), {"config": cfg})())
    _workers(stage, cfg, need_reference_policy(cfg), need_critic(cfg), validated=False)


ENTRIES = {"ppo": _ppo, "fully_async": _fully_async}
ROLLOUTER = "verl/experimental/fully_async_policy/fully_async_rollouter.py"
FULLY_ASYNC_MAIN = "verl/experimental/fully_async_policy/fully_async_main.py"


def verl_file(relative: str) -> Path:
    return VERL_ROOT / relative


RESOLVES_FIRST = _resolves_first()


@functools.cache  # parsed once per process: a fully-async case needs it each time
def method_from_source(path: Path, class_name: str, name: str) -> Any:
    """A method of a verl class, compiled from the installed file's own text without importing its
    module: the fully-async rollouter's module pulls in the inference servers' dependencies (uvicorn,
    fastapi, torchtitan) that verl does not declare, while its checks need none of them. None when the
    release has no such method."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == class_name:
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == name:
                    item.decorator_list = []
                    namespace: dict[str, Any] = {}
                    exec(compile(ast.Module([item], []), str(path), "exec"), namespace)
                    return namespace[name]
    return None


# validate_config builds the actor and the critic itself: a dataclass's name tells which section
DATACLASS_SECTIONS = {
    "FSDPActorConfig": "actor_rollout_ref.actor",
    "McoreActorConfig": "actor_rollout_ref.actor",
    "FSDPCriticConfig": "critic",
    "McoreCriticConfig": "critic",
    "RolloutConfig": "actor_rollout_ref.rollout",
    "HFModelConfig": "actor_rollout_ref.model",
}
_UNEXPECTED = re.compile(r"unexpected keyword argument '([^']+)'")
_QUOTED_KEY = re.compile(r"'((?:[a-z_]+\.)+[a-z_]+)'")


def where(exc: BaseException, stage: Stage) -> str | None:
    """The key verl's exception names, where it names one."""
    full_key = getattr(exc, "full_key", None)
    if isinstance(full_key, str) and full_key:
        return full_key
    text = str(exc)
    found = _UNEXPECTED.search(text)
    if found:
        owner = next((sec for cls, sec in DATACLASS_SECTIONS.items() if f"{cls}.__init__" in text), None)
        section = owner or stage.section
        return f"{section}.{found.group(1)}" if section else found.group(1)
    found = _QUOTED_KEY.search(text)
    return found.group(1) if found else None


def check(verl_root: Path, models: Path, case: dict[str, Any]) -> dict[str, Any]:
    """Compose the case and run its entrypoint's start-up checks; the verdict."""
    stage = Stage()
    printed = io.StringIO()
    blocked_before = len(BLOCKED)
    reply: dict[str, Any] = {"id": case.get("id")}
    start = time.monotonic()
    signal.alarm(max(1, int(case.get("timeout", 60))))
    try:
        with contextlib.redirect_stdout(printed):
            if case.get("entry") == "fully_async" and not verl_file(FULLY_ASYNC_MAIN).is_file():
                raise Unsupported(f"this verl release does not ship {FULLY_ASYNC_MAIN}")
            cfg = compose(verl_root, case)
            reply["compose_seconds"] = round(time.monotonic() - start, 3)
            stand_in = model_folder(models, case.get("model") or {})
            # a folder here is read as it is, but never with trust_remote_code: its Python would run
            keep_local = bool(case.get("local_models")) and not trusts_remote_code(cfg)
            reply["model_keys"] = point_models_at(cfg, stand_in, keep_local)
            ENTRIES[case.get("entry", "ppo")](stage, cfg)
        reply["verdict"] = "accepted"
    except Unsupported as exc:
        reply.update(verdict="unsupported", stage=stage.name, type="Unsupported", message=str(exc))
    except CaseTimeout as exc:
        reply.update(verdict="timeout", stage=stage.name, type="TimeoutError", message=str(exc))
    except Exception as exc:  # every refusal verl raises, whatever its type, is the verdict
        # a dataclass built through hydra.utils.instantiate wraps what its constructor raised
        wrapped = type(exc).__name__ == "InstantiationException" and exc.__cause__ is not None
        cause = exc.__cause__ if wrapped and exc.__cause__ is not None else exc
        frame = traceback.extract_tb(cause.__traceback__)[-1]
        reply.update(
            verdict="refused",
            stage=stage.name,
            section=stage.section,
            type=type(cause).__name__,
            message=str(cause).strip() or repr(cause),
            key=where(cause, stage),
            at=f"{frame.filename.split('site-packages/')[-1]}:{frame.lineno}",
        )
    finally:
        signal.alarm(0)
    reply["printed"] = printed.getvalue()[-2000:]
    reply["blocked"] = BLOCKED[blocked_before:]
    reply["seconds"] = round(time.monotonic() - start, 3)
    return reply


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=Path, required=True, help="folder for the local model folders")
    args = parser.parse_args()
    args.models = args.models.resolve()
    signal.signal(signal.SIGALRM, _on_alarm)
    hydra_once.install()
    _remember_builds()
    # verl is launched from the folder holding verl/: the Megatron fully-async config finds the
    # trainer's through `hydra.searchpath: file://verl/trainer/config`, relative to it
    os.chdir(VERL_ROOT)
    hello = {
        "verl": getattr(verl, "__version__", "?"),
        "torch": torch.__version__,
        "python": sys.version.split()[0],
        "import_seconds": round(IMPORT_SECONDS, 3),
    }
    PROTOCOL.write(json.dumps(hello) + "\n")
    PROTOCOL.flush()
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            case = json.loads(line)
        except ValueError as exc:
            reply: dict[str, Any] = {"id": None, "verdict": "error", "message": f"not a JSON case: {exc}"}
        else:
            reply = check(VERL_ROOT, args.models, case)
        PROTOCOL.write(json.dumps(reply, default=str) + "\n")
        PROTOCOL.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
