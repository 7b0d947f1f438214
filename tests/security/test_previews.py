"""Probe: what a preview of a live change costs, and who pays (issue 42, finding 6).

Before: a filter on a ``zipf`` column recomputed the column's whole distribution each time
its selectivity was read (about 2.5 s per filter at n = 10**6; a preview reads it three
times per filter, so one such preview took 15 s).
"""

from __future__ import annotations

import math

import pytest

from spark_runner.scenario.columns import StreamColumn, ZipfGen
from spark_runner.scenario.predicates import parse_predicate


def test_a_zipf_distribution_is_computed_once_per_n_and_s(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each preview parses the job's scenario anew: equal generators of two parses share
    one distribution, a different exponent gets its own."""
    computed: list[tuple[int, float]] = []
    weights = ZipfGen.weights

    def counted(generator: ZipfGen) -> list[float]:
        computed.append((generator.n, generator.s))
        return weights(generator)

    monkeypatch.setattr(ZipfGen, "weights", counted)

    def column(s: float) -> StreamColumn:  # a fresh parse, as each preview makes
        generator = {"kind": "zipf", "n": 50_000, "s": s}
        return StreamColumn.model_validate(
            {"name": "account", "type": "long", "generator": generator}
        )

    shares = [
        parse_predicate(text).selectivity([column(1.37)])
        for text in ("account < 10", "account >= 10 and account != 20", "account < 10")
    ]
    assert computed == [(50_000, 1.37)]
    parse_predicate("account < 10").selectivity([column(1.38)])
    assert computed == [(50_000, 1.37), (50_000, 1.38)]
    # The same shares as summing the distribution's probabilities.
    generator = column(1.37).generator
    assert isinstance(generator, ZipfGen)
    probabilities = weights(generator)
    below_10 = math.fsum(probabilities[:10])
    assert shares == pytest.approx([below_10, 1 - below_10 - probabilities[20], below_10])
