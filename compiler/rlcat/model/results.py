"""Results: what a recipe gave on a platform, as data beside the recipes (`catalog/results/*.yaml`).

A result is `reported` (a figure someone published, with its source) or `measured` (a run that
`rlcat runs add` read: the plan's fingerprint and the metrics verl's file logger wrote). Either way
it holds the same things, so a table or a chart can put them side by side: which recipe and
platform, the hardware, the verl version and mode, scalar metrics with closed units, and metric
series per step.
"""

from __future__ import annotations

import datetime
from typing import Annotated, Literal

from pydantic import Field, StringConstraints, model_validator

from rlcat.model.axes import Backend, Engine, Mode
from rlcat.model.base import Name, NonNegativeInt, PositiveInt, Strict
from rlcat.model.validate import field_error

# The units a metric may be in: a closed set, so that tables and charts compare like with like.
Unit = Literal["fraction", "s", "tokens/s/GPU", "steps", "ratio"]
UNITS: tuple[Unit, ...] = ("fraction", "s", "tokens/s/GPU", "steps", "ratio")

# What a scalar says. Validation scores are fractions (accuracy or mean reward on a validation set).
Metric = Literal[
    "val_score_initial",  # before training (verl's val_before_train)
    "val_score_final",  # at the last validation
    "val_score_max",  # the best validation
    "step_time_median",  # seconds per training step (verl's timing_s/step)
    "throughput",  # tokens per second per GPU (verl's perf/throughput)
    "steps",  # training steps done
]
METRIC_UNITS: dict[str, Unit] = {
    "val_score_initial": "fraction",
    "val_score_final": "fraction",
    "val_score_max": "fraction",
    "step_time_median": "s",
    "throughput": "tokens/s/GPU",
    "steps": "steps",
}

