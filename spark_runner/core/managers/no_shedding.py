"""The "none" manager: never sheds; the baseline for "no load manager"."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from spark_runner.core.managers.base import LoadManager, ManagerParams, display_state
from spark_runner.core.observation import Decision, Observation


@dataclass(frozen=True)
class NoSheddingParams(ManagerParams):
    """No parameters beyond the common ones (kept for a uniform interface)."""


class NoSheddingManager(LoadManager[NoSheddingParams], kind="none", label="none (never sheds)"):
    """Never sheds."""

    sheds: ClassVar[bool] = False

    def reset(self) -> None:
        self._shed = 0.0

    def step(self, obs: Observation) -> Decision:
        state = display_state(obs, self._params.delay_target_s, False)
        return self._decide(obs, 0.0, state, action="admit_all")
