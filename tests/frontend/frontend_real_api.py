"""The real headroom API for the dashboard tests, with helpers that set up its data.

One API process (``backend.stack.Stack.start_api``: uvicorn of ``backend.main``, as
``headroom up`` runs it) serves a SQLite database built by the migrations in a temporary
data directory, for the whole test session. The admin is made with the CLI and the
operator ``ops`` and the viewer ``viewer`` by the admin through the API, the way
``tests/browser/harness.py`` makes them. The dashboard under test talks to it through
a ``RecordingProxy`` (``url``), so a test can check what the dashboard sent.

Test data goes in through the API as an admin (classes, queries, scenarios, jobs, users)
and is never recorded. What only a job process or the job watcher writes is written the
way they write it: samples and acknowledgements through the API with the job's own
ingest token; a job's status, log file and failure reason in the database, as the
watcher records them (``tests/browser/harness.py`` does the same). Jobs made here are
dated ``CREATED`` so samples can carry fixed instants after it.

``reset()`` (before every test) empties every table but the users and their tokens,
which go back to the state of the session's start: a test sees an empty product with
its three users signed in, for a few milliseconds instead of a new process.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, cast

import httpx
from sqlalchemy import Engine, Table, delete, insert, select, update
from sqlalchemy.orm import Session

from backend.db import Base, make_engine, make_session_factory, session_scope
from backend.jobs.models import Job
from backend.migrate import upgrade
from backend.models import ApiToken, User
from backend.settings import Settings
from backend.stack import Stack
from backend.users import security
from tests.browser.harness import create_admin, free_port
from tests.frontend.recording_proxy import Recorded, RecordingProxy

PASSWORD = "dashboard-test-pw-7"  # every account made here has it
BASE_USERS = (("admin", "admin"), ("ops", "operator"), ("viewer", "viewer"))
CREATED = datetime(2025, 11, 21, 4, 0, tzinfo=UTC)
"""When every job made by ``add_job`` was created (samples are dated after it)."""
STARTED = CREATED + timedelta(seconds=5)
USER_TABLES: tuple[Table, ...] = (cast(Table, User.__table__), cast(Table, ApiToken.__table__))
TERMINAL = ("stopped", "failed")


@dataclass
class RealApi:
    """A running API, its recording proxy, and helpers to put data into it."""

    stack: Stack
    proxy: RecordingProxy
    engine: Engine
    admin: httpx.Client
    tokens: dict[str, str] = field(default_factory=dict)  # base user -> its login token
    ingest_tokens: dict[int, str] = field(default_factory=dict)  # job id -> its token
    _seq: dict[tuple[int, str], int] = field(default_factory=dict)  # samples per class
    _snapshot: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    @property
    def settings(self) -> Settings:
        return self.stack.settings

    @property
    def url(self) -> str:
        """Where the dashboard under test reaches the API (through the proxy)."""
        return str(self.proxy.url)

    @property
    def api_url(self) -> str:
        return self.settings.public_api_url

    # -- what the dashboard sent -------------------------------------------------------

    @property
    def requests(self) -> list[Recorded]:
        return list(self.proxy.requests)

    def requests_to(self, method: str, path: str) -> list[Recorded]:
        return list(self.proxy.requests_to(method, path))

    # -- users and tokens --------------------------------------------------------------

    def token_for(self, username: str) -> str:
        """A valid token of ``username``: the session's for a base user, else a login."""
        if username in self.tokens:
            return self.tokens[username]
        return self.login(username)

    def login(self, username: str, password: str = PASSWORD) -> str:
        answer = httpx.post(
            f"{self.api_url}/api/v1/auth/login",
            json={"username": username, "password": password},
            timeout=10,
        )
        answer.raise_for_status()
        return str(answer.json()["access_token"])

    def token_valid(self, token: str) -> bool:
        answer = httpx.get(
            f"{self.api_url}/api/v1/auth/me",
            headers={"Authorization": f"Bearer {token}"},
            timeout=10,
        )
        return answer.status_code == 200

    def revoke_all_tokens(self) -> None:
        """Every login token ends (as when they all expire), but the one this helper
        sets data up with."""
        setup = security.token_digest(str(self.admin.headers["Authorization"]).split()[-1])
        with self._session() as session:
            session.execute(delete(ApiToken).where(ApiToken.digest != setup))

    def add_user(self, username: str, role: str, password: str = PASSWORD) -> Any:
        return self._admin(
            "POST", "/users", {"username": username, "password": password, "role": role}
        )

    def update_user(self, username: str, **changes: Any) -> Any:
        return self._admin("PATCH", f"/users/{self.users[username]['id']}", changes)

    @property
    def users(self) -> dict[str, dict[str, Any]]:
        return {u["username"]: u for u in self._admin("GET", "/users")}

    # -- classes, queries, scenarios ---------------------------------------------------

    def add_class(self, name: str, priority: float, delay_target_s: float, **fields: Any) -> Any:
        body = {"name": name, "priority": priority, "delay_target_s": delay_target_s, **fields}
        return self._admin("POST", "/classes", body)

    def delete_class(self, class_id: int) -> None:
        self._admin("DELETE", f"/classes/{class_id}")

    @property
    def classes(self) -> dict[int, dict[str, Any]]:
        return {c["id"]: c for c in self._admin("GET", "/classes")}

    def add_query(
        self, class_id: int, name: str, source: str, operators: list[Any], **extra: Any
    ) -> Any:
        body = {"name": name, "source": source, "operators": operators, **extra}
        return self._admin("POST", f"/classes/{class_id}/queries", body)

    @property
    def queries(self) -> dict[int, dict[str, Any]]:
        """Every class's queries, by id."""
        return {
            q["id"]: q
            for class_id in self.classes
            for q in self._admin("GET", f"/classes/{class_id}/queries")
        }

    def add_scenario(self, name: str, yaml_text: str | None = None) -> Any:
        """Store a scenario; without ``yaml_text`` the API's example document, named ``name``."""
        from backend.scenarios.schemas import EXAMPLE

        text = yaml_text or EXAMPLE.replace("name: two-classes", f"name: {name}", 1)
        return self._admin("POST", "/scenarios", {"yaml": text})

    # -- jobs --------------------------------------------------------------------------

    def add_job(
        self,
        class_names: Sequence[str] = (),
        status: str = "running",
        failure_reason: str | None = None,
        *,
        scenario_id: int | None = None,
        options: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """A job started through the API (of the named classes, or of a stored scenario),
        then brought to ``status`` as its process and the watcher would: a launched job
        has an ingest token; a failed one a reason, exit code 1 and a stop time."""
        body: dict[str, Any] = {"duration_s": None, **(options or {})}
        if scenario_id is not None:
            body["scenario_id"] = scenario_id
        else:
            by_name = {c["name"]: c["id"] for c in self.classes.values()}
            body["class_ids"] = [by_name[n] for n in class_names]
        job_id = int(self._admin("POST", "/jobs", body)["id"])
        values: dict[str, Any] = {"created_at": CREATED}
        if status != "pending":
            token = security.new_token()
            self.ingest_tokens[job_id] = token
            values.update(ingest_token_digest=security.token_digest(token), started_at=STARTED)
        if status in TERMINAL:
            values.update(stopped_at=STARTED + timedelta(minutes=5))
            values.update(exit_code=1 if status == "failed" else 0)
        self.set_job(job_id, status=status, failure_reason=failure_reason, **values)
        return dict(self.job(job_id))

    def job(self, job_id: int) -> Any:
        return self._admin("GET", f"/jobs/{job_id}")

    def job_config(self, job_id: int) -> Any:
        return self._admin("GET", f"/jobs/{job_id}/config")

    @property
    def jobs(self) -> dict[int, dict[str, Any]]:
        return {j["id"]: j for j in self._admin("GET", "/jobs")}

    def set_job(self, job_id: int, **values: Any) -> None:
        """Write a job's row as the job watcher does (status, times, exit code, reason)."""
        with self._session() as session:
            session.execute(update(Job).where(Job.id == job_id).values(**values))

    def set_status(self, job_id: int, status: str) -> None:
        self.set_job(job_id, status=status)

    def write_log(self, job_id: int, lines: Sequence[str]) -> None:
        """The job's log file, where the launcher writes it."""
        path = self.settings.jobs_dir / str(job_id) / "job.log"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(f"{line}\n" for line in lines))
        self.set_job(job_id, log_path=str(path))

    def add_sample(self, job_id: int, class_name: str, t: float, **values: Any) -> dict[str, Any]:
        """Post one sample as the job does (see ``make_sample``)."""
        sample = self.make_sample(job_id, class_name, t, **values)
        self.post_samples(job_id, [sample])
        return sample

    def make_sample(self, job_id: int, class_name: str, t: float, **values: Any) -> dict[str, Any]:
        """A sample with the first nine fields of the contract (``seq`` counts the
        class's samples made here); any other field may be given."""
        seq = self._seq.get((job_id, class_name), 0)
        self._seq[(job_id, class_name)] = seq + 1
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
            **values,
        }
        return sample

    def post_samples(self, job_id: int, samples: Sequence[dict[str, Any]]) -> None:
        with self._while_running(job_id):
            self._as_job(job_id, "POST", f"/jobs/{job_id}/metrics", {"samples": list(samples)})

    def post_actions(self, job_id: int, actions: Sequence[dict[str, Any]]) -> None:
        """Play the job: it took (or judged) these control actions."""
        self._as_job(job_id, "POST", f"/jobs/{job_id}/actions", {"actions": list(actions)})

    def samples(self, job_id: int) -> list[dict[str, Any]]:
        return list(self._admin("GET", f"/jobs/{job_id}/metrics")["samples"])

    def ack(self, job_id: int, version: int) -> None:
        """Play the job: it applied configuration ``version``."""
        self._as_job(job_id, "POST", f"/jobs/{job_id}/control/ack", {"version": version})

    @contextmanager
    def _while_running(self, job_id: int) -> Iterator[None]:
        """Samples come from a launched job: a job not launched yet is launched the way
        the worker records a launch (an ingest token; a pending job becomes starting).
        A run that has ended posted its samples before it ended: for a job made
        ``stopped`` or ``failed`` here, put it back in the state it posted them from."""
        with self._session() as session:
            job = session.get(Job, job_id)
            assert job is not None, job_id
            if job_id not in self.ingest_tokens:
                self.ingest_tokens[job_id] = security.new_token()
                job.ingest_token_digest = security.token_digest(self.ingest_tokens[job_id])
                if job.status == "pending":
                    job.status, job.started_at = "starting", STARTED
            ended = (job.status, job.ingest_token_digest) if job.status in TERMINAL else None
        if ended is None:
            yield
            return
        self.set_job(
            job_id,
            status="running",
            ingest_token_digest=security.token_digest(self.ingest_tokens[job_id]),
        )
        try:
            yield
        finally:
            self.set_job(job_id, status=ended[0], ingest_token_digest=ended[1])

    # -- plumbing ----------------------------------------------------------------------

    def _admin(self, method: str, path: str, body: Any = None) -> Any:
        answer = self.admin.request(method, path, json=body)
        if answer.is_error:
            raise AssertionError(f"{method} {path}: {answer.status_code} {answer.text}")
        return answer.json() if answer.content else None

    def _as_job(self, job_id: int, method: str, path: str, body: Any) -> None:
        answer = self.admin.request(
            method,
            path,
            json=body,
            headers={"Authorization": f"Bearer {self.ingest_tokens[job_id]}"},
        )
        if answer.is_error:
            raise AssertionError(f"{method} {path}: {answer.status_code} {answer.text}")

    @contextmanager
    def _session(self) -> Iterator[Session]:
        with session_scope(make_session_factory(self.engine)) as session:
            yield session

    def snapshot_users(self) -> None:
        """Remember the users and their tokens as they are now (see ``reset``)."""
        with self._session() as session:
            for table in USER_TABLES:
                rows = session.execute(select(table)).mappings().all()
                self._snapshot[table.name] = [dict(row) for row in rows]

    def reset(self) -> None:
        """Empty every table, then put back the users and tokens of ``snapshot_users``."""
        with self._session() as session:
            for table in reversed(Base.metadata.sorted_tables):
                session.execute(delete(table))
            for table in USER_TABLES:
                if self._snapshot[table.name]:
                    session.execute(insert(table), self._snapshot[table.name])
        shutil.rmtree(self.settings.jobs_dir, ignore_errors=True)
        self.ingest_tokens.clear()
        self._seq.clear()
        self.proxy.forget()


