"""The live QoS configuration of a job: what an operator may change while it runs.

The control plane stores every change as a new ``version``; the job polls for a newer
version, applies it at its next control period and acknowledges the version it applied.
``validate`` checks a whole configuration with the core's own rules (the same code the
controller runs), so the API rejects what the job would reject.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from spark_runner.contract.settings import setting_field, with_class_settings
from spark_runner.core.dilos import ClassSpec, DilosParams
from spark_runner.core.elastic import ScalingParams, job_thresholds
from spark_runner.core.errors import ParameterError
from spark_runner.core.managers.registry import manager_params
from spark_runner.core.params import ParamValue, build_params, params_as_dict
from spark_runner.core.redistribution import DEFAULT_POLICY
from spark_runner.core.thresholds import TAUS

JOB_FIELDS = ("recommend_only", "policy", "redistribution_every", "redistribution_enabled")
"""The job settings of a live configuration (its classes' and elasticity aside)."""
LIVE_ELASTIC = (
    "hold_out_s",
    "hold_in_s",
    "min_executors",
    "max_executors",
    "sizing",
    "startup_timeout_s",
    "warmup_s",
)
"""The elasticity settings a running job takes (``executor_cores`` and ``start`` are fixed
when the application starts, the thresholds are the classes')."""
PER_CLASS = "is set per class (the job takes the lowest of its classes')"
"""Why a threshold is no elasticity setting."""


@with_class_settings()
class ClassControl(BaseModel):
    """Live-tunable parameters of one class (spec defaults where not given): a field per
    class setting (:func:`~spark_runner.contract.settings.with_class_settings`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    priority: float = setting_field("priority")
    delay_target_s: float = setting_field("delay_target_s")
    manager: str = setting_field("manager")
    manager_params: dict[str, ParamValue] = setting_field("manager_params")

    def spec(self, name: str) -> ClassSpec:
        """The core's class specification; raises ``ParameterError`` on any broken rule."""
        try:
            manager_params(
                self.manager, {**self.manager_params, "delay_target_s": self.delay_target_s}
            )
        except ParameterError as error:
            field = "manager" if error.field == "kind" else f"manager_params.{error.field}"
            if error.field == "delay_target_s":
                field = "delay_target_s"
            raise ParameterError(field, error.value, error.rule) from None
        return ClassSpec.of_settings(name, self.model_dump())


EPOCH_MAX_S = 4_102_444_800.0
"""2100-01-01 in epoch seconds: the latest instant a range bound may name."""


class EventRange(BaseModel):
    """The stretch of event time a job computes for one class, its share of the class's
    hand-off between jobs (:class:`~spark_runner.core.migration.HandOff`): the origin
    keeps the tuples before ``until_s``, the target those from ``from_s`` on. A bound left
    None is open. Epoch seconds."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    from_s: float | None = Field(default=None, ge=0, le=EPOCH_MAX_S)
    until_s: float | None = Field(default=None, ge=0, le=EPOCH_MAX_S)

    @model_validator(mode="after")
    def _ordered(self) -> EventRange:
        if self.from_s is not None and self.until_s is not None and self.until_s <= self.from_s:
            raise ValueError(f"until_s ({self.until_s}) must be above from_s ({self.from_s})")
        return self

    @classmethod
    def nothing(cls) -> EventRange:
        """A class held in standby: the job runs its queries but computes none of its
        event time until a hand-off gives it a range."""
        return cls(until_s=0.0)

    def computes_from(self, t_s: float) -> bool:
        """Whether the job computes any of the class's event time from ``t_s`` on."""
        return self.until_s is None or self.until_s > t_s


class LiveConfig(BaseModel):
    """The whole live configuration of a job at one version."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    version: int = Field(default=0, ge=0)
    recommend_only: bool = Field(
        default=False, description="Compute and report decisions, but shed nothing."
    )
    policy: str = Field(default=DEFAULT_POLICY, description="absolute, relative (thesis), strict.")
    redistribution_every: int = Field(default=10, description="CRC, in control periods.")
    redistribution_enabled: bool = True
    classes: dict[str, ClassControl]
    elastic: dict[str, ParamValue] | None = Field(
        default=None,
        description="The job's elasticity settings (None: it does not scale its executors): "
        f"{', '.join(LIVE_ELASTIC)} change live; executor_cores is fixed at launch and "
        "max_executors cannot rise above the launch's; the thresholds tau0..tau3 are the "
        "lowest of the classes'.",
    )
    ranges: dict[str, EventRange] = Field(
        default_factory=dict,
        description="Per class moving between jobs, the event time this job computes for "
        "it; a class not named here: all of it. Set by the control plane's hand-offs.",
    )

    def dilos_params(self) -> DilosParams:
        return DilosParams(
            redistribution_every=self.redistribution_every,
            policy=self.policy,
            redistribution_enabled=self.redistribution_enabled,
        )

    def validate_rules(self) -> None:
        """Raise ``ParameterError`` (field names prefixed with the class) on a broken rule."""
        self.dilos_params()
        for name, control in self.classes.items():
            try:
                control.spec(name)
            except ParameterError as error:
                raise ParameterError(
                    f"classes.{name}.{error.field}", error.value, error.rule
                ) from None
        for name in self.ranges:
            if name not in self.classes:
                raise ParameterError(
                    f"ranges.{name}", name, f"not a class of this job: {sorted(self.classes)}"
                )
        self.scaling_params()

    def targets(self) -> dict[str, float]:
        """Each class's delay target, by name."""
        return {name: c.delay_target_s for name, c in self.classes.items()}

    def usage_thresholds(self) -> dict[str, float]:
        """The job's usage thresholds τ0..τ3: the lowest of its classes' (the core's rule)."""
        return job_thresholds(c.spec(n).thresholds for n, c in self.classes.items())

    def scaling_params(self) -> ScalingParams | None:
        """The job's elasticity settings with its thresholds (the lowest of its classes');
        None when it does not scale. Raises ``ParameterError`` (``elastic.<name>``)."""
        if self.elastic is None:
            return None
        try:
            return build_params(ScalingParams, {**self.elastic, **self.usage_thresholds()})
        except ParameterError as error:
            raise ParameterError(f"elastic.{error.field}", error.value, error.rule) from None

    def check_launch(self, launch: LiveConfig) -> None:
        """The rules a change must keep against the configuration the job started with:
        the pool's executor size and its largest size are the application's (Spark takes
        ``spark.executor.cores`` and ``spark.cores.max`` when it starts)."""
        if self.elastic is None or launch.elastic is None:
            return
        cores = launch.elastic.get("executor_cores")
        if self.elastic.get("executor_cores") != cores:
            raise ParameterError(
                "elastic.executor_cores",
                self.elastic.get("executor_cores"),
                f"is fixed when the job starts (it started with {cores})",
            )
        most = launch.elastic.get("max_executors")
        asked = self.elastic.get("max_executors")
        if isinstance(most, int) and isinstance(asked, int) and asked > most:
            raise ParameterError(
                "elastic.max_executors",
                asked,
                f"must be <= {most}, the job's maximum when it started (Spark's cores.max)",
            )

    def merged(self, changes: dict[str, Any], version: int) -> LiveConfig:
        """A new configuration with ``changes`` (same shape, partial) applied."""
        data = self.model_dump()
        for key, value in changes.items():
            if key == "classes":
                for name, fields in value.items():
                    if name not in data["classes"]:
                        raise ParameterError(
                            f"classes.{name}",
                            name,
                            f"not a class of this job: {sorted(data['classes'])}",
                        )
                    data["classes"][name].update(fields)
            elif key == "elastic":
                data["elastic"] = _merged_elastic(data["elastic"], value)
            else:
                data[key] = value
        data["version"] = version
        return LiveConfig.model_validate(data)


def elastic_settings(params: Mapping[str, Any]) -> dict[str, ParamValue]:
    """A job's whole elasticity settings from ``params`` (a scenario's
    ``control.elastic.params`` or a launch request's), defaults filled in, without the
    thresholds (those are the classes'). Raises ``ParameterError`` (``elastic.<name>``)."""
    for key, value in params.items():
        if key in TAUS:
            raise ParameterError(
                f"elastic.{key}",
                value,
                "is set per class (the job takes the lowest of its classes')",
            )
    try:
        settings = build_params(ScalingParams, params)
    except ParameterError as error:
        raise ParameterError(f"elastic.{error.field}", error.value, error.rule) from None
    return {k: v for k, v in params_as_dict(settings).items() if k not in TAUS}  # type: ignore[misc]


def _merged_elastic(current: dict[str, Any] | None, changes: Any) -> dict[str, Any]:
    """The elasticity settings with ``changes`` (only :data:`LIVE_ELASTIC` keys)."""
    if current is None:
        raise ParameterError(
            "elastic", changes, "this job does not scale its executors (no control.elastic)"
        )
    if not isinstance(changes, dict):
        raise ParameterError("elastic", changes, "must be an object of settings")
    for key, value in changes.items():
        if key not in LIVE_ELASTIC:
            rule = (
                PER_CLASS
                if key in TAUS
                else f"cannot change while the job runs; live: {', '.join(LIVE_ELASTIC)}"
            )
            raise ParameterError(f"elastic.{key}", value, rule)
    return {**current, **changes}


class TargetsInForce(Mapping[str, float]):
    """Each class's delay target in the live configuration in force (``live()``): the one
    holder a running job's readers of a target ask (its action log, its response-time
    digests and period statistics), so a live change reaches them all at once."""

    def __init__(self, live: Callable[[], LiveConfig]) -> None:
        self._live = live

    def __getitem__(self, name: str) -> float:
        return self._live().classes[name].delay_target_s

    def __iter__(self) -> Iterator[str]:
        return iter(self._live().classes)

    def __len__(self) -> int:
        return len(self._live().classes)
