"""Where one V-trace update of HTM's image agents spends its time: the whole update, and apart from
it acting (the agent and the environments over the rollout) and the gradient of the loss (conv
encoder, memory, heads and, at Table 1's weight, the reconstruction decoder), for the agents of the
``cpu`` presets of ``htm-pvm`` and ``htm-ballet``, with and without the reconstruction loss, beside
the LSTM agent of the same experiment."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from rich.table import Table

from memrl.bench.update_cost import UpdateCost, update_cost, update_costs_beside
from memrl.console import console
from memrl.experiments import get

PROFILED_RUNS = (
    ("htm-pvm", "pvm/htm"),
    ("htm-pvm", "pvm/lstm"),
    ("htm-ballet", "mixed/htm"),
    ("htm-ballet", "mixed/lstm"),
)


def profiled_configs():
    """(experiment/run, "with" or "without" reconstruction, its reconstruction weight, the config) of
    every profiled run."""
    for experiment, run in PROFILED_RUNS:
        config = get(experiment, "cpu").runs[run]
        for label, coef in (("with", config.reconstruction_coef), ("without", 0.0)):
            yield f"{experiment} {run}", label, coef, dataclasses.replace(config, reconstruction_coef=coef)


def htm_agent_rows(repeats: int = 3) -> list[tuple[str, str, UpdateCost]]:
    """(experiment/run, "with" or "without" reconstruction, cost) for every profiled run."""
    return [(name, label, update_cost(config, repeats)) for name, label, _, config in profiled_configs()]


def htm_agent_rows_beside(baseline: Path) -> list[tuple[str, str, UpdateCost, UpdateCost]]:
    """(experiment/run, reconstruction, cost with this checkout's code, cost with the code in
    ``baseline``) for every profiled run, each measured in a fresh process, the two in turn."""
    rows = []
    for name, label, coef, _ in profiled_configs():
        ours, theirs = update_costs_beside(baseline, *name.split(" "), reconstruction_coef=coef)
        rows.append((name, label, ours, theirs))
    return rows


def htm_agents_table(baseline: str | None = None, baseline_source: Path | None = None) -> None:
    """One V-trace update of HTM's image agents, and its acting and gradient measured apart; with a
    baseline revision, the update with that revision's code beside it."""
    title = (
        "One V-trace update of HTM's image agents (cpu presets of htm-pvm and htm-ballet), seconds; acting and the gradient are "
        "compiled apart, so they add up to more than the update, whose scan fuses them"
    )
    if baseline_source is None:
        rows = [(run, label, cost, None) for run, label, cost in htm_agent_rows()]
    else:
        rows = htm_agent_rows_beside(baseline_source)
        title += f"; each run in a fresh process, this checkout and then revision {baseline}"
    table = Table(title=title)
    for column in ("run", "recon.", *UpdateCost.columns(baseline if baseline_source else None)):
        table.add_column(column)
    for run, label, cost, base in rows:
        table.add_row(run.split(" ")[-1], label, *cost.cells(base))
    console.print(table)
