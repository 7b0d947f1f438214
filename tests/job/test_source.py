"""The data source's reader, called the way Spark calls it, without a JVM."""

from __future__ import annotations

import json
import pickle

import pyarrow as pa
import pytest

from spark_runner.job.generator import ARROW_SCHEMA, US_PER_S, ClassStream
from spark_runner.job.source import (
    OPTION_CLASSES,
    OPTION_ORIGIN_US,
    SCHEMA,
    ClassStreamSource,
    decode_classes,
    encode_classes,
)

ORIGIN_US = 1_763_700_000_000_000
STREAMS = (
    ClassStream(class_id=0, name="gold", rate_per_s=100.0),
    ClassStream(class_id=1, name="bronze", rate_per_s=10.0),
)


def source(origin_us: int = ORIGIN_US) -> ClassStreamSource:
    return ClassStreamSource(
        {OPTION_CLASSES: encode_classes(STREAMS), OPTION_ORIGIN_US: str(origin_us)}
    )


def read_all(reader: object, start: dict[str, int], end: dict[str, int]) -> pa.Table:
    batches = []
    for partition in reader.partitions(start, end):  # type: ignore[attr-defined]
        # Spark pickles partitions to the workers.
        batches.extend(reader.read(pickle.loads(pickle.dumps(partition))))  # type: ignore[attr-defined]
    return pa.Table.from_batches(batches, schema=ARROW_SCHEMA)


def test_options_round_trip() -> None:
    assert decode_classes(encode_classes(STREAMS)) == STREAMS


def test_schema_matches_the_generated_columns() -> None:
    assert source().schema() == SCHEMA
    assert SCHEMA.fieldNames() == ARROW_SCHEMA.names


def test_missing_options_name_what_is_needed() -> None:
    with pytest.raises(ValueError, match="origin_us"):
        ClassStreamSource({OPTION_CLASSES: encode_classes(STREAMS)}).streamReader(SCHEMA)
    with pytest.raises(ValueError, match="classes"):
        ClassStreamSource({OPTION_CLASSES: "not json", OPTION_ORIGIN_US: "1"}).streamReader(SCHEMA)


def test_offsets_are_time_and_carry_the_origin() -> None:
    reader = source().streamReader(SCHEMA)
    initial = reader.initialOffset()
    assert initial == {"origin_us": ORIGIN_US, "t_us": ORIGIN_US}
    json.dumps(initial)  # Spark stores offsets as JSON

    latest = reader.latestOffset(initial, None)  # type: ignore[arg-type]
    assert latest["origin_us"] == ORIGIN_US
    assert latest["t_us"] > ORIGIN_US  # "now" is long after this origin

    # A start offset in the future (clock stepped back) never moves the offset backwards.
    future = {"origin_us": ORIGIN_US, "t_us": 2**62}
    assert reader.latestOffset(future, None) == future  # type: ignore[arg-type]


def test_batch_holds_exactly_the_tuples_scheduled_in_its_window() -> None:
    reader = source().streamReader(SCHEMA)
    start = {"origin_us": ORIGIN_US, "t_us": ORIGIN_US + 2 * US_PER_S}
    end = {"origin_us": ORIGIN_US, "t_us": ORIGIN_US + 3 * US_PER_S}

    rows = read_all(reader, start, end)

    assert rows.num_rows == 110
    for name, count in [("gold", 100), ("bronze", 10)]:
        arrivals = rows.filter(pa.compute.equal(rows["class_name"], name))["arrival_s"]
        assert len(arrivals) == count
        assert min(arrivals.to_pylist()) >= start["t_us"] / US_PER_S
        assert max(arrivals.to_pylist()) < end["t_us"] / US_PER_S
    assert reader.partitions(end, end) == []


def test_replay_uses_the_origin_of_the_offsets_not_of_the_options() -> None:
    """After a restart the source gets a new origin option; checkpointed offsets must
    still regenerate the very same tuples."""
    start = {"origin_us": ORIGIN_US, "t_us": ORIGIN_US + 5 * US_PER_S}
    end = {"origin_us": ORIGIN_US, "t_us": ORIGIN_US + 6 * US_PER_S + 123}
    first_run = read_all(source().streamReader(SCHEMA), start, end)
    restarted = read_all(source(ORIGIN_US + 3600 * US_PER_S).streamReader(SCHEMA), start, end)
    assert first_run.equals(restarted)
