"""A seed that changes with every commit, for property tests over generated workloads.

CI runs each commit once: a property test seeded from the commit it tests explores new
workloads at each change, and a failure is reproducible from the printed seed (pin it
with ``@example``, or ``HEADROOM_TEST_SEED``). Outside a git checkout, the day.
"""

from __future__ import annotations

import datetime
import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def rotating_seed() -> int:
    """``HEADROOM_TEST_SEED`` if set, else the commit's first 32 bits, else the date."""
    if given := os.environ.get("HEADROOM_TEST_SEED"):
        return int(given)
    try:
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()
        return int(head[:8], 16)
    except (OSError, subprocess.CalledProcessError, ValueError):
        return int(datetime.date.today().strftime("%Y%m%d"))


SEED = rotating_seed()
