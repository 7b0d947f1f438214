"""``headroom up`` keeps its services running (issue 11, reliability).

- :meth:`Stack.check` on real processes with a hand-moved clock: a dead service is
  restarted after its back-off (doubling, capped, reset after a healthy run), the others
  are left alone, and each step is announced and written to the service's log.
- A real ``headroom up``: the Celery worker is killed with SIGKILL; it comes back while
  the API keeps answering, and its embedded beat dies with it (no orphan scheduling the
  watchdog); a second beat refuses to run while one holds the beat lock.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from backend.beat import BeatLockHeld, acquire_beat_lock
from backend.settings import Settings
from backend.stack import Backoff, Stack
from tests.e2e.conftest import free_port
from tests.waiting import poll_for, wait_until

EXIT_AT_ONCE = ["-c", "import sys; sys.exit(3)"]
RUN_LONG = ["-c", "import time; time.sleep(60)"]


def test_backoff_doubles_and_is_capped() -> None:
    backoff = Backoff(initial_s=1, factor=2, max_s=10, healthy_s=60)
    assert [backoff.delay_s(n) for n in range(1, 7)] == [1, 2, 4, 8, 10, 10]


def test_a_dead_service_is_restarted_after_its_backoff_and_the_others_stay(
    tmp_path: Path,
) -> None:
    said: list[str] = []
    stack = Stack(
        settings=Settings(data_dir=tmp_path),
        env=dict(os.environ),
        backoff=Backoff(initial_s=1, factor=2, max_s=3, healthy_s=60),
        announce=said.append,
    )
    steady = stack._start("steady", RUN_LONG)
    crasher = stack._start("crasher", EXIT_AT_ONCE)
    steady.started_at = crasher.started_at = 0.0
    try:
        delays = []
        now = 0.0
        for _ in range(4):
            crasher.process.wait(10)
            stack.check(now)  # noticed dead: due after its back-off
            assert crasher.restart_at is not None
            delay_s = crasher.restart_at - now
            delays.append(delay_s)
            first_pid = crasher.process.pid
            stack.check(now + delay_s - 0.01)
            assert crasher.process.pid == first_pid  # not before its time
            now += delay_s
            stack.check(now)
            assert crasher.process.pid != first_pid and crasher.restart_at is None
        assert delays == [1, 2, 3, 3]  # doubling, capped at max_s

        # A run longer than healthy_s ends the row: the next restart waits initial_s again.
        crasher.process.wait(10)
        stack.check(now + 61)
        assert crasher.restart_at == now + 61 + 1
        assert steady.process.poll() is None and steady.started_at == 0.0  # left alone
    finally:
        stack.stop()
    assert "crasher (pid" in said[0] and "exited with code 3" in said[0]
    assert "restarting it in 1 s" in said[0] and "the other services keep running" in said[0]
    assert any(line.startswith("crasher restarted (pid") for line in said)
    logged = (tmp_path / "logs" / "crasher.log").read_text()
    assert "[headroom up] crasher (pid" in logged and "[headroom up] crasher restarted" in logged


def test_the_beat_lock_admits_one_holder(tmp_path: Path) -> None:
    clock = [0.0]
    path = tmp_path / "beat.lock"
    held = acquire_beat_lock(path, wait_s=0)
    try:
        # Another open file description (as another process has) cannot take it; the wait
        # is measured on the injected clock, which the fake sleep advances.
        with pytest.raises(BeatLockHeld, match=f"pid {os.getpid()}"):
            acquire_beat_lock(
                path,
                wait_s=5,
                clock=lambda: clock[0],
                sleep=lambda s: clock.__setitem__(0, clock[0] + s),
            )
        assert clock[0] >= 5
    finally:
        os.close(held)
    os.close(acquire_beat_lock(path, wait_s=0))  # free again once its holder let go


@dataclass
class Up:
    process: subprocess.Popen[str]
    settings: Settings
    env: dict[str, str]
    output: list[str]


@pytest.fixture
def headroom_up(tmp_path: Path) -> Iterator[Up]:
    """A real ``headroom up --no-dashboard`` on SQLite and the embedded broker."""
    data_dir = tmp_path / "var"
    env = dict(os.environ)
    env.update(
        {
            "HEADROOM_DATA_DIR": str(data_dir),
            "HEADROOM_API_PORT": str(free_port()),
            "HEADROOM_WATCH_INTERVAL_S": "0.5",
            "HEADROOM_BEAT_LOCK_WAIT_S": "5",
        }
    )
    for name in ("DATABASE_URL", "CELERY_BROKER_URL", "HEADROOM_API_URL"):
        env.pop(name, None)
    settings = Settings(data_dir=data_dir, api_port=int(env["HEADROOM_API_PORT"]))
    process = subprocess.Popen(
        [sys.executable, "-m", "headroom", "up", "--no-dashboard"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    output: list[str] = []
    reader = threading.Thread(
        target=lambda: output.extend(iter(process.stdout.readline, "")),  # type: ignore[union-attr]
        daemon=True,
    )
    reader.start()
    up = Up(process, settings, env, output)
    try:
        assert wait_until(lambda: any(line.startswith("API:") for line in output), 90), "".join(
            output
        ) + _logs(settings)
        yield up
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def _logs(settings: Settings) -> str:
    return "".join(
        f"\n--- {log.name} ---\n{log.read_text(errors='replace')[-3000:]}"
        for log in sorted((settings.data_dir / "logs").glob("*.log"))
    )


def children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            fields = stat.rsplit(")", 1)[-1].split()
            if int(fields[1]) == pid and fields[0] not in ("Z", "X"):
                found.append(int(entry.name))
    return found


def worker_pid(up: Up) -> int | None:
    for child in children(up.process.pid):
        try:
            if b"celery" in Path(f"/proc/{child}/cmdline").read_bytes():
                return child
        except OSError:
            continue
    return None


def beat_pid(up: Up, worker: int) -> int | None:
    """The beat holding the lock, if it is the given worker's child."""
    try:
        holder = int((up.settings.data_dir / "beat.lock").read_text())
    except (OSError, ValueError):
        return None
    return holder if holder in children(worker) else None


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


