"""Learning curves (each run's score metric against its steps: return against environment steps,
accuracy against sequences) from run folders."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402
import numpy as np  # noqa: E402

from memrl.run.folder import RunFolder  # noqa: E402


def seed_curves(folder: RunFolder) -> list[tuple[np.ndarray, np.ndarray]]:
    """(steps, score) per seed, skipping updates that measured no score (no episode ended, or NaN)."""
    config = folder.load_config()
    curves = []
    for seed in config.seed_list():
        rows = [r for r in folder.read_metrics(seed) if r.get(config.score_metric) is not None]
        rows = [r for r in rows if not np.isnan(r[config.score_metric])]
        if rows:
            curves.append(
                (np.array([r[config.step_metric] for r in rows]), np.array([r[config.score_metric] for r in rows]))
            )
    return curves


def smooth(values: np.ndarray, window: int) -> np.ndarray:
    """Trailing moving average (shorter at the start)."""
    cumulative = np.cumsum(np.insert(values, 0, 0.0))
    idx = np.arange(1, len(values) + 1)
    lo = np.maximum(0, idx - window)
    return (cumulative[idx] - cumulative[lo]) / (idx - lo)


def plot_runs(ax, runs: dict[str, RunFolder], window: int = 5) -> None:
    """Mean over seeds (line) and min..max over seeds (band) of each run's smoothed curve."""
    configs = [folder.load_config() for folder in runs.values()]
    for label, folder in runs.items():
        curves = seed_curves(folder)
        if not curves:
            continue
        length = min(len(c[0]) for c in curves)
        steps = curves[0][0][:length]
        returns = np.stack([smooth(c[1][:length], window) for c in curves])
        (line,) = ax.plot(
            steps, returns.mean(0), label=f"{label} ({len(curves)} seed{'' if len(curves) == 1 else 's'})"
        )
        ax.fill_between(steps, returns.min(0), returns.max(0), color=line.get_color(), alpha=0.2)
    ax.xaxis.set_major_formatter(matplotlib.ticker.EngFormatter(sep=""))
    ax.set_xlabel(" / ".join(dict.fromkeys(c.step_label for c in configs)))
    score = " / ".join(dict.fromkeys(c.score_label for c in configs))
    ax.set_ylabel(f"{score} (trailing mean of {window} updates)" if window > 1 else score)
    ax.grid(alpha=0.3)


def save_curves(
    path: Path, panels: dict[str, dict[str, RunFolder]], optima: dict[str, Sequence[tuple[str, float]]] | None = None
) -> Path:
    """One panel per title, each with its runs; ``optima`` draws labelled horizontal lines."""
    fig, axes = plt.subplots(1, len(panels), figsize=(5.5 * len(panels), 4), squeeze=False)
    for ax, (title, runs) in zip(axes[0], panels.items()):
        plot_runs(ax, runs)
        for label, value in (optima or {}).get(title, ()):
            ax.axhline(value, color="gray", linestyle="--", linewidth=1)
            ax.annotate(label, (0, value), xycoords=("axes fraction", "data"), fontsize=7, color="gray", va="bottom")
        ax.set_title(title)
        if ax.get_legend_handles_labels()[0]:  # a run without a measured point draws no line
            ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
