"""The Spark masters a job may run on: threads of the machine that launches it, or a
cluster someone in charge named.

A master URL is where the job's JVM connects and whom it trusts (Spark's RPC uses Java
serialization), so it is never free text: ``local[*]`` (every core), ``local[N]`` with
``N`` from 1 to the launching machine's cores, or a master of a list the caller gives
(the control plane's ``HEADROOM_ALLOWED_SPARK_MASTERS``; ``headroom run``'s own user for
a standalone cluster). Checked offline: nothing here connects anywhere.
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection

from spark_runner.core.errors import ParameterError

DEFAULT_MASTER = "local[*]"
_LOCAL_MASTER = re.compile(r"local\[(\*|[1-9][0-9]{0,5})\]")
STANDALONE_MASTER = re.compile(r"spark://[A-Za-z0-9][A-Za-z0-9.-]{0,252}:[0-9]{1,5}")
"""A standalone master's URL, spark://HOST:PORT (one host, nothing after the port)."""


def local_threads(master: str) -> int | None:
    """The threads a local master asks for: 0 for ``local[*]`` (every core), ``N`` for
    ``local[N]``; None for anything else (including ``local`` and any added text)."""
    match = _LOCAL_MASTER.fullmatch(master)
    if match is None:
        return None
    return 0 if match[1] == "*" else int(match[1])


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity where the OS tells it, e.g.
    a container's cpuset), at least 1."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


def check_master(master: str, *, cores: int, allowed: Collection[str], others: str) -> None:
    """Refuse ``master`` (``ParameterError`` on ``spark_master``) unless it is
    ``local[*]``, ``local[N]`` with ``1 <= N <= cores``, or one of ``allowed`` (compared
    exactly); ``others`` says in the rule what ``allowed`` is."""
    if master in allowed:
        return
    threads = local_threads(master)
    if threads is not None and threads <= cores:
        return
    raise ParameterError(
        "spark_master",
        master,
        f"a job runs on {DEFAULT_MASTER}, local[N] with N from 1 to {cores} (the cores of "
        f"the machine that launches it), or {others}",
    )
