"""A tiny in-memory HTTP server that answers like the headroom API contract (/api/v1).

Why a fake: the real backend is being written at the same time as the dashboard, so
these tests pin the dashboard to the agreed contract instead. It is a real HTTP server
(``http.server`` on 127.0.0.1, port 0, in a thread), so the dashboard's httpx client,
timeouts and error parsing run for real. Once the backend lands, integration tests
should point the same dashboard functions at it.

Shapes follow the contract: 201 on create, 204 on delete, 202 on stop, FastAPI's 422
``{"detail": [{"loc", "msg", "type", "input"}]}``, 409 ``{"detail": "..."}``, 404
``{"detail": "..."}``. ``FakeApi.requests`` records every request for assertions;
``FakeApi.overrides`` forces a canned answer for a ``(method, path)`` (a ``str`` payload
is sent as text/plain); ``FakeApi.delay_s`` delays every answer.

Live tuning, history and export follow the contract as well: ``GET/PATCH
/jobs/{id}/config`` keep versioned configurations validated with the QoS core's own
rules (``spark_runner.job.control``, the code the real API validates with), so a bad
value gets the real message and location (``classes.ads.tau2``); ``FakeApi.ack``
plays the job acknowledging a version. ``/jobs/{id}/summary`` and ``/runs/compare``
summarise the stored samples with the real summariser (``backend.history.summary``);
``/jobs/{id}/metrics/export`` answers CSV (every sample unless ``limit``), and
``/managers`` answers with the backend's own catalogue. Class creation validates manager and
parameters with the core too (``manager_params.<name>`` locations). A class's continuous
queries (``/classes/{id}/queries``) are checked the way the real API checks them: composed
into a scenario with the backend's own ``compose`` and validated by the scenario loader,
each broken rule at its path in the spec (``operators[1].on_column``); reading a shared
query (``query:<name>``) is not modelled.

Authentication follows the contract too: every endpoint but ``GET /health`` and
``POST /auth/login`` needs ``Authorization: Bearer <token>`` (401 without a known
token), changes need operator or higher and ``/users`` needs admin (403 with the API's
sentence). Users ``admin``, ``ops`` and ``viewer`` exist with password ``PASSWORD``;
``FakeApi.token_for(username)`` mints a token without a login request.

Stored scenarios (``FakeApi.add_scenario``) are validated by the backend's own
``backend.scenarios.service.validate`` and listed by ``GET /scenarios`` in the backend's
``ScenarioSummary`` shape. ``POST /jobs`` checks its body with the backend's
``JobCreate`` (422 items worded by the backend's own handler); with a ``scenario_id`` the
job runs that scenario's classes (404 for an unknown one, a manager override checked by
the core), and every job it starts carries the ``launch`` block of ``JobRead`` (the
backend's ``JobLaunch``).
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from pydantic import ValidationError

from backend.errors import _readable as readable_422
from backend.history.summary import summarize
from backend.jobs.schemas import EngineRead, JobCreate, JobLaunch
from backend.managers.service import list_managers
from backend.queries.compose import ClassPart, QueryPart, compose
from backend.scenarios.schemas import EXAMPLE, ScenarioSummary
from backend.scenarios.service import TRACE_BASE
from backend.scenarios.service import validate as validate_scenario
from spark_runner.core.errors import ParameterError
from spark_runner.job.control import ClassControl, LiveConfig
from spark_runner.job.samples import MetricSample
from spark_runner.scenario.errors import ScenarioError
from spark_runner.scenario.loader import scenario_from_dict

PREFIX = "/api/v1"
PASSWORD = "correct horse battery"
ROLES = ("viewer", "operator", "admin")
TAU_DEFAULTS = {"tau0": 0.2, "tau1": 0.4, "tau2": 0.8, "tau3": 0.95}
MANAGER_DEFAULTS = {
    "manager": "aloma",
    "manager_params": {},
    "reserve_fraction": 0.05,
    "max_lend_fraction": 1.0,
}
NOW = "2025-11-21T06:40:00+00:00"
APPLIED = "2025-11-21T06:40:05+00:00"
SAMPLE_FIELDS = tuple(MetricSample.model_fields)


@dataclass
class Recorded:
    method: str
    path: str
    query: dict[str, list[str]]
    body: Any
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class FakeApi:
    url: str = ""
    classes: dict[int, dict[str, Any]] = field(default_factory=dict)
    jobs: dict[int, dict[str, Any]] = field(default_factory=dict)
    queries: dict[int, dict[str, Any]] = field(default_factory=dict)  # by id
    scenarios: dict[int, dict[str, Any]] = field(default_factory=dict)  # by id
    samples: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    configs: dict[int, list[dict[str, Any]]] = field(default_factory=dict)  # versions per job
    logs: dict[int, list[str]] = field(default_factory=dict)
    users: dict[str, dict[str, Any]] = field(default_factory=dict)  # by username
    tokens: dict[str, str] = field(default_factory=dict)  # token -> username
    idempotent: dict[str, int] = field(default_factory=dict)  # key -> job id
    job_options: dict[int, dict[str, Any]] = field(default_factory=dict)  # POST /jobs extras
    requests: list[Recorded] = field(default_factory=list)
    overrides: dict[tuple[str, str], tuple[int, Any]] = field(default_factory=dict)
    delay_s: float = 0.0
    _next_id: int = 1
    lock: threading.Lock = field(default_factory=threading.Lock)

    # -- helpers for tests -------------------------------------------------------------

    def __post_init__(self) -> None:
        for username, role in (("admin", "admin"), ("ops", "operator"), ("viewer", "viewer")):
            self.add_user(username, role)

    def next_id(self) -> int:
        self._next_id += 1
        return self._next_id - 1

    def add_user(self, username: str, role: str, password: str = PASSWORD, active: bool = True):
        user = {
            "id": len(self.users) + 1,
            "username": username,
            "role": role,
            "active": active,
            "created_at": NOW,
            "password": password,
        }
        self.users[username] = user
        return user

    def token_for(self, username: str) -> str:
        token = f"token-{username}-{len(self.tokens)}"
        self.tokens[token] = username
        return token

    def add_class(self, name: str, priority: float, delay_target_s: float, **taus: float):
        cls = {
            "id": self.next_id(),
            "name": name,
            "priority": priority,
            "delay_target_s": delay_target_s,
            **TAU_DEFAULTS,
            **MANAGER_DEFAULTS,
            **taus,
            "created_at": NOW,
            "updated_at": NOW,
        }
        self.classes[cls["id"]] = cls
        return cls

    def add_scenario(self, name: str, yaml_text: str | None = None):
        """Store a scenario the way the API does (validated by the backend's own rules);
        without ``yaml_text`` the API's example document, named ``name``."""
        text = yaml_text or EXAMPLE.replace("name: two-classes", f"name: {name}", 1)
        document = validate_scenario(text)
        scenario = {
            "id": self.next_id(),
            "name": str(document["name"]),
            "description": str(document.get("description", "")),
            "document": document,
            "created_by": "ops",
            "created_at": NOW,
            "updated_at": NOW,
        }
        self.scenarios[scenario["id"]] = scenario
        return scenario

    def add_job(
        self,
        class_names: list[str],
        status: str = "running",
        failure_reason: str | None = None,
        *,
        classes: list[dict[str, Any]] | None = None,
        launch: dict[str, Any] | None = None,
    ):
        """A job of registered classes (``class_names``), or of ``classes`` given whole
        (name, priority, delay target and any class control field: a scenario's); with
        ``launch`` it carries that ``launch`` block."""
        by_name = {c["name"]: c for c in self.classes.values()}
        by_name.update({c["name"]: c for c in classes or []})
        if classes is not None:
            class_names = [c["name"] for c in classes]
        job = {
            "id": self.next_id(),
            "status": status,
            "spark_master": "local[*]",
            "restart_of": None,
            "created_by": "ops",
            "pid": None if status == "pending" else 4242,
            "exit_code": 1 if status == "failed" else None,
            "created_at": NOW,
            "started_at": None if status == "pending" else NOW,
            "stop_requested_at": None,
            "stopped_at": NOW if status in ("stopped", "failed") else None,
            "failure_reason": failure_reason,
            "control_period_s": 1.0,
            "classes": [
                {
                    "name": n,
                    "priority": by_name[n]["priority"],
                    "delay_target_s": by_name[n]["delay_target_s"],
                    # JobClass: a scenario's classes were launched with these.
                    **({"rate_per_s": 0.0, "manager": by_name[n]["manager"]} if classes else {}),
                }
                for n in class_names
            ],
        }
        if launch is not None:
            job["launch"] = launch
        self.jobs[job["id"]] = job
        self.samples[job["id"]] = []
        self.logs[job["id"]] = []
        config = LiveConfig(
            classes={
                n: ClassControl(
                    **{
                        k: by_name[n][k]
                        for k in ("priority", "delay_target_s", *TAU_DEFAULTS, *MANAGER_DEFAULTS)
                        if k in by_name[n]
                    }
                )
                for n in class_names
            }
        )
        self.configs[job["id"]] = [
            {
                "version": 0,
                "config": config.model_dump(mode="json"),
                "changes": [],
                "created_by": job["created_by"],
                "created_at": NOW,
                "applied_at": None,
            }
        ]
        return job

    def ack(self, job_id: int, version: int) -> None:
        """Play the job: it applied ``version`` (and every earlier one)."""
        for entry in self.configs[job_id]:
            if entry["version"] <= version and entry["applied_at"] is None:
                entry["applied_at"] = APPLIED

    def describe_config(self, job_id: int) -> dict[str, Any]:
        versions = self.configs[job_id]
        applied = [v["version"] for v in versions if v["applied_at"] is not None]
        return {
            "job_id": job_id,
            "latest_version": versions[-1]["version"],
            "applied_version": max(applied) if applied else None,
            "pending_versions": [v["version"] for v in versions if v["applied_at"] is None],
            "config": versions[-1]["config"],
            "versions": [{k: v for k, v in entry.items() if k != "config"} for entry in versions],
        }

    def add_sample(self, job_id: int, class_name: str, t: float, **values: Any):
        """A sample with the first nine fields (what the skeleton job reports); pass
        any other field of the contract to fill it."""
        seq = sum(1 for s in self.samples[job_id] if s["class_name"] == class_name)
        sample = {
            "class_name": class_name,
            "seq": seq,
            "t": t,
            "period_s": 1.0,
            "arrived_count": 200,
            "output_count": 98,
            "arrival_rate": 200.0,
            "response_time_mean_s": 0.41,
            "response_time_max_s": 0.93,
        }
        sample.update(values)
        self.samples[job_id].append(sample)
        self.samples[job_id].sort(key=lambda s: s["t"])
        return sample

    def requests_to(self, method: str, path: str) -> list[Recorded]:
        return [r for r in self.requests if r.method == method and r.path == PREFIX + path]

    # -- the contract ------------------------------------------------------------------

    def handle(
        self,
        method: str,
        path: str,
        query: dict[str, list[str]],
        body: Any,
        headers: dict[str, str] | None = None,
    ):
        headers = headers or {}
        override = self.overrides.get((method, path.removeprefix(PREFIX)))
        if override is not None:
            return override
        parts = path.removeprefix(PREFIX).strip("/").split("/")
        match method, parts:
            case "GET", ["health"]:
                return 200, {"status": "ok", "database": "ok"}
            case "POST", ["auth", "login"]:
                return self._login(body)
        token = headers.get("authorization", "").removeprefix("Bearer ")
        username = self.tokens.get(token)
        user = self.users.get(username or "")
        if user is None or not user["active"]:
            return 401, {"detail": "the token is unknown, expired or revoked"}
        needed = _needed_role(method, parts)
        if ROLES.index(user["role"]) < ROLES.index(needed):
            return 403, {
                "detail": f"role={user['role']!r} may not do this: it needs {needed} or higher"
            }
        match method, parts:
            case "POST", ["auth", "logout"]:
                self.tokens.pop(token, None)
                return 204, None
            case "GET", ["auth", "me"]:
                return 200, _public(user)
            case "GET", ["scenarios"]:
                return 200, [
                    ScenarioSummary.model_validate(self.scenarios[i]).model_dump(mode="json")
                    for i in sorted(self.scenarios)
                ]
            case "GET", ["managers"]:
                return 200, [m.model_dump(mode="json") for m in list_managers()]
            case "GET", ["users"]:
                return 200, [_public(u) for u in sorted(self.users.values(), key=lambda u: u["id"])]
            case "POST", ["users"]:
                return self._create_user(body)
            case "PATCH", ["users", user_id] if user_id.isdigit():
                target = next((u for u in self.users.values() if u["id"] == int(user_id)), None)
                if target is None:
                    return 404, {"detail": f"user {user_id} does not exist"}
                target.update({k: v for k, v in body.items() if k in ("role", "active")})
                return 200, _public(target)
            case "POST", ["jobs"]:
                return self._start_job(body, headers.get("idempotency-key"), user["username"])
            case "POST", ["jobs", job_id, "restart"] if job_id.isdigit():
                return self._restart_job(int(job_id), user["username"])
            case "GET", ["jobs", job_id, "log"] if job_id.isdigit():
                if int(job_id) not in self.jobs:
                    return 404, {"detail": f"job {job_id} does not exist"}
                lines = int(query.get("lines", ["200"])[0])
                return 200, {"job_id": int(job_id), "lines": self.logs[int(job_id)][-lines:]}
            case "GET", ["classes"]:
                return 200, sorted(self.classes.values(), key=lambda c: c["id"])
            case "POST", ["classes"]:
                return self._create_class(body)
            case "GET", ["classes", class_id] if class_id.isdigit():
                cls = self.classes.get(int(class_id))
                if cls is None:
                    return 404, {"detail": f"query class {class_id} does not exist"}
                return 200, cls
            case "PATCH", ["classes", class_id] if class_id.isdigit():
                return self._update_class(int(class_id), body)
            case _, ["classes", class_id, "queries", *rest] if class_id.isdigit():
                return self._queries(method, int(class_id), rest, body)
            case "DELETE", ["classes", class_id] if class_id.isdigit():
                if self.classes.pop(int(class_id), None) is None:
                    return 404, {"detail": f"Class {class_id} does not exist."}
                return 204, None
            case "GET", ["jobs"]:
                return 200, sorted(self.jobs.values(), key=lambda j: j["id"])
            case "GET", ["jobs", job_id] if job_id.isdigit():
                job = self.jobs.get(int(job_id))
                return (200, job) if job else (404, {"detail": f"Job {job_id} does not exist."})
            case "POST", ["jobs", job_id, "stop"] if job_id.isdigit():
                job = self.jobs.get(int(job_id))
                if job is None:
                    return 404, {"detail": f"Job {job_id} does not exist."}
                job["status"] = "stopping"
                return 202, job
            case "GET", ["jobs", job_id, "metrics"] if job_id.isdigit():
                if int(job_id) not in self.jobs:
                    return 404, {"detail": f"Job {job_id} does not exist."}
                samples, truncated = self.window(int(job_id), query)
                return 200, {"job_id": int(job_id), "samples": samples, "truncated": truncated}
            case "GET", ["jobs", job_id, "metrics", "export"] if job_id.isdigit():
                if int(job_id) not in self.jobs:
                    return 404, {"detail": f"job {job_id} does not exist"}
                rows, truncated = self.window(int(job_id), {"limit": ["1000000000"], **query})
                return 200, CsvBody(_csv(rows), f"job-{job_id}-metrics.csv", truncated)
            case "GET", ["jobs", job_id, "config"] if job_id.isdigit():
                if int(job_id) not in self.jobs:
                    return 404, {"detail": f"job {job_id} does not exist"}
                return 200, self.describe_config(int(job_id))
            case "PATCH", ["jobs", job_id, "config"] if job_id.isdigit():
                return self._change_config(int(job_id), body, user["username"])
            case "GET", ["jobs", job_id, "summary"] if job_id.isdigit():
                if int(job_id) not in self.jobs:
                    return 404, {"detail": f"job {job_id} does not exist"}
                return 200, self.summary(int(job_id), query)
            case "GET", ["runs", "compare"]:
                a, b = int(query["a"][0]), int(query["b"][0])
                for job_id in (a, b):
                    if job_id not in self.jobs:
                        return 404, {"detail": f"job {job_id} does not exist"}
                within = {k: v for k, v in query.items() if k not in ("a", "b")}
                return 200, {"a": self.summary(a, within), "b": self.summary(b, within)}
        return 404, {"detail": "Not Found"}

    def window(self, job_id: int, query: dict[str, list[str]]) -> tuple[list[dict[str, Any]], bool]:
        """The metrics query of the contract (``step_s`` is accepted, not applied): at
        most ``limit`` samples, the newest with ``last_s``, else the oldest; and whether
        any were left out."""
        samples = self.series(job_id, {**query, "limit": ["1000000000"]})
        limit = int(query.get("limit", ["10000"])[0])
        kept = samples[-limit:] if "last_s" in query else samples[:limit]
        return kept, len(samples) > limit

    def series(self, job_id: int, query: dict[str, list[str]]) -> list[dict[str, Any]]:
        """The samples of the window, the oldest ``limit`` of them (``step_s`` is
        accepted, not applied)."""
        samples = self.samples[job_id]
        if "last_s" in query and samples:
            newest = max(s["t"] for s in samples)
            samples = [s for s in samples if s["t"] > newest - float(query["last_s"][0])]
        if "since" in query:
            samples = [s for s in samples if s["t"] > float(query["since"][0])]
        if "until" in query:
            samples = [s for s in samples if s["t"] <= float(query["until"][0])]
        if "class_name" in query:
            samples = [s for s in samples if s["class_name"] == query["class_name"][0]]
        return samples[: int(query.get("limit", ["10000"])[0])]

    def summary(self, job_id: int, query: dict[str, list[str]]) -> dict[str, Any]:
        """A run's summary over ``since``/``until`` or ``since_s``/``until_s`` (seconds
        after the run's first sample, both inclusive)."""
        job = self.jobs[job_id]
        first_t = self.samples[job_id][0]["t"] if self.samples[job_id] else None
        rows = self.series(job_id, {**query, "limit": ["1000000"]})
        if first_t is not None and "since_s" in query:
            rows = [s for s in rows if s["t"] - first_t >= float(query["since_s"][0])]
        if first_t is not None and "until_s" in query:
            rows = [s for s in rows if s["t"] - first_t <= float(query["until_s"][0])]
        models = [MetricSample(**s) for s in rows]
        targets = {c["name"]: c["delay_target_s"] for c in job["classes"]}
        return {
            "job": job,
            "first_sample_t": first_t,
            "classes": [c.model_dump() for c in summarize(models, targets)],
        }

    def _change_config(self, job_id: int, body: Any, username: str):
        job = self.jobs.get(job_id)
        if job is None:
            return 404, {"detail": f"job {job_id} does not exist"}
        if job["status"] in ("stopped", "failed"):
            return 409, {
                "detail": f"status={job['status']!r}: a stopped or failed job takes no new "
                "configuration"
            }
        versions = self.configs[job_id]
        current = LiveConfig.model_validate(versions[-1]["config"])
        changes = dict(body)
        if "classes" in changes:
            changes["classes"] = {n: c for n, c in changes["classes"].items() if c}
        try:
            new = current.merged(changes, current.version + 1)
            new.validate_rules()
        except ParameterError as error:
            return 422, {"detail": [_error(error.field, str(error), "value_error", error.value)]}
        diff = list(_diff(current.model_dump(mode="json"), new.model_dump(mode="json")))
        if not diff:
            return 409, {
                "detail": "the change leaves the configuration as it is: no new version stored"
            }
        versions.append(
            {
                "version": new.version,
                "config": new.model_dump(mode="json"),
                "changes": diff,
                "created_by": username,
                "created_at": NOW,
                "applied_at": None,
            }
        )
        return 200, self.describe_config(job_id)

    def _login(self, body: Any):
        user = self.users.get(str(body.get("username")))
        if user is None or not user["active"] or user["password"] != body.get("password"):
            return 401, {"detail": "username or password is wrong"}
        return 200, {
            "access_token": self.token_for(user["username"]),
            "token_type": "bearer",
            "expires_at": "2025-11-21T18:40:00+00:00",
            "username": user["username"],
            "role": user["role"],
        }

    def _create_user(self, body: Any):
        if len(body.get("password") or "") < 8:
            return 422, {
                "detail": [
                    _error(
                        "password",
                        "password='***' is invalid: String should have at least 8 characters",
                        "string_too_short",
                        "***",
                    )
                ]
            }
        if body["username"] in self.users:
            return 409, {
                "detail": f"username={body['username']!r} is taken: usernames must be unique"
            }
        user = self.add_user(body["username"], body.get("role", "viewer"), body["password"])
        return 201, _public(user)

    def _restart_job(self, job_id: int, username: str):
        old = self.jobs.get(job_id)
        if old is None:
            return 404, {"detail": f"job {job_id} does not exist"}
        if old["status"] not in ("stopped", "failed"):
            return 409, {
                "detail": f"status={old['status']!r}: only a stopped or failed job can be "
                "restarted; stop it first"
            }
        job = self.add_job(
            [c["name"] for c in old["classes"]],
            status="pending",
            # A scenario's classes are not registered classes: take them from the old run.
            classes=old["classes"] if old.get("launch", {}).get("scenario_id") else None,
            launch=old.get("launch"),
        )
        job.update(restart_of=job_id, created_by=username)
        return 201, job

    def _create_class(self, body: Any):
        errors = []
        for key in ("name", "priority", "delay_target_s"):
            if body.get(key) is None:
                errors.append(_error(key, "Field required", "missing", body))
        if errors:
            return 422, {"detail": errors}
        if body["delay_target_s"] <= 0:
            errors.append(
                _error(
                    "delay_target_s",
                    f"delay_target_s={body['delay_target_s']} is invalid: must be > 0",
                    "value_error",
                    body["delay_target_s"],
                )
            )
        taus = {k: body.get(k, v) for k, v in TAU_DEFAULTS.items()}
        names = list(taus)
        for lower, upper in itertools.pairwise(names):
            if taus[upper] <= taus[lower]:
                errors.append(
                    _error(
                        upper,
                        f"{upper}={taus[upper]} is invalid: must be > {lower}={taus[lower]} "
                        "(thresholds must satisfy 0 < tau0 < tau1 < tau2 < tau3 <= 1)",
                        "value_error",
                        taus[upper],
                    )
                )
        if not errors:
            controls = {
                k: body[k]
                for k in ("priority", "delay_target_s", *TAU_DEFAULTS, *MANAGER_DEFAULTS)
                if k in body
            }
            try:
                ClassControl(**controls).spec(body["name"])
            except ParameterError as error:
                errors.append(_error(error.field, str(error), "value_error", error.value))
        if errors:
            return 422, {"detail": errors}
        if any(c["name"] == body["name"] for c in self.classes.values()):
            return 409, {"detail": f"A class named {body['name']!r} already exists."}
        cls = self.add_class(
            body["name"],
            body["priority"],
            body["delay_target_s"],
            **{k: v for k, v in body.items() if k in TAU_DEFAULTS or k in MANAGER_DEFAULTS},
        )
        return 201, cls

    def add_query(self, class_id: int, name: str, source: str, operators: list[Any], **extra):
        query = {
            "id": self.next_id(),
            "class_id": class_id,
            "name": name,
            "source": source,
            "operators": operators,
            "shared": bool(extra.get("shared", False)),
            "created_at": NOW,
            "updated_at": NOW,
        }
        self.queries[query["id"]] = query
        return query

    def _queries(self, method: str, class_id: int, rest: list[str], body: Any):
        cls = self.classes.get(class_id)
        if cls is None:
            return 404, {"detail": f"query class {class_id} does not exist"}
        own = sorted(
            (q for q in self.queries.values() if q["class_id"] == class_id), key=lambda q: q["id"]
        )
        match method, rest:
            case "GET", []:
                return 200, own
            case "POST", []:
                return self._save_query(cls, own, body, None)
        query_id = int(rest[0]) if rest and rest[0].isdigit() else -1
        query = next((q for q in own if q["id"] == query_id), None)
        if query is None or len(rest) != 1:
            return 404, {
                "detail": f"query {rest[0] if rest else ''} of class {class_id} does not exist"
            }
        match method:
            case "GET":
                return 200, query
            case "PUT":
                return self._save_query(cls, own, body, query)
            case "DELETE":
                del self.queries[query_id]
                return 204, None
        return 405, {"detail": "Method Not Allowed"}

    def _save_query(self, cls, own, body: Any, query: dict[str, Any] | None):
        if not isinstance(body, dict):
            return 422, {
                "detail": [_error("body", "Input should be a valid dictionary", "x", body)]
            }
        unknown = set(body) - {"name", "source", "operators", "shared"}
        errors = [
            _error(
                key, f"{key}={body[key]!r} is invalid: Extra inputs are not permitted", "x", None
            )
            for key in sorted(unknown)
        ] + [
            _error(key, f"{key}=None is invalid: Field required", "missing", None)
            for key in ("name", "source", "operators")
            if key not in body
        ]
        if errors:
            return 422, {"detail": errors}
        if any(q["name"] == body["name"] and q is not query for q in own):
            return 409, {"detail": f"name={body['name']!r} is taken in class {cls['name']!r}"}
        part = ClassPart(
            cls["name"],
            cls["priority"],
            cls["delay_target_s"],
            "aloma",
            {},
            (cls["tau0"], cls["tau1"], cls["tau2"], cls["tau3"]),
            0.05,
            1.0,
        )
        document = compose(
            [(part, [QueryPart(body["name"], body["source"], list(body["operators"]))])],
            [],
            rate_per_s=1.0,
            period_s=1.0,
            duration_s=10.0,
        )
        try:
            scenario_from_dict(document)
        except ScenarioError as error:
            prefix = "classes[0].queries[0]."
            items = []
            for issue in error.issues:
                path = issue.path.removeprefix(prefix)
                items.append(_error(path, f"{path}: {issue.message}", "value_error", None))
            return 422, {"detail": items}
        if query is None:
            return 201, self.add_query(cls["id"], **body)
        query.update(body, updated_at=APPLIED)
        return 200, query

    def _update_class(self, class_id: int, body: Any):
        cls = self.classes.get(class_id)
        if cls is None:
            return 404, {"detail": f"query class {class_id} does not exist"}
        merged = {**cls, **body}
        controls = {
            k: merged[k] for k in ("priority", "delay_target_s", *TAU_DEFAULTS, *MANAGER_DEFAULTS)
        }
        try:
            ClassControl(**controls).spec(merged["name"])
        except ParameterError as error:
            return 422, {"detail": [_error(error.field, str(error), "value_error", error.value)]}
        cls.update(body)
        cls["updated_at"] = APPLIED
        return 200, cls

    def _start_job(self, body: Any, idempotency_key: str | None = None, username: str = "ops"):
        if idempotency_key in self.idempotent:
            return 200, self.jobs[self.idempotent[idempotency_key]]
        from_scenario = body.get("scenario_id") is not None
        class_ids = body.get("class_ids")
        if class_ids is None:
            class_ids = list(self.classes)
        unknown = [i for i in class_ids if i not in self.classes]
        if unknown and not from_scenario:  # a scenario's job ignores class_ids
            return 422, {
                "detail": [
                    _error("class_ids", f"Unknown class ids: {unknown}", "value_error", unknown)
                ]
            }
        duration_s = body.get("duration_s")
        if duration_s is not None and duration_s <= 0:
            return 422, {
                "detail": [
                    _error(
                        "duration_s",
                        f"duration_s={duration_s} is invalid: must be > 0",
                        "value_error",
                        duration_s,
                    )
                ]
            }
        try:
            data = JobCreate.model_validate(body)
        except ValidationError as error:
            items = [{**e, "loc": ("body", *e["loc"])} for e in error.errors()]
            return 422, {"detail": readable_422(items)}
        if data.scenario_id is not None:
            stored = self.scenarios.get(data.scenario_id)
            if stored is None:
                return 404, {"detail": f"scenario {data.scenario_id} does not exist"}
            try:
                job = self._add_scenario_job(stored, data)
            except ParameterError as error:
                return 422, {
                    "detail": [_error(error.field, str(error), "value_error", error.value)]
                }
        else:
            job = self.add_job(
                [self.classes[i]["name"] for i in class_ids],
                status="pending",
                launch=_launch(data, rate_per_s=data.rate_per_s),
            )
        job["created_by"] = username
        self.job_options[job["id"]] = {
            k: v for k, v in body.items() if k not in ("class_ids", "duration_s")
        }
        if idempotency_key:
            self.idempotent[idempotency_key] = job["id"]
        return 201, job

    def _add_scenario_job(self, stored: dict[str, Any], data: JobCreate) -> dict[str, Any]:
        """A pending job of a stored scenario, as ``backend.jobs.service`` plans it: the
        scenario's classes and control settings, what the request sets overriding them."""
        scenario = scenario_from_dict(stored["document"], base_dir=TRACE_BASE)
        classes = []
        for c in scenario.classes:
            manager = data.manager or c.manager.kind
            classes.append(
                {
                    "name": c.name,
                    "priority": c.priority,
                    "delay_target_s": c.delay_target_s,
                    "tau0": c.thresholds.tau0,
                    "tau1": c.thresholds.tau1,
                    "tau2": c.thresholds.tau2,
                    "tau3": c.thresholds.tau3,
                    "manager": manager,
                    "manager_params": dict(c.manager.params) if manager == c.manager.kind else {},
                    "reserve_fraction": c.reserve_fraction,
                    "max_lend_fraction": c.max_lend_fraction,
                }
            )
        controls = {
            c["name"]: ClassControl(**{k: v for k, v in c.items() if k != "name"}) for c in classes
        }
        LiveConfig(classes=controls).validate_rules()  # e.g. classes.gold.manager
        control = data.scenario_control(scenario.control)  # the API's own rule
        launch = _launch(
            data,
            scenario_id=stored["id"],
            scenario_name=stored["name"],
            duration_s=data.duration_s or scenario.duration_s,
            policy=control["policy"],
            redistribution_every=control["redistribution_every"],
            dilos=control["redistribution_enabled"],
        )
        return self.add_job([], status="pending", classes=classes, launch=launch)


def _launch(
    data: JobCreate,
    *,
    rate_per_s: float | None = None,
    scenario_id: int | None = None,
    scenario_name: str | None = None,
    duration_s: float | None = None,
    policy: str | None = None,
    redistribution_every: int | None = None,
    dilos: bool | None = None,
) -> dict[str, Any]:
    """The ``launch`` block of ``JobRead`` for an accepted request (what the request does
    not set: the scenario's, else the request's defaults)."""
    return JobLaunch(
        scenario_id=scenario_id,
        scenario_name=scenario_name,
        rate_per_s=rate_per_s,
        duration_s=duration_s if duration_s is not None else data.duration_s,
        manager=data.manager,
        mode="dilos" if (data.redistribution_enabled if dilos is None else dilos) else "per_class",
        recommend_only=data.recommend_only,
        policy=policy or data.policy,
        redistribution_every=redistribution_every or data.redistribution_every,
        engine=EngineRead(source="generator"),
    ).model_dump(mode="json")


@dataclass(frozen=True)
class CsvBody:
    """A text/csv answer sent as an attachment."""

    text: str
    filename: str
    truncated: bool = False


def _csv(samples: list[dict[str, Any]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(SAMPLE_FIELDS)
    for sample in samples:
        writer.writerow(["" if sample.get(k) is None else sample.get(k) for k in SAMPLE_FIELDS])
    return buffer.getvalue()


def _diff(old: Any, new: Any, path: str = ""):
    if isinstance(old, dict) and isinstance(new, dict):
        for key in sorted(set(old) | set(new)):
            if key != "version":
                yield from _diff(old.get(key), new.get(key), f"{path}.{key}" if path else key)
    elif old != new:
        yield {"path": path, "old": old, "new": new}


def _needed_role(method: str, parts: list[str]) -> str:
    if parts[:1] == ["users"]:
        return "admin"
    if method == "GET" or parts[:1] == ["auth"]:
        return "viewer"
    return "operator"


def _public(user: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in user.items() if k != "password"}


def _error(field_name: str, msg: str, kind: str, value: Any) -> dict[str, Any]:
    return {"loc": ["body", field_name], "msg": msg, "type": kind, "input": value}


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def _serve(self, method: str) -> None:
        parts = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        body = json.loads(raw) if raw else None
        query = parse_qs(parts.query)
        fake = self.server.fake
        if fake.delay_s:
            time.sleep(fake.delay_s)  # to exercise the client's timeout
        headers = {key.lower(): value for key, value in self.headers.items()}
        with fake.lock:
            fake.requests.append(Recorded(method, parts.path, query, body, headers))
            status, payload = fake.handle(method, parts.path, query, body, headers)
        self.send_response(status)
        if isinstance(payload, CsvBody):
            data = payload.text.encode()
            self.send_header("Content-Type", "text/csv; charset=utf-8")
            self.send_header("Content-Disposition", f'attachment; filename="{payload.filename}"')
            self.send_header("X-Headroom-Truncated", "true" if payload.truncated else "false")
        elif isinstance(payload, str):
            data = payload.encode()
            self.send_header("Content-Type", "text/plain")
        elif payload is None:
            data = b""
        else:
            data = json.dumps(payload).encode()
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self._serve("GET")

    def do_POST(self) -> None:
        self._serve("POST")

    def do_DELETE(self) -> None:
        self._serve("DELETE")

    def do_PATCH(self) -> None:
        self._serve("PATCH")

    def do_PUT(self) -> None:
        self._serve("PUT")

    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    fake: FakeApi


class RunningFakeApi:
    """Start/stop a ``FakeApi`` on an ephemeral port."""

    def __init__(self) -> None:
        self.server = _Server(("127.0.0.1", 0), _Handler)
        self.server.fake = FakeApi(url=f"http://127.0.0.1:{self.server.server_address[1]}")
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    def __enter__(self) -> FakeApi:
        self.thread.start()
        return self.server.fake

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)
