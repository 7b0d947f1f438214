"""A query per priority tier: which classes share a query, and what each query runs."""

from __future__ import annotations

import pytest

from spark_runner.contract.control import ClassControl, LiveConfig
from spark_runner.core.errors import ParameterError
from spark_runner.engine.dataflow.network import compile_network
from spark_runner.engine.dataflow.tiers import (
    check_tiers,
    merge_results,
    pool_shares,
    tier_classes,
    tier_live,
    tier_scenario,
    tier_sink_path,
)
from spark_runner.scenario import Scenario, parse_scenario
from spark_runner.scenario.models import Background, ElasticSpec

from .conftest import SHARED_EXPENSIVE_LOWER


def test_a_tier_per_priority_level_highest_first(demo: Scenario) -> None:
    assert tier_classes(demo) == [["gold"], ["silver"], ["bronze"]]


def test_classes_of_one_priority_share_a_tier(demo: Scenario) -> None:
    same = demo.model_copy(
        update={"classes": [c.model_copy(update={"priority": 2}) for c in demo.classes]}
    )
    assert tier_classes(same) == [["gold", "silver", "bronze"]]


def test_levels_reading_one_segment_are_one_tier_with_the_levels_between(
    sharing: Scenario,
) -> None:
    # class1 (6) and class3 (1) read seg13; class2 (3) does not, but lies between them
    assert tier_classes(sharing) == [["class1", "class2", "class3"]]
    assert tier_classes(parse_scenario(SHARED_EXPENSIVE_LOWER)) == [["gold", "bronze"]]


def test_a_tier_runs_its_classes_streams_and_the_background_once(demo: Scenario) -> None:
    with_background = demo.model_copy(update={"background": [Background(start_s=0, share=0.2)]})
    top = tier_scenario(with_background, ["gold"], top=True)
    low = tier_scenario(with_background, ["bronze"], top=False)
    assert [c.name for c in top.classes] == ["gold"]
    assert [s.name for s in top.streams] == ["trades"]
    assert top.background and not low.background
    # bronze joins its clicks with trades: both streams are its
    assert sorted(s.name for s in low.streams) == ["clicks", "trades"]
    for names in tier_classes(demo):  # every tier compiles on its own
        assert list(compile_network(tier_scenario(demo, names, top=False)).class_names) == names


def test_a_tier_keeps_the_segments_its_classes_read(sharing: Scenario) -> None:
    part = tier_scenario(sharing, ["class3"], top=False)
    assert [s.name for s in part.shared_segments] == ["seg13"]
    assert {s.name for s in part.streams} == {"sa", "sb", "s13"}


def test_a_tier_takes_its_classes_part_of_a_live_configuration() -> None:
    live = LiveConfig(
        version=4,
        policy="strict",
        classes={
            "gold": ClassControl(priority=6, delay_target_s=1.5),
            "bronze": ClassControl(priority=1, delay_target_s=3),
        },
    )
    part = tier_live(live, ["bronze"])
    assert (part.version, part.policy, list(part.classes)) == (4, "strict", ["bronze"])


def test_elastic_and_common_jobs_run_one_query(demo: Scenario) -> None:
    for control in ({"mode": "common"}, {"elastic": ElasticSpec()}):
        changed = demo.model_copy(update={"control": demo.control.model_copy(update=control)})
        with pytest.raises(ParameterError, match=r"engine\.queries"):
            check_tiers(changed)
    check_tiers(demo)


def test_each_tier_writes_its_own_sink() -> None:
    assert tier_sink_path("parquet", "/out", 1) == "/out/tier=1"
    assert tier_sink_path("redis", "headroom:out", 0) == "headroom:out:tier0"
    assert tier_sink_path("memory", None, 2) is None


def test_the_top_pool_takes_every_core_before_the_tiers_below() -> None:
    assert pool_shares(3, 2) == [("tier0", 2, 4), ("tier1", 0, 2), ("tier2", 0, 1)]


def test_one_results_document_of_the_tiers() -> None:
    def part(name: str, loss: float, t: list[float], batches: int) -> dict[str, object]:
        return {
            "format": "f",
            "classes": {name: {"loss_fraction": loss}},
            "totals": {"idle_fraction": 0.1 * batches, "operator_turns": batches},
            "redistributions": [],
            "actions": [{"at_s": t[0], "seq": batches}],
            "series": [{"t_s": x, "classes": {name: {}}} for x in t],
            "engine": {"batches": batches, "warmup_ended": True},
        }

    merged = merge_results([part("gold", 0.0, [1.0, 3.0], 2), part("ads", 0.5, [2.0], 1)])
    assert list(merged["classes"]) == ["gold", "ads"]
    assert merged["totals"]["mean_loss_fraction"] == 0.25
    assert [s["t_s"] for s in merged["series"]] == [1.0, 2.0, 3.0]
    assert merged["engine"]["batches"] == 3
    assert [t["classes"] for t in merged["engine"]["tiers"]] == [["gold"], ["ads"]]