Text = Annotated[str, StringConstraints(max_length=2000)]
ShortText = Annotated[str, StringConstraints(min_length=1, max_length=300)]
# sha256 of the plan verl received (emit.formats.plan_fingerprint)
Fingerprint = Annotated[str, StringConstraints(pattern=r"^sha256:[0-9a-f]{64}$")]
DateText = Annotated[str, StringConstraints(pattern=r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")]
Url = Annotated[str, StringConstraints(pattern=r"^https?://[^\s]+$", max_length=2000)]
# verl's metric keys: `val-core/openai/gsm8k/reward/mean@1`, `timing_s/step`, `perf/throughput`
MetricKey = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_@./:\-]+$", max_length=300)]
MAX_SERIES_POINTS = 5000


class Hardware(Strict):
    """The machines a result ran on."""

    gpu: ShortText | None = Field(
        default=None, description="GPU model as its maker names it, e.g. MI300X or H100"
    )
    gpus: PositiveInt | None = Field(
        default=None,
        description="GPUs the run used, all nodes together (left out where a source does not say)",
    )
    nodes: PositiveInt | None = None
    arch: ShortText | None = Field(default=None, description="e.g. gfx942, gfx950, sm_90")


class Source(Strict):
    """Where a reported figure was published. At least a title; a URL where there is one."""

    title: ShortText
    title_en: ShortText | None = Field(
        default=None, description="The title in English, when the source is in another language"
    )
    url: Url | None = None
    publisher: ShortText | None = None
    date: DateText | None = None
    cites: Text | None = Field(
        default=None, description="The original the source reports from, when it is a report of another"
    )
    figure: Text | None = Field(
        default=None, description="Which figure, table or paragraph holds the numbers"
    )
    quote: Text | None = Field(default=None, description="The sentence that states the numbers, as written")

    @property
    def english_title(self) -> str:
        """The title as a reader of English reads it: the English one, where the source has one."""
        return self.title_en or self.title


# One compile argument as the command line gave it (`--set batch.mini_batch_size=128`'s value)
Argument = Annotated[str, StringConstraints(max_length=4096)]


class Run(Strict):
    """Where a measured result came from: the run folder `rlcat runs add` read, and how its plan was
    compiled."""

    folder: Annotated[str, StringConstraints(min_length=1, max_length=4096)] = Field(
        description="The run folder, relative to the catalog folder the result is in (older results "
        "may hold an absolute path)"
    )
    metrics_file: Annotated[str, StringConstraints(min_length=1, max_length=4096)]
    lines: NonNegativeInt = Field(description="Lines of the metrics file read")
    live: bool = Field(default=False, description="The run was still writing when it was read")
    hydra: bool = Field(default=False, description="A Hydra .hydra/ folder was read beside the plan")
    sets: list[Argument] = Field(
        default_factory=list, max_length=1000, description="The `--set` arguments the plan was compiled with"
    )
    overrides: list[Argument] = Field(
        default_factory=list,
        max_length=1000,
        description="The `--override` arguments the plan was compiled with",
    )
    command: list[Argument] = Field(
        default_factory=list,
        max_length=4000,
        description="The `rlcat compile` command that makes the run's plan again (platform, engine, "
        "mode and catalog folders included)",
    )


class Scalar(Strict):
    """One number: what it measures, its value (with the upper end where the source gives a range),
    its unit, and on which validation set or verl metric key."""

    metric: Metric
    value: float
    high: float | None = Field(default=None, description="Upper end of a range (0.835–0.839)")
    unit: Unit
    approximate: bool = Field(default=False, description="The source says about (≈)")
    at_step: NonNegativeInt | None = None
    dataset: ShortText | None = Field(default=None, description="The validation set, e.g. gsm8k")
    key: MetricKey | None = Field(default=None, description="verl's metric key it was read from")
    note: Text = ""

    @model_validator(mode="after")
    def _consistent(self) -> Scalar:
        if self.unit != METRIC_UNITS[self.metric]:
            raise field_error("unit", f"{self.metric} is in {METRIC_UNITS[self.metric]}, not {self.unit}")
        if self.high is not None and self.high < self.value:
            raise field_error("high", f"the upper end {self.high} is below the value {self.value}")
        return self


class Series(Strict):
    """One metric per step: steps strictly increasing, one value each."""

    key: MetricKey = Field(description="verl's metric key, e.g. val-core/openai/gsm8k/reward/mean@1")
    unit: Unit
    dataset: ShortText | None = None
    steps: list[NonNegativeInt] = Field(min_length=1, max_length=MAX_SERIES_POINTS)
    values: list[float] = Field(min_length=1, max_length=MAX_SERIES_POINTS)
    note: Text = ""

    @model_validator(mode="after")
    def _aligned(self) -> Series:
        if len(self.steps) != len(self.values):
            raise field_error("values", f"{len(self.values)} values for {len(self.steps)} steps")
        for i in range(1, len(self.steps)):
            if self.steps[i] <= self.steps[i - 1]:
                raise field_error(
                    f"steps.{i}",
                    f"steps must increase: step {self.steps[i]} comes after {self.steps[i - 1]}",
                )
        return self


class Baseline(Strict):
    """Another result this one is compared with, and the ratio the source gives (≈1.8× faster)."""

    result: Name
    metric: Metric
    ratio: float = Field(gt=0, description="How many times better this result is on `metric`")
    approximate: bool = False


class Result(Strict):
    """What a recipe gave on a platform: a reported figure with its source, or a measured run."""

    name: Name
    summary: ShortText
    recipe: Name
    fingerprint: Fingerprint | None = Field(
        default=None, description="The plan's fingerprint (`rlcat compile --format json`), where known"
    )
    platform: Name
    hardware: Hardware
    verl_version: ShortText | None = None
    mode: Mode
    engine: Engine | None = None
    backend: Backend | None = None
    date: DateText | None = Field(default=None, description="When the run was made or reported")
    kind: Literal["reported", "measured"]
    source: Source | None = Field(default=None, description="reported: where the figures come from")
    run: Run | None = Field(default=None, description="measured: the run folder it was read from")
    metrics: list[Scalar] = Field(default_factory=list, max_length=200)
    series: list[Series] = Field(default_factory=list, max_length=200)
    baseline: Baseline | None = None
    notes: Text = ""

    @model_validator(mode="after")
    def _kind_has_its_origin(self) -> Result:
        if self.kind == "reported" and self.source is None:
            raise field_error("source", "a reported result needs its source (at least a title)")
        if self.kind == "measured" and self.run is None:
            raise field_error("run", "a measured result names its run folder (`rlcat runs add` writes it)")
        for field_name in ("date", "source.date"):
            text = self.date if field_name == "date" else (self.source.date if self.source else None)
            if text is not None:
                try:
                    datetime.date.fromisoformat(text)
                except ValueError:
                    raise field_error(field_name, f"{text} is not a date (YYYY-MM-DD)") from None
        if not self.metrics and not self.series:
            raise field_error("metrics", "a result holds at least one metric or series")
        return self
