"""Catalog entries: models and datasets that recipes name."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from rlcat.model.base import Name, PositiveInt, Strict, Todo
from rlcat.model.paths import LaunchPath


class ModelEntry(Strict):
    """A model a recipe can train."""

    name: Name
    hf_id: LaunchPath = Field(
        description="Hugging Face id or a folder; the default model path. A folder may start with ~, "
        "$HOME or $PWD (resolved at launch); other $VARIABLES are refused"
    )
    family: str = Field(description="The model family, e.g. qwen3 or deepseek-v3")
    modality: Literal["text", "vision-language"] = "text"
    size: str = Field(description="Parameter count as people say it, e.g. 7B or 35B-A3B")
    moe: bool = False
    max_position_embeddings: PositiveInt | Todo = Field(
        description="Positions the model has, as its config.json says (a `TODO:` marker: not known yet, "
        "and guard RLC601 does not judge the recipe; `rlcat validate` refuses the entry until it is filled)"
    )
    extended_max_position_embeddings: PositiveInt | None = Field(
        default=None, description="A longer context the model is known to handle (used by guard RLC601)"
    )
    # What parallel settings depend on, as the model's published config.json says (for a
    # vision-language model, its text_config). None: not verified, and the guards that need the value
    # do not judge it (guards RLC602, RLC603).
    num_attention_heads: PositiveInt | None = None
    num_key_value_heads: PositiveInt | None = None
    hidden_size: PositiveInt | None = None
    num_hidden_layers: PositiveInt | None = None
    vocab_size: PositiveInt | None = None
    num_experts: PositiveInt | None = Field(
        default=None, description="Routed experts of a mixture-of-experts model"
    )
    num_experts_per_tok: PositiveInt | None = Field(
        default=None, description="Experts each token is routed to"
    )
    facts_source: str = Field(
        default="", description="Where the config.json values above were read (a URL or repository path)"
    )
    trust_remote_code: bool = False
    gated: bool = Field(
        default=False,
        description="The hub asks for an accepted licence and a token (HF_TOKEN) before it serves the "
        "model's files; a launch without HF_TOKEN passed warns (RLC1015)",
    )
    notes: str = ""


class DatasetEntry(Strict):
    """A dataset with its files (as the preprocessing step writes them) and reward."""

    name: Name
    summary: str = Field(description="What the dataset is, in one line")
    train_files: list[LaunchPath] = Field(
        min_length=1,
        description="Parquet files; each may start with ~, $HOME or $PWD (resolved at launch)",
    )
    val_files: list[LaunchPath] = Field(
        min_length=1,
        description="Parquet files for validation; as train_files, each may start with ~, $HOME or $PWD",
    )
    prompt_key: str = "prompt"
    image_key: str | None = None
    truncation: Literal["error", "left", "right", "middle"] = "error"
    filter_overlong_prompts: bool = False
    return_raw_chat: bool | None = None
    preprocessing: str = Field(description="The command that writes the parquet files")
    reward: str = Field(description="How responses are scored")
    notes: str = ""
    modality: Literal["text", "vision-language"] = "text"
    size_hint: PositiveInt | None = Field(default=None, description="Number of training prompts")
