"""Shared by the figure builders: class order, class colours and the time axis.

Every class keeps one colour across all charts (by its position in the job's class
order), so the charts of a page read together. Times are the job's epoch seconds,
shown as UTC.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime

from plotly.colors import qualitative

from frontend.api import MetricSample

PALETTE: tuple[str, ...] = tuple(qualitative.Plotly)


def class_order(samples: Iterable[MetricSample], known: Iterable[str] = ()) -> list[str]:
    """Classes in display order: ``known`` first (the job's own order), then any other
    class that appears in ``samples``, in order of first appearance."""
    order = list(dict.fromkeys(known))
    seen = set(order)
    for sample in samples:
        name = sample["class_name"]
        if name not in seen:
            seen.add(name)
            order.append(name)
    return order


def class_colors(names: Sequence[str]) -> dict[str, str]:
    """A stable colour per class, by position in ``names`` (cycling the palette)."""
    return {name: PALETTE[i % len(PALETTE)] for i, name in enumerate(names)}


def epoch_to_utc(t: float) -> datetime:
    """Epoch seconds → naive UTC datetime (Plotly would drop an offset anyway)."""
    return datetime.fromtimestamp(t, tz=UTC).replace(tzinfo=None)


def epoch_to_iso(t: float) -> str:
    """Epoch seconds → ``YYYY-MM-DD HH:MM:SS.fff`` in UTC, the date string Plotly reads
    (cheaper to send than ``datetime`` objects, which Plotly's encoder converts one by
    one; Plotly keeps no more than a tenth of a millisecond anyway)."""
    return datetime.fromtimestamp(t, tz=UTC).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]
