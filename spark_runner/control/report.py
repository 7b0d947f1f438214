"""Text tables of simulation results (per class), for the terminal and the benchmarks."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

CLASS_COLUMNS: tuple[tuple[str, str, str], ...] = (
    # (header, results field, format)
    ("prio", "priority", "g"),
    ("D s", "delay_target_s", "g"),
    ("rt mean s", "mean_response_time_s", ".4f"),
    ("rt p95 s", "p95_response_time_s", ".4f"),
    ("rt max s", "max_response_time_s", ".3f"),
    ("viol mean s", "mean_violation_s", ".4f"),
    ("viol max s", "max_violation_s", ".3f"),
    ("loss %", "loss_fraction", "%"),
    ("shed %", "shed_fraction", "%"),
    ("oracle %", "oracle_loss_fraction", "%"),
    ("loss/oracle", "loss_vs_oracle", ".2f"),
    ("floor max s", "max_floor_s", ".3f"),
    ("infeasible %", "infeasible_fraction", "%"),
)


def format_value(value: Any, fmt: str) -> str:
    """One cell: ``-`` for missing, percentages with two decimals."""
    if value is None:
        return "-"
    if fmt == "%":
        return f"{100.0 * float(value):.2f}"
    return format(value, fmt)


def render_table(headers: Sequence[str], rows: Sequence[Sequence[str]], indent: str = "") -> str:
    """A plain, aligned table (first column left-aligned, the others right-aligned)."""
    widths = [len(h) for h in headers]
    for row in rows:
        for i, cell in enumerate(row):
            widths[i] = max(widths[i], len(cell))

    def line(cells: Sequence[str]) -> str:
        parts = [
            cell.ljust(widths[i]) if i == 0 else cell.rjust(widths[i])
            for i, cell in enumerate(cells)
        ]
        return indent + "  ".join(parts).rstrip()

    rule = indent + "  ".join("-" * w for w in widths)
    return "\n".join([line(headers), rule, *(line(r) for r in rows)])


def class_table(results: Mapping[str, Any]) -> str:
    """The per-class summary of a results document as a table."""
    headers = ["class", *(h for h, _, _ in CLASS_COLUMNS)]
    rows = [
        [name, *(format_value(summary.get(field), fmt) for _, field, fmt in CLASS_COLUMNS)]
        for name, summary in results["classes"].items()
    ]
    return render_table(headers, rows)


def run_header(results: Mapping[str, Any]) -> str:
    """One line naming the scenario and the run."""
    sc = results["scenario"]
    totals = results["totals"]
    return (
        f"scenario {sc['name']} (format v{sc['version']}), mode {sc['mode']}, "
        f"{sc['duration_s']:g} s simulated, control period {sc['control_period_s']:g} s, "
        f"seed {sc['seed']}; processor idle {100 * totals['idle_fraction']:.1f} %, "
        f"{len(results['redistributions'])} redistributions"
    )
