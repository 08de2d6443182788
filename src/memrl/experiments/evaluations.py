"""Evaluations that experiments run on their final agents after training (``Experiment.evaluation``),
and the expectations that read them."""

from __future__ import annotations

import numpy as np

from memrl.experiments.base import Expectation
from memrl.run.final_agents import final_params, held_out_accuracy


def fraction_correct_by_level(folders: dict, levels, right_per_episode, title: str) -> dict:
    """{"fraction_correct": run -> level -> {"correct", "episodes"}}, printed as a table:
    ``right_per_episode(config, params, level)`` gives, for the final agents of a run, one 0/1
    value per finished episode on ``level``."""
    from rich.table import Table

    from memrl.console import console

    rows = {}
    for run, folder in folders.items():
        config, params = folder.load_config(), final_params(folder)
        rows[run] = {}
        for level in levels:
            right = np.asarray(right_per_episode(config, params, level), float)
            if right.size:
                rows[run][level] = {"correct": float(right.mean()), "episodes": int(right.size)}
    table = Table(title=title)
    table.add_column("run")
    for level in levels:
        table.add_column(level)
    for run, by_level in rows.items():
        table.add_row(run, *[f"{by_level[lv]['correct']:.2f} ({by_level[lv]['episodes']})" if lv in by_level else "-" for lv in levels])
    console.print(table)
    return {"fraction_correct": rows}


def held_out_evaluation(num_sequences: int, batch_size: int = 1280):
    """An experiment's ``evaluation``: each run's final accuracies on ``num_sequences`` held-out
    sequences in batches of ``batch_size`` (``held_out_accuracy``), mean over seeds, as ``{"held_out": {run: {name: value}}}``;
    prints a table."""
    from rich.table import Table

    from memrl.console import console

    def evaluate(folders: dict, out) -> dict:
        rows = {}
        for run, folder in folders.items():
            per_seed = held_out_accuracy(folder, num_sequences, batch_size)
            if per_seed:
                rows[run] = {name: float(np.mean([s[name] for s in per_seed])) for name in per_seed[0]} | {"seeds": len(per_seed)}
        table = Table(title=f"final models on {num_sequences:,} held-out sequences (mean over seeds)")
        for column in ("run", "accuracy", "token accuracy", "sequence accuracy", "seeds"):
            table.add_column(column)
        for run, row in rows.items():
            table.add_row(run, *(f"{row[name]:.3f}" for name in ("accuracy", "token_accuracy", "sequence_accuracy")), str(row["seeds"]))
        console.print(table)
        return {"held_out": rows}

    return evaluate


def held_out_expectation(run: str, op: str, threshold: float | None, why: str, against: str = "", central: bool = False) -> Expectation:
    """An expectation on the final model's held-out accuracy from ``held_out_evaluation``."""
    return Expectation(run, op, threshold, why, evaluated=("held_out", "accuracy"), against=against, central=central)
