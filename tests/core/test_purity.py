"""The core stays pure: importable with Spark, web and database packages made unimportable,
and no clock, randomness or forbidden import anywhere in its source."""

from __future__ import annotations

import ast
import pkgutil
import subprocess
import sys
from pathlib import Path

import spark_runner.core

CORE_DIR = Path(spark_runner.core.__file__).parent
BLOCKED = ("pyspark", "fastapi", "sqlalchemy", "celery", "dash", "redis", "httpx", "requests")
FORBIDDEN = set(BLOCKED) | {"time", "random", "datetime", "numpy", "pydantic"}


def core_modules() -> list[str]:
    names = ["spark_runner.core"]
    for info in pkgutil.walk_packages([str(CORE_DIR)], prefix="spark_runner.core."):
        names.append(info.name)
    return names


def test_every_core_module_imports_with_spark_web_and_db_blocked() -> None:
    modules = core_modules()
    assert "spark_runner.core.dilos" in modules and "spark_runner.core.managers.aloma" in modules
    script = "\n".join(
        [
            "import importlib, sys",
            *(f"sys.modules[{name!r}] = None" for name in BLOCKED),
            f"for name in {modules!r}:",
            "    importlib.import_module(name)",
            f"leaked = [m for m in {list(BLOCKED)!r} if sys.modules.get(m) is not None]",
            "assert not leaked, leaked",
            "print('ok', len(sys.modules))",
        ]
    )
    result = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=CORE_DIR.parent.parent,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("ok")


def test_no_clock_randomness_or_forbidden_import_in_the_source() -> None:
    offenders = []
    for path in CORE_DIR.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                roots = [alias.name.split(".")[0] for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                roots = [node.module.split(".")[0]]
            else:
                continue
            offenders += [f"{path.name}: {root}" for root in roots if root in FORBIDDEN]
    assert not offenders
