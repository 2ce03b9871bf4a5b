"""`trainer.logger`: verl's Tracking takes a list of backend names or one name as text (a str becomes
[str], verl/utils/tracking.py:63 in 0.9.1) and asserts each is a backend it has (:71). Text that
reads like a list (`'[console,wandb]'` quoted through a shell variable, as two upstream scripts do)
is one name no backend has: the key check refuses it (RLC402)."""

from __future__ import annotations

import pytest

from rlcat.verl.check import type_matches


@pytest.mark.parametrize("value", [["console", "wandb"], "console", "wandb", "tensorboard"])
def test_a_list_or_one_backend_name_fits(value: object) -> None:
    assert type_matches("list", value, "trainer.logger")


@pytest.mark.parametrize("value", ["[console,wandb]", "console,wandb", "['console']", "", 3])
def test_text_that_is_not_one_name_does_not(value: object) -> None:
    assert not type_matches("list", value, "trainer.logger")


def test_only_the_logger_takes_text_for_a_list() -> None:
    assert not type_matches("list", "console", "data.train_files_list")
