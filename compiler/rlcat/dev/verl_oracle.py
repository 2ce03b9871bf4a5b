"""The verl oracle: verl's own start-up checks judging the plans rlcat compiles.

:class:`Oracle` starts :data:`RUNNER` once in a release's oracle environment (:mod:`rlcat.dev.oracle_env`)
and feeds it cases; :func:`case_for` turns a compiled plan into a case: the entry config and
overrides rlcat emits, the entrypoint whose checks apply, and the ``config.json`` values of the local
model folder that stands in for the plan's model (verl reads the model's config and tokenizer at
start-up; the oracle never reaches the hub).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any

from rlcat.compile.assemble import Compiled
from rlcat.dev.oracle_env import BUILD_COMMAND, env_python, is_complete
from rlcat.emit.formats import override_texts
from rlcat.native import checks
from rlcat.native.models import stand_in
from rlcat.native.process import RUNNER, VerlProcess

__all__ = ["RUNNER", "Oracle", "OracleUnavailable", "case_for", "judge_all"]


class OracleUnavailable(RuntimeError):
    """The release's oracle environment is not built (the message says how to build it)."""


def case_for(
    case_id: str,
    compiled: Compiled,
    extra: Sequence[str] = (),
    timeout: int = 60,
) -> dict[str, Any]:
    """The oracle case of a compiled plan: its overrides as rlcat emits them, then `extra`. The plan's
    own overrides are marked as its `base`: the runner composes a plan once for itself and for all
    the cases that put something on top of it (native/runner.py, compose)."""
    plan = override_texts(compiled)
    path = next((o.setting.value for o in compiled.overrides if o.key == "actor_rollout_ref.model.path"), "")
    case = checks.case(case_id, compiled.plan.config_name, [*plan, *extra], stand_in(str(path)), timeout)
    return {**case, "base": len(plan)}


class Oracle(VerlProcess):
    """The runner (rlcat.native.process) in the oracle environment of one verl release.

    ``with Oracle(version) as oracle: oracle.judge(cases)``."""

    def __init__(self, version: str, timeout: float = 600.0) -> None:
        super().__init__(env_python(version), timeout, name=f"the verl {version} oracle")
        self.version = version

    def __enter__(self) -> Oracle:
        """Start the runner; verl's import runs while the caller goes on (it waits at the first
        :meth:`judge`), so the runners of several releases import at the same time."""
        if not is_complete(self.version):
            raise OracleUnavailable(
                f"no verl {self.version} oracle environment (build it once per machine with "
                f"`{BUILD_COMMAND} --release {self.version}`)"
            )
        super().__enter__()
        return self


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
