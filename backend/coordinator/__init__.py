"""The cluster coordinator: the executors of each coordinated Spark master divided among
its elastic jobs by global priority (ARMaDILoS; the policy is
``spark_runner.core.coordinator``)."""

from typing import Final

AUTHOR: Final = "coordinator"
"""Who the coordinator's configuration versions and hand-offs are by."""
