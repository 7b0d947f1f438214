"""The schema is Alembic's: migrations build exactly the models, and undo cleanly, one
revision at a time, with data in every table (on SQLite and on PostgreSQL)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import JSON, Boolean, DateTime, Engine, Float, Integer, MetaData, Numeric, Table
from sqlalchemy import inspect as sa_inspect

from backend.db import make_engine
from backend.migrate import alembic_config, upgrade
from backend.models import Base

DATABASES = ["sqlite", pytest.param("postgresql", marks=pytest.mark.services)]


@pytest.fixture(params=DATABASES)
def fresh_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """An empty database (no schema) of this test's own."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'm.db'}"
    return str(request.getfixturevalue("empty_postgres_url"))


@pytest.fixture
def engine(fresh_url: str) -> Iterator[Engine]:
    engine = make_engine(fresh_url)
    yield engine
    engine.dispose()


def test_models_match_migrations(fresh_url: str, engine: Engine) -> None:
    upgrade(fresh_url)
    with engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
    assert diff == [], f"models and migrations disagree: {diff}"


Rows = dict[str, dict[tuple[Any, ...], dict[str, Any]]]
"""table → primary key → column → value."""

_serial = itertools.count(1)


def _value(table: Table, name: str, parents: dict[str, list[int]]) -> Any:
    """A representative, unique value for a column (a parent's id for a foreign key)."""
    column = table.c[name]
    for fk in column.foreign_keys:
        ids = parents.get(fk.column.table.name, [])
        return ids[-1] if ids else None
    n = next(_serial)
    kind = column.type
    if isinstance(kind, Boolean):
        return n % 2 == 0
    if isinstance(kind, Integer):
        return n
    if isinstance(kind, Float | Numeric):
        return n + 0.25
    if isinstance(kind, DateTime):
        return datetime(2026, 1, 1, tzinfo=UTC) + timedelta(seconds=n)
    if isinstance(kind, JSON):
        return {"n": n, "list": [n, "x"]}
    length = getattr(kind, "length", None) or 40
    return f"v{n}"[:length]


def insert_rows(engine: Engine) -> None:
    """One row in every table of the current schema, parents before children."""
    metadata = MetaData()
    metadata.reflect(engine)
    parents: dict[str, list[int]] = {}
    with engine.begin() as conn:
        for table in metadata.sorted_tables:
            if table.name == "alembic_version":
                continue
            row = {
                c.name: _value(table, c.name, parents)
                for c in table.columns
                if not (c.primary_key and c.name == "id")
            }
            key = conn.execute(table.insert().values(row)).inserted_primary_key
            if "id" in table.c and key is not None:
                parents.setdefault(table.name, []).append(int(key[0]))


def snapshot(engine: Engine) -> Rows:
    metadata = MetaData()
    metadata.reflect(engine)
    rows: Rows = {}
    with engine.connect() as conn:
        for table in metadata.sorted_tables:
            if table.name == "alembic_version":
                continue
            key = [c.name for c in table.primary_key.columns]
            rows[table.name] = {
                tuple(r[k] for k in key): dict(r) for r in conn.execute(table.select()).mappings()
            }
    return rows


def assert_kept(before: Rows, after: Rows, step: str) -> None:
    """Every row of ``before`` is in ``after`` wherever ``after`` keeps its table, with the
    same values in every column ``after`` keeps."""
    for table, rows in after.items():
        if table not in before:
            continue
        assert rows.keys() == before[table].keys(), f"{step}: {table} lost or gained rows"
        for key, row in rows.items():
            kept = {c: before[table][key][c] for c in row if c in before[table][key]}
            assert {c: row[c] for c in kept} == kept, f"{step}: {table} row {key} changed"


def revisions() -> list[str]:
    script = ScriptDirectory.from_config(alembic_config())
    return [r.revision for r in reversed(list(script.walk_revisions()))]


def test_each_revision_steps_down_and_up_keeping_its_data(fresh_url: str, engine: Engine) -> None:
    """Up from base, one revision at a time, with a row in every table at each; then from
    head down to base one revision at a time, and at each step back up and down again:
    the data survives wherever the schema keeps its table and column."""
    config = alembic_config(fresh_url)
    chain = revisions()
    for revision in chain:
        command.upgrade(config, revision)
        insert_rows(engine)
    assert all(snapshot(engine).values()), "every table at head holds data"

    for revision in reversed(chain):
        at_revision = snapshot(engine)
        command.downgrade(config, "-1")
        below = snapshot(engine)
        assert_kept(at_revision, below, f"downgrade of {revision}")
        command.upgrade(config, "+1")
        back = snapshot(engine)
        assert_kept(below, back, f"upgrade to {revision} again")
        assert back.keys() == at_revision.keys(), f"{revision} re-created other tables"
        insert_rows(engine)  # the re-created schema takes data
        with_new = snapshot(engine)
        command.downgrade(config, "-1")
        assert_kept(with_new, snapshot(engine), f"second downgrade of {revision}")

    assert set(sa_inspect(engine).get_table_names()) <= {"alembic_version"}
    upgrade(fresh_url)
    assert {"jobs", "query_classes", "metric_samples", "users"} <= set(
        sa_inspect(engine).get_table_names()
    )


