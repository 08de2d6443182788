"""Figure, table and JSON for per-step curves (one curve per core), shared by the AMRL analyses."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np


def write_series_report(
    out: Path,
    name: str,
    panels: dict[str, dict[str, np.ndarray]],
    ylabel: str,
    shown_steps: tuple[int, ...],
    reference_lines: dict[str, dict[str, np.ndarray]] | None = None,
) -> Path:
    """Write ``out/name.png`` (one log-scale panel per key of ``panels``, t on the x axis),
    ``out/name.json`` and print a table of the values at ``shown_steps``. ``reference_lines``
    (same panel keys) are drawn dashed, e.g. analytic formulas next to measurements."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from rich.table import Table

    from memrl.console import console

    reference_lines = reference_lines or {}
    out.mkdir(parents=True, exist_ok=True)
    fig, axes = plt.subplots(1, len(panels), figsize=(6 * len(panels), 4), squeeze=False)
    for ax, (title, series) in zip(axes[0], panels.items()):
        for label, values in series.items():
            ax.semilogy(np.arange(len(values)), np.maximum(values, 1e-30), label=label)
        for label, values in reference_lines.get(title, {}).items():
            ax.semilogy(np.arange(len(values)), np.maximum(values, 1e-30), "--", color="0.4", lw=1)
            ax.annotate(
                label, (len(values) - 1, max(values[-1], 1e-30)), fontsize=7, color="0.3", ha="right", va="bottom"
            )
        ax.set_xlabel("t")
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        ax.legend(fontsize=8)
        ax.grid(alpha=0.3)
    fig.tight_layout()
    figure = out / f"{name}.png"
    fig.savefig(figure, dpi=120)
    plt.close(fig)
    data = {
        "panels": {t: {k: v.tolist() for k, v in s.items()} for t, s in panels.items()},
        "reference_lines": {t: {k: v.tolist() for k, v in s.items()} for t, s in reference_lines.items()},
    }
    (out / f"{name}.json").write_text(json.dumps(data))

    for title, series in panels.items():
        table = Table(title=f"{ylabel}: {title}")
        table.add_column("")
        for t in shown_steps:
            table.add_column(f"t={t}")
        rows = {**series, **{f"{k} (analytic)": v for k, v in reference_lines.get(title, {}).items()}}
        for label, values in rows.items():
            table.add_row(label, *[f"{values[t]:.2e}" if t < len(values) else "-" for t in shown_steps])
        console.print(table)
    console.print(f"figure {figure}, data {out / f'{name}.json'}")
    return figure
