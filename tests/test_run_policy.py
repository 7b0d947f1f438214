"""The suite's run policy (tests/conftest.py), checked on small generated suites.

Each case runs pytest in a subprocess on a temporary directory holding a copy of
tests/conftest.py and this project's markers, so the hooks under test are the real ones.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[1]
# Plugins these generated suites do not use (each costs seconds to import).
QUIET = ("-p", "no:dash", "-p", "no:schemathesis", "-p", "no:hypothesispytest", "-p", "no:anyio")


def outcomes(result: pytest.RunResult) -> dict[str, int]:
    """The run's outcome counts, without its warnings (the libraries' deprecations)."""
    counts = result.parseoutcomes()
    counts.pop("warnings", None)
    return counts


@pytest.fixture
def suite(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    options = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]
    markers = "\n    ".join(options["ini_options"]["markers"])
    pytester.makeini(f"[pytest]\naddopts = -raR --strict-markers\nmarkers =\n    {markers}\n")
    pytester.makeconftest((ROOT / "tests" / "conftest.py").read_text())
    monkeypatch.delenv("HEADROOM_REQUIRE_SERVICES", raising=False)
    monkeypatch.setenv("PYTHONPATH", str(ROOT))  # the conftest imports tests.api_fixtures
    return pytester


FLAKY_ONCE = """
import pathlib
import pytest

def fails_first(name):
    marker = pathlib.Path(name)
    if not marker.exists():
        marker.write_text("x")
        raise AssertionError("lost a click")

@pytest.mark.browser
def test_browser_click():
    fails_first("click")

@pytest.mark.browser
@pytest.mark.timing
def test_browser_deadline():
    fails_first("deadline")

@pytest.mark.spark
def test_spark_job():
    fails_first("spark")

def test_plain():
    fails_first("plain")
"""


@pytest.mark.parametrize("workers", [(), ("-n", "2")], ids=["one process", "xdist workers"])
def test_only_browser_tests_are_rerun_and_a_rerun_shows_as_flaky(
    suite: pytest.Pytester, workers: tuple[str, ...]
) -> None:
    """Also across pytest-xdist's workers, as scripts/test's shared pass runs them."""
    suite.makepyfile(test_flaky=FLAKY_ONCE)
    result = suite.runpytest_subprocess(*QUIET, *workers)
    assert outcomes(result) == {"passed": 1, "failed": 3, "rerun": 1}
    result.stdout.fnmatch_lines(
        ["*flaky tests: failed, then passed on their rerun*", "FLAKY: *::test_browser_click"]
    )
    assert "FLAKY: test_flaky.py::test_browser_deadline" not in result.stdout.str()
    result.stdout.fnmatch_lines(["*RERUN*test_browser_click*"])  # rerunfailures' summary


SKIPS = """
import pytest

pytest.importorskip("math")

def test_skips_at_run_time():
    pytest.skip("Chromium is not installed")

@pytest.mark.skipif(True, reason="a tool is missing")
def test_skipped_by_a_marker():
    pass

@pytest.mark.xfail(reason="known", strict=True)
def test_expected_failure():
    raise AssertionError
"""


MODULE_SKIP = "import pytest\npytest.skip('no JDK', allow_module_level=True)"


def test_a_skip_is_a_failure_when_services_are_required(
    suite: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite.makepyfile(test_skips=SKIPS)
    suite.makepyfile(test_module_skip=MODULE_SKIP)
    assert outcomes(suite.runpytest_subprocess(*QUIET)) == {"skipped": 3, "xfailed": 1}

    monkeypatch.setenv("HEADROOM_REQUIRE_SERVICES", "1")
    result = suite.runpytest_subprocess(*QUIET, "test_skips.py")
    assert outcomes(result) == {"failed": 1, "errors": 1, "xfailed": 1}  # run, setup
    result.stdout.fnmatch_lines(["*Chromium is not installed*forbids skipping*"])
    result = suite.runpytest_subprocess(*QUIET, "test_module_skip.py")
    assert outcomes(result) == {"errors": 1}
    result.stdout.fnmatch_lines(["*no JDK*forbids skipping*"])


def test_a_test_using_postgres_or_redis_must_say_so(suite: pytest.Pytester) -> None:
    suite.makepyfile(
        test_unmarked="""
import pytest

def test_forgot_the_marker(postgres_url):
    pass

@pytest.fixture
def client(redis_url):
    return redis_url

def test_through_a_fixture(client):
    pass

@pytest.mark.services
def test_marked(redis_url):
    pass
"""
    )
    result = suite.runpytest_subprocess(*QUIET, "--collect-only")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "*without @pytest.mark.services*",
            "*test_unmarked.py::test_forgot_the_marker",
            "*test_unmarked.py::test_through_a_fixture",
        ]
    )
    assert "test_marked" not in result.stderr.str()