@pytest.mark.parametrize(
    ("revision", "table", "column", "old"),
    [
        ("0012", "metric_samples", "warmup", False),
        ("0013", "query_classes", "catch_up", False),
        ("0014", "query_classes", "max_shed_fraction", 1.0),
    ],
)
def test_rows_stored_before_a_column_read_their_old_behaviour(
    fresh_url: str, engine: Engine, revision: str, table: str, column: str, old: object
) -> None:
    """0012 adds ``warmup`` to ``metric_samples``: a sample stored before it was not
    marked, so it reads as an ordinary period (false), not as a gap (null). 0013 adds
    ``catch_up`` to ``query_classes``: a class stored before it keeps shedding a start's
    stale backlog first (false). 0014 adds ``max_shed_fraction``: a class stored before
    it keeps shedding as its manager decides (1, no cap)."""
    config = alembic_config(fresh_url)
    command.upgrade(config, f"{int(revision) - 1:04d}")
    insert_rows(engine)
    command.upgrade(config, revision)
    [stored] = snapshot(engine)[table].values()
    assert stored[column] == old
    assert type(stored[column]) is type(old)


def _jobs_at(
    fresh_url: str, engine: Engine, revision: str, configs: list[dict[str, Any]]
) -> tuple[Table, list[int]]:
    """The database at ``revision`` with a job row per config; the jobs table and ids."""
    command.upgrade(alembic_config(fresh_url), revision)
    insert_rows(engine)
    jobs = MetaData()
    jobs.reflect(engine, only=["jobs"])
    table = jobs.tables["jobs"]
    with engine.begin() as conn:
        [first] = conn.execute(table.select().with_only_columns(table.c.id)).scalars()
        conn.execute(table.update().values(config=configs[0]))
        row = conn.execute(table.select()).mappings().one()
        for k, config in enumerate(configs[1:], start=1):
            conn.execute(
                table.insert().values(
                    {**row, "id": first + k, "idempotency_key": None, "config": config}
                )
            )
    return table, [first + k for k in range(len(configs))]


def _configs(engine: Engine, table: Table) -> dict[int, Any]:
    with engine.connect() as conn:
        rows = conn.execute(table.select().with_only_columns(table.c.id, table.c.config))
        return {job_id: config for job_id, config in rows}


def _snapshot_before_0017() -> tuple[dict[str, Any], Any, dict[str, Any]]:
    """The demo's scenario document, its snapshot now, and that snapshot as 0016 left it
    (its scenario's ``control`` whole)."""
    from tests.scenario.test_job_snapshots import demo_snapshot

    document, snapshot = demo_snapshot()
    now = snapshot.model_dump(mode="json")
    return (
        document,
        snapshot,
        {**now, "scenario": {**now["scenario"], "control": document["control"]}},
    )


def test_0016_stores_each_class_setting_of_a_job_snapshot_once(
    fresh_url: str, engine: Engine
) -> None:
    """A snapshot stored before 0016 (each class setting in ``classes``, the scenario's
    classes and ``control``) reads after it as the control plane built it then, runs
    the same scenario, and reads as it was after a downgrade; one stored without a
    ``control`` gets one from its classes' priority and target."""
    from spark_runner.contract.snapshot import JobSnapshot
    from spark_runner.scenario.snapshots import job_scenario

    document, snapshot, at_0016 = _snapshot_before_0017()
    control = at_0016["control"]["classes"]
    old = {
        **at_0016,
        "classes": [
            {**c, **{k: control[c["name"]][k] for k in ("priority", "delay_target_s")}}
            for c in at_0016["classes"]
        ],
        "scenario": document,
    }
    table, (job_id, bare_id) = _jobs_at(fresh_url, engine, "0015", [old, {**old, "control": None}])
    config = alembic_config(fresh_url)
    command.upgrade(config, "0016")
    upgraded = _configs(engine, table)
    assert upgraded[job_id] == at_0016
    assert job_scenario(JobSnapshot.model_validate(upgraded[job_id])) == document
    bare = JobSnapshot.model_validate(upgraded[bare_id])
    assert bare.control.targets() == snapshot.control.targets()
    command.downgrade(config, "0015")
    assert _configs(engine, table)[job_id] == old


def test_0017_stores_the_job_settings_of_a_job_snapshot_once(
    fresh_url: str, engine: Engine
) -> None:
    """A snapshot stored before 0017 (the policy, redistribution and elasticity in its
    scenario's ``control`` and in ``control``) reads after it as the snapshot the control
    plane builds now, and as it was after a downgrade. Where the two differed (a launch
    request's policy over the scenario's), the job runs ``control``'s, which it applied
    at its start before."""
    from spark_runner.contract.snapshot import JobSnapshot
    from spark_runner.scenario.snapshots import job_scenario

    document, _, at_0016 = _snapshot_before_0017()
    strict = {**at_0016, "control": {**at_0016["control"], "policy": "strict"}}
    table, (job_id, strict_id) = _jobs_at(fresh_url, engine, "0016", [at_0016, strict])
    config = alembic_config(fresh_url)
    command.upgrade(config, "0017")
    upgraded = _configs(engine, table)
    now = JobSnapshot.model_validate(upgraded[job_id])
    assert job_scenario(now) == document
    assert set(upgraded[job_id]["scenario"]["control"]) == {
        "period_s",
        "min_share",
        "hold_infeasible",
        "common_manager",
    }
    ran = job_scenario(JobSnapshot.model_validate(upgraded[strict_id]))
    assert ran["control"] == {**document["control"], "policy": "strict"}
    command.downgrade(config, "0016")
    downgraded = _configs(engine, table)
    assert downgraded[job_id] == at_0016
    assert downgraded[strict_id]["scenario"]["control"]["policy"] == "strict"
