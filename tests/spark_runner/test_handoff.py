"""A class's hand-off between jobs without Spark: which classes can move, where each side
reads, the ranges a decision carries, and the files a taking-over job reads."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from pydantic import ValidationError

from spark_runner.contract.control import ClassControl, EventRange, LiveConfig
from spark_runner.core.errors import ParameterError
from spark_runner.core.migration import switch_instant
from spark_runner.engine.control.controller import ControllerOptions, EngineController
from spark_runner.engine.dataflow.handoff import log_start_s, point_margins_s
from spark_runner.engine.dataflow.network import compile_network
from spark_runner.engine.sources.feed import initial_offset, next_offset
from spark_runner.engine.sources.file_log import FileLog
from spark_runner.engine.sources.offsets import ADMIT_ALL, Decision
from spark_runner.engine.sources.source import event_seconds
from spark_runner.scenario import parse_scenario
from spark_runner.scenario.handoff import movable_issue, switch_grid_s

from .test_file_log import T0, S, feed, put
from .test_handoff_spark import SCENARIO

BASE = SCENARIO.split("classes:")[0] + "classes:\n"
SHARED = (
    "shared_segments:\n"
    "  - {name: seg, source: clicks, operators: [{kind: filter, predicate: 'key < 4'}]}\n"
)


def scenario_with(query: str) -> str:
    """The hand-off test's streams and one class ``c`` with ``query``'s operators."""
    return BASE + (
        "  - name: c\n    priority: 1\n    delay_target_s: 20\n    queries:\n"
        "      - name: q\n        source: clicks\n        operators:\n" + query
    )


def test_a_join_s_right_side_reads_its_size_further_and_windows_set_the_grid() -> None:
    plan = compile_network(parse_scenario(SCENARIO))
    margins = {p.stream: m for p, m in zip(plan.points, point_margins_s(plan), strict=True)
               if p.class_name == "recs"}  # fmt: skip
    assert margins == {"clicks": 0.0, "views": 2.0}
    scenario = plan.scenario
    assert movable_issue(scenario, "recs") is None and movable_issue(scenario, "gold") is None
    assert switch_grid_s(scenario, "recs") == 10.0 and switch_grid_s(scenario, "gold") == 5.0
    ranges = {"recs": EventRange(from_s=1000.0)}
    assert log_start_s(plan, ranges, point_margins_s(plan)) == 998.0
    assert log_start_s(plan, {"recs": EventRange(until_s=1000.0)}, point_margins_s(plan)) == 0


def test_windows_of_several_sizes_switch_on_their_common_multiple() -> None:
    scenario = parse_scenario(
        scenario_with(
            "          - {kind: window_aggregate, window: {size_s: 4}}\n"
            "      - name: r\n        source: views\n        operators:\n"
            "          - {kind: window_aggregate, window: {size_s: 6}}\n"
        )
    )
    assert switch_grid_s(scenario, "c") == 12.0
    assert switch_instant(25_001, 10_000, 12_000) == 36_000
    assert switch_instant(26_000, 10_000, 12_000) == 36_000
    with pytest.raises(ParameterError):
        switch_instant(0, 1, 0)


@pytest.mark.parametrize(
    ("query", "why"),
    [
        (
            "          - {kind: window_aggregate,\n"
            "             window: {type: sliding, size_s: 4, slide_s: 2}}\n",
            "sliding window",
        ),
        (
            "          - {kind: window_join, right: clicks, window: {size_s: 2}, on_column: key,\n"
            "             sim: {selectivity: 1}}\n",
            "right side and as a query's source",
        ),
        (
            "          - {kind: window_join, right: views, window: {size_s: 2}, on_column: key,\n"
            "             sim: {selectivity: 1}}\n"
            "      - name: r\n        source: views\n        operators:\n"
            "          - {kind: filter, predicate: 'key < 4'}\n",
            "right side and as a query's source",
        ),
        (
            "          - kind: sql\n            statement: >-\n"
            "              SELECT window(event_time, '5 seconds') AS w, count(*) AS n\n"
            "              FROM clicks GROUP BY 1\n",
            "stateful SQL",
        ),
    ],
)
def test_a_class_whose_windows_cannot_be_split_by_event_time_cannot_move(
    query: str, why: str
) -> None:
    issue = movable_issue(parse_scenario(scenario_with(query)), "c")
    assert issue is not None and why in issue


def test_a_class_sharing_a_segment_cannot_move() -> None:
    text = BASE.replace("classes:", SHARED + "classes:") + (
        "  - name: gold\n    priority: 6\n    delay_target_s: 20\n    queries:\n"
        "      - {name: a, source: seg, operators: [{kind: filter, predicate: 'value < 1'}]}\n"
        "  - name: ads\n    priority: 1\n    delay_target_s: 20\n    queries:\n"
        "      - {name: b, source: seg, operators: [{kind: filter, predicate: 'value < 1'}]}\n"
    )
    scenario = parse_scenario(text)
    for name in ("gold", "ads"):
        assert "reads the shared segment 'seg'" in (movable_issue(scenario, name) or "")


def test_a_decision_carries_each_moving_class_s_range_through_the_offset_log() -> None:
    decision = Decision(version=3, ranges={"recs": (None, 1000.0), "ads": (990.0, None)})
    back = Decision.from_json(json.loads(json.dumps(decision.to_json())))
    assert back.ranges == decision.ranges
    assert back.range_s("recs", 2.0) == (-math.inf, 1002.0)
    assert back.range_s("ads") == (990.0, math.inf)
    assert back.range_s("gold") is None
    assert "r" not in Decision(version=1).to_json()


def test_an_event_range_is_checked_where_it_is_typed() -> None:
    with pytest.raises(ValidationError, match="must be above from_s"):
        EventRange(from_s=10.0, until_s=10.0)
    with pytest.raises(ValidationError):
        EventRange(until_s=-1.0)
    live = LiveConfig(
        classes={"recs": ClassControl(priority=1, delay_target_s=5)},
        ranges={"ads": EventRange(until_s=10.0)},
    )
    with pytest.raises(ParameterError, match=r"ranges\.ads"):
        live.validate_rules()


@pytest.mark.parametrize("plain", [False, True])
def test_a_live_range_reaches_the_sources_and_an_unmovable_class_s_is_refused(plain: bool) -> None:
    plan = compile_network(parse_scenario(SCENARIO))
    controller = EngineController(plan, ControllerOptions(plain=plain))
    live = controller.live
    assert controller.initial_decision().ranges == {}
    moved = live.model_copy(update={"version": 1, "ranges": {"recs": EventRange(until_s=50.0)}})
    assert controller.offer(moved) == 1
    assert controller.initial_decision().ranges == {"recs": (None, 50.0)}
    sliding = compile_network(
        parse_scenario(
            scenario_with(
                "          - {kind: window_aggregate, window: {type: sliding, size_s: 4, "
                "slide_s: 2}}\n"
            )
        )
    )
    other = EngineController(sliding, ControllerOptions(plain=plain))
    refused = other.live.model_copy(update={"version": 1, "ranges": {"c": EventRange(from_s=9.0)}})
    assert other.offer(refused) is None and other.initial_decision().ranges == {}


def test_event_instants_read_from_every_kind_of_column() -> None:
    stamps = pa.array([1_500_000, None, 2_000_000], pa.int64()).cast(pa.timestamp("us", tz="UTC"))
    assert event_seconds(stamps)[[0, 2]].tolist() == [1.5, 2.0]
    assert math.isnan(event_seconds(stamps)[1])
    assert event_seconds(np.array([3_000_000], dtype=np.int64)).tolist() == [3.0]
    assert event_seconds(np.array([4.25])).tolist() == [4.25]


def test_a_job_taking_over_reads_the_files_from_its_start_instant(tmp_path: Path) -> None:
    trades = tmp_path / "in" / "trades"
    put(trades / "early.json", json.dumps({"account": 1}), T0 - 20)
    put(trades / "after.json", json.dumps({"account": 2}), T0 - 5)
    spec = feed(tmp_path)
    spec = type(spec)(**{**spec.__dict__, "start_s": T0 - 10})
    log = FileLog(spec, tmp_path / "run")
    start = initial_offset(spec, log, round(T0 * S))
    end = next_offset(spec, log, start, ADMIT_ALL, round((T0 + 1) * S))
    assert end.points[0].arrived == 1  # the file from the start instant on, not the earlier
