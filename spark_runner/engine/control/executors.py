"""The job's executors, resized while it runs through Spark's executor allocation API.

``SparkContext.requestTotalExecutors`` sets how many executors the application wants;
the standalone master starts new ones on workers with free cores, up to the
application's ``spark.cores.max``. ``SparkContext.killExecutors`` releases chosen ones
and lowers that number with them. Neither restarts the query: a streaming query's
state lives in its checkpoint, so the state stores a released executor held are loaded
again where their next tasks run.

Spark's own dynamic allocation must be off (it would fight these calls). A standalone
application takes every core ``spark.cores.max`` allows as it starts; the pool's first
:meth:`resize` to the initial size releases the surplus as it registers
(:meth:`ExecutorPool.reconcile`).

On ``local[N]`` the driver is the only executor: the pool says so
(:attr:`ExecutorPool.reason`) and changes nothing.

The cluster's free cores come from the master's status page (``/json``), when its
address is known; otherwise the pool may grow to the job's maximum and a request the
cluster cannot fill simply stays pending.
"""

from __future__ import annotations

import json
import logging
import time
import urllib.request
from dataclasses import dataclass
from typing import Any

from pyspark.sql import SparkSession

log = logging.getLogger(__name__)

LOCAL_REASON = (
    "a local[N] master runs every task in the driver, one executor that cannot grow: "
    "run the job on a standalone cluster (spark://HOST:PORT) to scale"
)


@dataclass(frozen=True)
class MasterStatus:
    """What the standalone master reports of its cluster."""

    cores: int
    cores_used: int
    alive_workers: int

    @property
    def free_cores(self) -> int:
        return max(self.cores - self.cores_used, 0)


def master_status(ui_url: str, timeout_s: float = 2.0) -> MasterStatus:
    """Read the master's ``/json`` status page (its web UI's address, ``http://...``)."""
    with urllib.request.urlopen(f"{ui_url.rstrip('/')}/json/", timeout=timeout_s) as reply:
        data = json.load(reply)
    return MasterStatus(
        cores=int(data["cores"]),
        cores_used=int(data["coresused"]),
        alive_workers=int(data.get("aliveworkers", len(data.get("workers", [])))),
    )


class ExecutorPool:
    """The executors of one Spark application (see module)."""

    def __init__(
        self,
        spark: SparkSession,
        *,
        max_executors: int,
        executor_cores: int = 1,
        master_ui_url: str | None = None,
    ) -> None:
        self._sc = spark.sparkContext
        self.max_executors = max_executors
        self.executor_cores = executor_cores
        self.master_ui_url = master_ui_url
        master = self._sc.master or ""
        self.reason: str | None = None if master.startswith("spark://") else LOCAL_REASON
        self.requested = len(self.serving()) if self.reason is None else 1
        self._released: set[str] = set()  # asked to go, still registered for a while

    @property
    def _utils(self) -> Any:
        """Spark's helpers that turn Python lists and dicts into Scala collections."""
        jvm = self._sc._jvm
        assert jvm is not None
        return jvm.org.apache.spark.api.python.PythonUtils

    @property
    def elastic(self) -> bool:
        return self.reason is None

    def serving(self) -> list[str]:
        """Ids of the executors registered now (the driver is not one of them)."""
        ids = self._sc._jsc.sc().getExecutorIds().mkString(",")
        return [i for i in str(ids).split(",") if i]

    def free_executors(self) -> int:
        """How many more executors the job may start now: what its maximum leaves, and,
        where the master is known, what the cluster's free cores hold."""
        room = self.max_executors - max(self.requested, len(self.serving()))
        if self.master_ui_url is None:
            return max(room, 0)
        try:
            free = master_status(self.master_ui_url).free_cores // self.executor_cores
        except (OSError, ValueError, KeyError) as err:
            log.warning("master status at %s unreadable (%s)", self.master_ui_url, err)
            return 0
        return max(min(room, free), 0)

    def resize(self, size: int) -> None:
        """Ask for ``size`` executors (within 1 and the job's maximum)."""
        if not self.elastic:
            return
        self.requested = max(1, min(size, self.max_executors))
        self.reconcile()

    def settle(self, timeout_s: float = 15.0, poll_s: float = 0.2) -> int:
        """Wait (at most ``timeout_s``) until no executor beyond the size asked is still
        registered, so that a query starts on the pool it will keep (tasks given to an
        executor on its way out run again elsewhere). Returns how many serve."""
        deadline = time.monotonic() + timeout_s
        while self.elastic and time.monotonic() < deadline:
            self.reconcile()
            if len(self.serving()) <= self.requested:
                break
            time.sleep(poll_s)
        return len(self.serving())

    def sync(self, size: int) -> int:
        """Once a period: follow the size the policy asks (``size``), release a surplus
        that registered late; returns how many executors serve now."""
        if size != self.requested:
            self.resize(size)
        elif len(self.serving()) > self.requested:
            self.reconcile()
        return len(self.serving())

    def reconcile(self) -> None:
        """Bring the pool to the size asked: release the newest executors beyond it
        (those the application took as it started included), and ask the cluster for
        the rest. Called after every change and once a period (an executor that
        registers late, or one a worker lost, is caught up with here)."""
        if not self.elastic:
            return
        jsc = self._sc._jsc.sc()
        surplus = sorted(self.serving(), key=_id_order)[self.requested :]
        fresh = [i for i in surplus if i not in self._released]
        if fresh:
            jsc.killExecutors(self._utils.toSeq(fresh))
            self._released.update(fresh)
        if fresh or not surplus:
            jsc.requestTotalExecutors(self.requested, 0, self._utils.toScalaMap({}))


def _id_order(executor_id: str) -> tuple[int, str]:
    return (int(executor_id), executor_id) if executor_id.isdigit() else (1 << 30, executor_id)