@contextmanager
def running_api(data_dir: Path, streams_redis_url: str = "") -> Iterator[RealApi]:
    """The API over a new SQLite database in ``data_dir``, its users signed in (jobs may
    read Redis streams when ``streams_redis_url`` is given)."""
    settings = Settings(
        data_dir=data_dir,
        database_url=f"sqlite:///{data_dir / 'headroom.db'}",
        api_port=free_port(),
        dashboard_port=free_port(),
        secret_key="",
        streams_redis_url=streams_redis_url,
    )
    data_dir.mkdir(parents=True, exist_ok=True)
    upgrade(settings.sqlalchemy_url)
    stack = Stack.from_settings(settings)
    engine = make_engine(settings.sqlalchemy_url)
    admin = httpx.Client(base_url=f"{settings.public_api_url}/api/v1", timeout=10)
    try:
        stack.start_api()
        create_admin(stack, "admin", PASSWORD)  # while the API starts up
        stack.wait_healthy()
        with RecordingProxy(settings.public_api_url) as proxy:
            api = RealApi(stack, proxy, engine, admin)
            admin.headers["Authorization"] = f"Bearer {api.login('admin')}"  # set-up only
            api.tokens["admin"] = api.login("admin")
            for username, role in BASE_USERS[1:]:
                api.add_user(username, role)
                api.tokens[username] = api.login(username)
            api.snapshot_users()
            yield api
    finally:
        admin.close()
        stack.stop()
        engine.dispose()