@pytest.mark.timeout(240)
def test_sigkill_of_the_worker_restarts_it_kills_its_beat_and_the_api_keeps_answering(
    headroom_up: Up,
) -> None:
    up = headroom_up
    health = f"{up.settings.public_api_url}/api/v1/health"
    worker = poll_for(lambda: worker_pid(up), 30)
    assert worker is not None, "".join(up.output)
    beat = poll_for(lambda: beat_pid(up, worker), 60)
    assert beat is not None, _logs(up.settings)

    answers: list[int] = []
    stop_probe = threading.Event()

    def probe() -> None:
        with httpx.Client(timeout=5) as client:
            while not stop_probe.wait(0.2):
                try:
                    answers.append(client.get(health).status_code)
                except httpx.HTTPError:
                    answers.append(0)

    prober = threading.Thread(target=probe, daemon=True)
    prober.start()
    try:
        os.kill(worker, signal.SIGKILL)
        # The embedded beat dies with its worker (the kernel's parent-death signal).
        assert wait_until(lambda: not alive(beat), 5, 0.1), f"beat {beat} outlived its worker"
        # The worker comes back; the API never stopped answering.
        new_worker = poll_for(lambda: (w := worker_pid(up)) != worker and w, 30)
        assert new_worker, "".join(up.output) + _logs(up.settings)
        new_beat = poll_for(lambda: beat_pid(up, new_worker), 60)
        assert new_beat is not None and new_beat != beat, _logs(up.settings)
    finally:
        stop_probe.set()
        prober.join()
    assert answers and set(answers) == {200}, answers
    said = "".join(up.output)
    assert f"worker (pid {worker}) exited with signal 9" in said, said
    assert f"worker restarted (pid {new_worker})" in said, said
    # The new worker's beat schedules the watchdog again.
    worker_log = up.settings.data_dir / "logs" / "worker.log"

    def sweeps_since_restart() -> bool:
        after = worker_log.read_text(errors="replace").split("[headroom up] worker restarted")
        return len(after) == 2 and "Task jobs.sweep[" in after[1]

    assert wait_until(sweeps_since_restart, 30), _logs(up.settings)

    # A second beat does not run while the worker's holds the lock.
    second = subprocess.run(
        [sys.executable, "-m", "celery", "-A", "backend.worker", "beat", "--loglevel", "INFO",
         "--schedule", str(up.settings.data_dir / "second-schedule")],
        env={**up.env, "HEADROOM_BEAT_LOCK_WAIT_S": "0"},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )  # fmt: skip
    assert second.returncode != 0, second.stdout + second.stderr
    assert f"another Celery beat (pid {new_beat}) holds" in second.stdout + second.stderr
    assert alive(new_beat)
