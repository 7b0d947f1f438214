"""The shape the house style asks for, checked: a pure core and one reader of the
environment."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FORBIDDEN_IN_CORE = (
    "pyspark",
    "fastapi",
    "sqlalchemy",
    "celery",
    "dash",
    "redis",
    "httpx",
    "requests",
    "starlette",
    "psycopg",
)


# the adapters: neither the core nor the messages to and from a job may import them
ADAPTERS = ("spark_runner.engine", "spark_runner.job", "spark_runner.sim", "backend", "frontend")


@pytest.mark.parametrize("package", ["core", "contract", "control"])
def test_pure_packages_import_without_spark_web_database_or_adapters(package: str) -> None:
    """Every module of spark_runner.core, .contract and .control imports with those
    packages made unimportable, and loads none of the adapters."""
    modules = sorted(
        ".".join(path.relative_to(ROOT).with_suffix("").parts)
        for path in (ROOT / "spark_runner" / package).rglob("*.py")
    )
    modules = [m.removesuffix(".__init__") for m in modules]
    program = (
        "import sys, importlib\n"
        f"for name in {FORBIDDEN_IN_CORE!r}:\n"
        "    sys.modules[name] = None\n"
        f"for module in {modules!r}:\n"
        "    importlib.import_module(module)\n"
        f"leaked = [m for m in sys.modules if m.split('.')[0] in {FORBIDDEN_IN_CORE!r}"
        " and sys.modules[m] is not None]\n"
        f"leaked += [m for m in sys.modules if m.startswith({ADAPTERS!r})]\n"
        "assert not leaked, leaked\n"
        "print(len(sys.argv), 'ok')\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert result.returncode == 0, result.stderr
    assert len(modules) >= 3


def test_core_reads_no_clock_and_no_global_randomness() -> None:
    pattern = re.compile(
        r"^\s*(import time|from time import|import datetime|from datetime"
        r"|random\.(random|uniform|choice|seed)\()",
        re.MULTILINE,
    )
    offenders = [
        str(path.relative_to(ROOT))
        for path in (ROOT / "spark_runner" / "core").rglob("*.py")
        if pattern.search(path.read_text())
    ]
    assert offenders == []


def test_only_settings_reads_the_environment() -> None:
    # Reads only: a job process may still set variables for the processes it starts.
    reader = re.compile(r"os\.environ\.get|os\.getenv|os\.environ\[[^\]]+\](?!\s*=)")
    offenders = [
        str(path.relative_to(ROOT))
        for package in ("backend", "frontend", "spark_runner", "headroom")
        for path in (ROOT / package).rglob("*.py")
        if reader.search(path.read_text())
    ]
    assert offenders == []
