"""The scenario format: valid files load; every broken rule names its YAML path and line."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from spark_runner.scenario import Scenario, ScenarioError, load_scenario, parse_scenario
from spark_runner.scenario.loader import apply_override, parse_path
from spark_runner.scenario.models import FilterOp, WindowJoinOp

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = sorted((ROOT / "scenarios").rglob("*.yaml"))

BASE = textwrap.dedent(
    """\
    version: 1
    name: tiny
    duration_s: 10
    control: {period_s: 0.5, mode: per_class}
    streams:
      - name: s1
        arrival: {kind: constant, rate_per_s: 100}
      - name: s2
        arrival: {kind: constant, rate_per_s: 50}
    classes:
      - name: gold
        priority: 6
        delay_target_s: 0.3
        queries:
          - name: q1
            source: s1
            operators:
              - {kind: filter, predicate: "value < 0.5"}
              - kind: window_aggregate
                window: {type: tumbling, size_s: 1}
              - {kind: window_join, right: s2, window: {size_s: 1}, sim: {selectivity: 0.2}}
    """
)


def issues_of(text: str, *overrides: str) -> list[str]:
    with pytest.raises(ScenarioError) as info:
        parse_scenario(text, source="t.yaml", overrides=overrides)
    return [i.render("t.yaml") for i in info.value.issues]


def test_base_document_loads_with_defaults() -> None:
    sc = parse_scenario(BASE)
    assert isinstance(sc, Scenario)
    assert sc.version == 1
    assert sc.engine.batch_size == 50
    assert sc.classes[0].manager.kind == "aloma"
    ops = sc.classes[0].queries[0].operators
    assert isinstance(ops[0], FilterOp) and isinstance(ops[2], WindowJoinOp)


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: str(p.relative_to(ROOT)))
def test_shipped_scenarios_are_valid(path: Path) -> None:
    sc = load_scenario(path)
    assert sc.duration_s > 0 and sc.classes


def test_window_size_error_names_the_path_the_rule_and_the_line() -> None:
    (issue,) = issues_of(BASE.replace("size_s: 1}\n", "size_s: 0}\n", 1))
    assert issue == (
        "t.yaml:20: classes[0].queries[0].operators[1].window.size_s: must be >= 0.001, got 0"
    )


def test_several_problems_are_reported_at_once() -> None:
    text = BASE.replace("priority: 6", "priority: -1").replace("rate_per_s: 100", "rate_per_s: x")
    issues = issues_of(text)
    assert any("classes[0].priority: must be > 0, got -1" in i for i in issues)
    assert any("streams[0].arrival.rate_per_s: must be a number" in i for i in issues)


def test_unknown_field_is_a_typo() -> None:
    (issue,) = issues_of(BASE.replace("delay_target_s: 0.3", "delay_target_s: 0.3\n    dealy: 1"))
    assert "classes[0].dealy: is not a field here" in issue


def test_unknown_operator_kind_lists_the_kinds() -> None:
    (issue,) = issues_of(BASE.replace("kind: window_aggregate", "kind: window_agg"))
    assert "classes[0].queries[0].operators[1].kind: 'window_agg' is not one of" in issue
    assert "'window_join'" in issue


def test_sliding_window_needs_a_slide_no_longer_than_its_size() -> None:
    (issue,) = issues_of(
        BASE.replace("type: tumbling, size_s: 1", "type: sliding, size_s: 1, slide_s: 2")
    )
    assert "operators[1].window: slide_s (2.0) must be <= size_s (1.0)" in issue


def test_bad_predicate_is_explained() -> None:
    (issue,) = issues_of(BASE.replace("value < 0.5", "price < 0.5"))
    assert "operators[0].predicate: column 'price' is not a column here (available:" in issue
    (issue,) = issues_of(BASE.replace("value < 0.5", "value < cheap"))
    assert "predicate 'value < cheap' expected a number after 'value' <, got 'cheap'" in issue


def test_references_must_name_a_stream_or_segment() -> None:
    issues = issues_of(BASE.replace("source: s1", "source: nope").replace("right: s2", "right: s9"))
    assert any("classes[0].queries[0].source: source 'nope' is neither" in i for i in issues)
    assert any("operators[2].right: right input 's9' is neither" in i for i in issues)


def test_join_needs_a_simulated_selectivity() -> None:
    (issue,) = issues_of(BASE.replace(", sim: {selectivity: 0.2}", ""))
    assert "operators[2].sim.selectivity: is required for window_join" in issue


def test_duplicate_names() -> None:
    text = BASE.replace("name: s2", "name: s1").replace("right: s2", "right: s1")
    (issue,) = issues_of(text)
    assert "streams[1].name: 's1' is already defined at streams[0].name" in issue


def test_manager_parameters_are_validated_by_the_core() -> None:
    text = BASE.replace(
        "delay_target_s: 0.3\n",
        "delay_target_s: 0.3\n    manager: {kind: aloma, params: {max_shed: 1.5}}\n",
    )
    (issue,) = issues_of(text)
    assert "classes[0].manager.params.max_shed: 1.5: must be within [0.0, 1.0)" in issue


def test_manager_kind_must_exist() -> None:
    (issue,) = issues_of(BASE, "classes[0].manager.kind=magic")
    assert "classes[0].manager.kind: 'magic': must be one of aloma" in issue


def test_delay_target_belongs_to_the_class_not_the_manager() -> None:
    (issue,) = issues_of(BASE, "classes[0].manager.params.delay_target_s=1")
    assert "classes[0].manager.params.delay_target_s: is set by the class" in issue


def test_elastic_settings_are_validated_by_the_core() -> None:
    (issue,) = issues_of(BASE, "control.elastic.params.max_executors=0")
    assert "control.elastic.params.max_executors: 0: must be an integer >= 1" in issue
    (issue,) = issues_of(BASE, "control.elastic.params.hold_in_s=1")
    assert "control.elastic.params.hold_in_s: 1.0: must be >= hold_out_s=10.0" in issue
    (issue,) = issues_of(BASE, "control.elastic.params.tau3=0.9")
    assert "control.elastic.params.tau3: is set per class (classes[].thresholds)" in issue


def test_unsupported_version() -> None:
    (issue,) = issues_of(BASE.replace("version: 1", "version: 2"))
    assert "version: unsupported scenario version 2; this build reads 1" in issue


def test_missing_trace_file(tmp_path: Path) -> None:
    text = BASE.replace(
        "arrival: {kind: constant, rate_per_s: 50}", "arrival: {kind: trace, path: missing.csv}"
    )
    with pytest.raises(ScenarioError) as info:
        parse_scenario(text, base_dir=tmp_path)
    (issue,) = info.value.issues
    assert issue.path == "streams[1].arrival.path" and "trace file not found" in issue.message


def test_broken_trace_file_names_its_line(tmp_path: Path) -> None:
    (tmp_path / "t.csv").write_text("time_s,rate_per_s\n0,10\n1,-5\n")
    text = BASE.replace(
        "arrival: {kind: constant, rate_per_s: 50}", "arrival: {kind: trace, path: t.csv}"
    )
    with pytest.raises(ScenarioError) as info:
        parse_scenario(text, base_dir=tmp_path)
    (issue,) = info.value.issues
    assert issue.path == "streams[1].arrival.path" and "line 3" in issue.message


def test_unused_segment_and_segment_cycles() -> None:
    text = BASE + textwrap.dedent(
        """\
        shared_segments:
          - name: a
            source: b
            operators: [{kind: project, columns: [key]}]
          - name: b
            source: a
            operators: [{kind: project, columns: [key]}]
        """
    )
    issues = issues_of(text)
    assert any("segments must not feed themselves" in i for i in issues)
    assert any("segment 'a' is not used by any query" in i for i in issues)


def test_yaml_syntax_error_has_a_line() -> None:
    (issue,) = issues_of("version: 1\nname: [oops\n")
    assert issue.startswith("t.yaml:") and "not valid YAML" in issue


def test_overrides_are_validated_like_the_file() -> None:
    sc = parse_scenario(BASE, overrides=["control.mode=dilos", "classes[0].priority=2.5"])
    assert sc.control.mode == "dilos" and sc.classes[0].priority == 2.5
    (issue,) = issues_of(BASE, "control.mode=sometimes")
    assert "control.mode: must be one of" in issue


def test_override_changes_one_place_even_through_yaml_aliases() -> None:
    text = (
        BASE.replace(
            "delay_target_s: 0.3\n",
            "delay_target_s: 0.3\n    manager: &m {kind: aloma, params: {max_shed: 0.9}}\n",
        )
        + "  - {name: silver, priority: 1, delay_target_s: 1, manager: *m,\n"
        + "     queries: [{name: q, source: s1, operators: [{kind: project, columns: [key]}]}]}\n"
    )
    sc = parse_scenario(text, overrides=["classes[1].manager.params.max_shed=0.5"])
    assert sc.classes[0].manager.params["max_shed"] == 0.9
    assert sc.classes[1].manager.params["max_shed"] == 0.5


def test_bad_override_paths() -> None:
    for bad, message in (
        ("control.mode", "an override is path=value"),
        ("classes[5].priority=1", "no such list item"),
        ("control..mode=x", "cannot override"),
    ):
        with pytest.raises(ScenarioError) as info:
            parse_scenario(BASE, overrides=[bad])
        assert message in str(info.value)


def test_parse_path() -> None:
    assert parse_path("classes[2].queries[0].name") == ["classes", 2, "queries", 0, "name"]
    with pytest.raises(ValueError):
        parse_path("a.")


def test_apply_override_creates_missing_mappings() -> None:
    data: dict[str, object] = {"engine": None}
    apply_override(data, "engine.batch_size=10")
    assert data == {"engine": {"batch_size": 10}}
