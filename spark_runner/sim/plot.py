"""``--plot``: response time against the delay target, headroom and shed rate per class.

Needs matplotlib (imported lazily; :class:`PlotUnavailable` says how to install it).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any


class PlotUnavailable(RuntimeError):
    """matplotlib is not installed."""


def plot_results(results: Mapping[str, Any], path: str | Path) -> None:
    """Draw one row per class: response time (mean, max) vs target; headroom and quota;
    shed fraction. Writes a PNG (or whatever the suffix of ``path`` names)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise PlotUnavailable("plotting needs matplotlib: pip install matplotlib") from exc

    names = list(results["classes"])
    series = results["series"]
    t = [s["t_s"] for s in series]
    fig, axes = plt.subplots(
        len(names), 3, figsize=(15, 3.2 * len(names)), squeeze=False, sharex=True
    )
    for row, name in enumerate(names):
        target = results["classes"][name]["delay_target_s"]
        samples = [s["classes"][name] for s in series]
        ax_rt, ax_h, ax_s = axes[row]
        ax_rt.plot(t, [c["max_response_time_s"] for c in samples], lw=0.7, label="max")
        ax_rt.plot(t, [c["mean_response_time_s"] for c in samples], lw=0.7, label="mean")
        ax_rt.axhline(target, color="red", ls="--", lw=1, label=f"target {target:g} s")
        ax_rt.set_yscale("log")
        ax_rt.set_ylabel(f"{name}\nresponse time (s)")
        ax_rt.legend(loc="upper left", fontsize="small")
        ax_h.plot(t, [c["headroom"] for c in samples], lw=0.8, label="headroom H")
        ax_h.plot(t, [c["quota"] for c in samples], lw=0.8, label="quota")
        ax_h.plot(t, [c["load"] for c in samples], lw=0.5, alpha=0.6, label="load L")
        ax_h.set_ylabel("s/s")
        ax_h.legend(loc="upper left", fontsize="small")
        ax_s.plot(t, [100.0 * c["shed_fraction"] for c in samples], lw=0.8, color="tab:red")
        ax_s.set_ylabel("shed %")
        ax_s.set_ylim(-2, 102)
    for ax in axes[-1]:
        ax.set_xlabel("time (s)")
    sc = results["scenario"]
    fig.suptitle(f"{sc['name']} — mode {sc['mode']}")
    fig.tight_layout()
    fig.savefig(str(path), dpi=110)
    plt.close(fig)
