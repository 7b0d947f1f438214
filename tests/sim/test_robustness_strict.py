"""The strict robustness bar in CI: ``python -m bench.bench_robustness --strict`` on the
benchmark's workloads under DILoS's default policy (simulated time, deterministic)."""

from __future__ import annotations

import pytest

from bench import bench_robustness


def test_dilos_under_the_default_policy_keeps_the_strict_bar(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """On workloads 0–59: priority order and the top-class promise in every run that
    judges them, every promise in at least 95 % of the runs, no run beating the oracle
    (``bench_robustness.strict_failures``). The property test of ``test_promises.py``
    judges fresh workloads at each commit; this one holds the benchmark's figure."""
    code = bench_robustness.main(
        [
            "--workloads",
            "60",
            "--strict",
            "--jobs",
            "1",
            "--variants",
            bench_robustness.STRICT_VARIANT,
        ]
    )
    assert code == 0, capsys.readouterr().out
