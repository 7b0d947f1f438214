"""A generated bursty rate trace standing in for the thesis's LBL trace (001 Fig. 7).

The thesis replays the input rate of the public LBL-PKT-4 TCP trace (S_r). That trace is
not available here, so the product ships a *generated* trace with the features the thesis
relies on: a noisy base rate and two periods in which the rate keeps rising with sudden,
very high, short spikes (001 §6.2.3.2), over 400 s. It is **not** the LBL trace; numbers
measured on it are comparable in kind, not in value, to the thesis's.

``python -m spark_runner.sim.tracegen OUT.csv`` rewrites the shipped file
(``scenarios/traces/bursty_lbl_like.csv``); the result depends only on the seed.
"""

from __future__ import annotations

import math
import random
import sys
from pathlib import Path

DEFAULT_SEED = 20110
DEFAULT_DURATION_S = 400.0
DEFAULT_STEP_S = 0.5
SPIKE_ROWS = (1, 3)  # a spike lasts 0.5–1.5 s at 0.5 s per row
SPIKE_GAIN = (1.5, 2.0)  # ... at this multiple of the local level


def bursty_trace(
    seed: int = DEFAULT_SEED,
    duration_s: float = DEFAULT_DURATION_S,
    step_s: float = DEFAULT_STEP_S,
    base_rate_per_s: float = 160.0,
) -> list[tuple[float, float]]:
    """Rows ``(time_s, rate_per_s)`` every ``step_s`` over ``duration_s``.

    Shape (times scale with ``duration_s``; for 400 s): base ≈ ``base_rate_per_s`` with
    ±15 % noise; period 1 from 15 % to 40 % of the run rises to ≈ 2.2× base; period 2
    from 60 % to 85 % rises to ≈ 2.8× base; inside both, spikes of 0.5–1.5 s reach
    1.5–2× the local level (``SPIKE_ROWS``, ``SPIKE_GAIN``). Mean over the run ≈ 1.4× base,
    peak ≈ 4.9× base.
    """
    rng = random.Random(seed)
    rows: list[tuple[float, float]] = []
    n = round(duration_s / step_s)
    periods = ((0.15, 0.40, 2.2), (0.60, 0.85, 2.8))
    spike_left = 0
    spike_gain = 1.0
    for i in range(n):
        t = i * step_s
        x = t / duration_s
        level = 1.0
        active = False
        for start, end, peak in periods:
            if start <= x < end:
                active = True
                progress = (x - start) / (end - start)
                level = 1.0 + (peak - 1.0) * progress**1.5
            elif end <= x < end + 0.03:  # quick fall back to the base
                level = 1.0 + (peak - 1.0) * (1.0 - (x - end) / 0.03)
        noise = math.exp(rng.gauss(0.0, 0.15))
        if spike_left > 0:
            spike_left -= 1
        elif active and rng.random() < 0.05:
            spike_left = rng.randint(SPIKE_ROWS[0], SPIKE_ROWS[1])
            spike_gain = rng.uniform(SPIKE_GAIN[0], SPIKE_GAIN[1])
        gain = spike_gain if spike_left > 0 else 1.0
        rows.append((round(t, 6), round(base_rate_per_s * level * noise * gain, 3)))
    return rows


def write_trace(path: str | Path, rows: list[tuple[float, float]]) -> None:
    """Write rows as a trace CSV (``time_s,rate_per_s``) with a provenance comment."""
    lines = [
        "# Generated bursty trace (spark_runner.sim.tracegen), standing in for the LBL-PKT-4",
        "# trace of 001 Fig. 7, which is not available here. Not real data.",
        "time_s,rate_per_s",
        *(f"{t:g},{r:g}" for t, r in rows),
    ]
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        sys.stderr.write("usage: python -m spark_runner.sim.tracegen OUT.csv\n")
        return 2
    write_trace(args[0], bursty_trace())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
