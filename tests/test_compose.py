"""docker-compose.yml cannot be run here (no Docker engine); read it and check that it
agrees with the settings the code reads."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import yaml
from pydantic import AliasChoices

from backend.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
SERVICES = COMPOSE["services"]
APP_SERVICES = ("api", "worker", "dashboard", "spark-master", "spark-worker", "migrate")


def _env_names() -> set[str]:
    names: set[str] = set()
    for field in Settings.model_fields.values():
        alias = field.validation_alias
        assert isinstance(alias, AliasChoices)
        names.update(str(choice) for choice in alias.choices)
    return names


def test_every_part_is_there_with_a_health_check() -> None:
    expected = {"postgres", "redis", "api", "worker", "dashboard", "spark-master", "spark-worker"}
    assert expected <= set(SERVICES)
    for name in expected:
        assert "healthcheck" in SERVICES[name], name


def test_app_environment_is_what_settings_reads() -> None:
    known = _env_names()
    for name in APP_SERVICES:
        env = SERVICES[name]["environment"]
        unknown = set(env) - known
        assert not unknown, f"{name} sets variables no setting reads: {unknown}"
        settings = Settings.model_validate(env)
        db = urlsplit(settings.sqlalchemy_url)
        assert db.scheme == "postgresql+psycopg" and db.hostname == "postgres"
        assert urlsplit(settings.celery_broker_url).hostname == "redis"
        master = urlsplit(settings.spark_master)
        assert master.scheme == "spark" and master.hostname == "spark-master"
        assert urlsplit(settings.public_api_url).hostname == "api"


def test_ports_agree_with_settings() -> None:
    settings = Settings.model_validate(SERVICES["api"]["environment"])
    assert f"{settings.api_port}:{settings.api_port}" in SERVICES["api"]["ports"]
    assert str(settings.api_port) in " ".join(SERVICES["api"]["command"])
    assert f"{settings.dashboard_port}:{settings.dashboard_port}" in SERVICES["dashboard"]["ports"]
    assert urlsplit(settings.spark_master).port == 7077
    assert "7077:7077" in SERVICES["spark-master"]["ports"]
    postgres = SERVICES["postgres"]["environment"]
    db = urlsplit(settings.sqlalchemy_url)
    assert (db.username, db.password, db.path.lstrip("/")) == (
        postgres["POSTGRES_USER"],
        postgres["POSTGRES_PASSWORD"],
        postgres["POSTGRES_DB"],
    )


def test_shared_data_volume_for_job_logs() -> None:
    for name in ("api", "worker"):
        assert "headroom-data:/data" in SERVICES[name]["volumes"]


def test_worker_submits_jobs_to_the_compose_spark_master() -> None:
    settings = Settings.model_validate(SERVICES["worker"]["environment"])
    assert settings.launch_mode == "spark-submit"
    assert urlsplit(settings.spark_master).hostname == "spark-master"
    # Jobs may run on it: the master is listed as allowed.
    assert settings.spark_master in settings.allowed_spark_masters
    # spark-submit's client-mode driver runs in the worker, so it waits for the master.
    assert "spark-master" in SERVICES["worker"]["depends_on"]
