"""The environment a job process starts with: an allow-list, never the service's own.

The worker that launches jobs holds the database URL, the broker URL and
``HEADROOM_SECRET_KEY``; a job runs user-written scenario code on Spark, so whatever its
driver's environment holds, a scenario could read. A job needs none of the service's
variables: it reads its frozen snapshot file and nothing else (``JobSnapshot``). It gets
only what the interpreter, the JVM and Spark need from the parent's environment, and on
top the variables its command sets (``JobCommand.env``: the Python of Spark's workers, and
``PYTHONPATH``).
"""

from __future__ import annotations

from collections.abc import Mapping

JOB_ENV_ALLOWLIST: frozenset[str] = frozenset(
    {
        # Finding `java`, spark-submit's shell scripts and their tools (bash, ps, ...).
        "PATH",
        # The JVM's and Python's per-user files (Ivy cache, site-packages of the user,
        # ~/.java preferences); not secret.
        "HOME",
        # The user Spark and Hadoop run as (UserGroupInformation), named in the logs.
        "USER",
        "LOGNAME",
        # Which JVM Spark's launch scripts and PySpark's gateway start.
        "JAVA_HOME",
        # A Spark installation other than the pyspark wheel's, its configuration folder,
        # and where it binds and spills on hosts with several interfaces or small /tmp.
        "SPARK_HOME",
        "SPARK_CONF_DIR",
        "SPARK_LOCAL_IP",
        "SPARK_LOCAL_HOSTNAME",
        "SPARK_LOCAL_DIRS",
        # An interpreter built against libraries outside the system's paths.
        "LD_LIBRARY_PATH",
        # Text decoding of logs and files, and local times in them.
        "LANG",
        "LC_ALL",
        "LC_CTYPE",
        "LC_NUMERIC",
        "LC_TIME",
        "LC_COLLATE",
        "LC_MESSAGES",
        "TZ",
        # Where Python's tempfile and Spark's scratch files go.
        "TMPDIR",
        # Trust anchors for an API served over TLS with a private CA (the metrics
        # reporter and the live configuration's long poll use them).
        "SSL_CERT_FILE",
        "SSL_CERT_DIR",
    }
)
"""Variables a job inherits from the service, each for the reason given beside it.

Left out on purpose: every ``HEADROOM_*``, ``DATABASE_URL`` and ``CELERY_*`` variable (the
service's secrets and configuration); ``PYSPARK_GATEWAY_*``/``PYSPARK_SUBMIT_ARGS``
(inherited from a worker that is itself a PySpark process, they would attach the job to
that process's JVM); ``PYTHONPATH`` (the command sets the one the job needs); proxy
variables (``HTTP_PROXY``: they may carry credentials, and the API is reached directly);
``JAVA_TOOL_OPTIONS``/``_JAVA_OPTIONS`` (JVM options come from the snapshot's Spark
properties only)."""


def job_environment(parent: Mapping[str, str], command_env: Mapping[str, str]) -> dict[str, str]:
    """The allow-listed part of ``parent``, with ``command_env`` (the job's own) on top."""
    env = {name: value for name, value in parent.items() if name in JOB_ENV_ALLOWLIST}
    env.update(command_env)
    return env
