"""The cluster coordinator: the executors of each coordinated Spark master divided among
its elastic jobs by global priority (ARMaDILoS; the policy is
``spark_runner.core.coordinator``)."""

AUTHOR = "coordinator"
"""Who the coordinator's configuration versions and hand-offs are by."""
