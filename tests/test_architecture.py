"""The shape the house style asks for, checked: a pure core and one reader of the
environment."""

from __future__ import annotations

import ast
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


PRODUCT = ("backend", "frontend", "spark_runner", "headroom")


def _imports(path: Path) -> set[str]:
    """The modules ``path`` imports, anywhere in it (a function's imports too)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def _modules(package: str) -> list[Path]:
    return sorted((ROOT / package.replace(".", "/")).rglob("*.py"))


@pytest.mark.parametrize(
    ("importer", "imported"),
    [("spark_runner.engine", "spark_runner.sim"), ("spark_runner.sim", "spark_runner.engine")],
)
def test_the_two_engines_do_not_import_each_other(importer: str, imported: str) -> None:
    """The simulator and the Spark engine stand side by side on spark_runner.control,
    which holds the vocabulary they share (network, totals, results, background)."""
    offenders = [
        f"{path.relative_to(ROOT)}: {name}"
        for path in _modules(importer)
        for name in sorted(_imports(path))
        if name == imported or name.startswith(imported + ".")
    ]
    assert offenders == []


# What the backend and the dashboard may use of spark_runner: the messages (contract), the
# scenario format and the pure core for validation, one launch entry and one what-if entry.
SERVICE_MAY_IMPORT = (
    "spark_runner.contract",
    "spark_runner.scenario",
    "spark_runner.core",
    "spark_runner.job.launch",
    "spark_runner.sim.whatif",
)


@pytest.mark.parametrize("package", ["backend", "frontend"])
def test_the_services_use_only_the_public_parts_of_spark_runner(package: str) -> None:
    offenders = [
        f"{path.relative_to(ROOT)}: {name}"
        for path in _modules(package)
        for name in sorted(_imports(path))
        if name.startswith("spark_runner.")
        and not any(name == m or name.startswith(m + ".") for m in SERVICE_MAY_IMPORT)
    ]
    assert offenders == []


MAX_FUNCTION_LINES = 80
# Declarations read top to bottom, not logic: a page's component tree.
DECLARATIVE = {
    "frontend/pages/history.py:layout",
    "frontend/pages/jobs.py:_start_form",
    "frontend/pages/live.py:_tuning_form",
}


def _own_lines(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """A function's lines after its docstring, less those of the functions nested in it
    (each is a function a reader holds on its own)."""
    body = node.body
    start = node.lineno
    first = body[0]
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
        start = first.end_lineno or start
    nested = sum(
        (inner.end_lineno or inner.lineno) - inner.lineno + 1
        for inner in ast.walk(node)
        if inner is not node
        and isinstance(inner, ast.FunctionDef | ast.AsyncFunctionDef)
        and not any(
            outer is not node
            and outer is not inner
            and isinstance(outer, ast.FunctionDef | ast.AsyncFunctionDef)
            and inner in ast.walk(outer)
            for outer in ast.walk(node)
        )
    )
    return (node.end_lineno or node.lineno) - start - nested


def test_no_logic_function_is_longer_than_a_reader_can_hold() -> None:
    long = {
        f"{path.relative_to(ROOT)}:{node.name}": lines
        for package in PRODUCT
        for path in _modules(package)
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and (lines := _own_lines(node)) > MAX_FUNCTION_LINES
    }
    assert {k: v for k, v in long.items() if k not in DECLARATIVE} == {}
    assert set(long) >= DECLARATIVE, "an exemption no longer needed: remove it"


def _backend_domains() -> list[str]:
    """The backend's domains: its folders (``api``, the HTTP plumbing, among them)."""
    return sorted(
        path.name for path in (ROOT / "backend").iterdir() if (path / "__init__.py").is_file()
    )


def _domain_imports() -> dict[str, set[str]]:
    """Each backend domain's imports of the other domains, at module or function level."""
    domains = _backend_domains()
    found: dict[str, set[str]] = {domain: set() for domain in domains}
    for domain in domains:
        for path in _modules(f"backend.{domain}"):
            for name in _imports(path):
                parts = name.split(".")
                if len(parts) > 2 and parts[0] == "backend" and parts[1] in found:
                    found[domain].add(parts[1])
        found[domain].discard(domain)
    return found


def test_no_two_backend_domains_import_each_other() -> None:
    """A domain reads those below it and never those above: what a lower one must tell
    an upper one (a class change reaching live jobs) goes through ``backend.hooks``."""
    imports = _domain_imports()
    assert len(imports) >= 10
    mutual = sorted(
        f"backend/{a} <-> backend/{b}"
        for a, imported in imports.items()
        for b in imported
        if a < b and a in imports[b]
    )
    assert mutual == []
