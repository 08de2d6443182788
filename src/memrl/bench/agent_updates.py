"""One V-trace update of the agents of an experiment's ``cpu`` preset, beside the LSTM agent,
optionally with another revision's code beside each: the EPN agents of ``epn-memory-planning``
(issue 50: a planner fast enough to train on a CPU) and the RMC agents of ``rmc-pacman`` (issue 49:
the RMC agent's throughput)."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from rich.table import Table

from memrl.bench.update_cost import UpdateCost, update_cost, update_costs_beside
from memrl.console import console
from memrl.experiments import get


class AgentProfile(NamedTuple):
    """The runs of an experiment's cpu preset whose update ``memrl bench`` profiles."""

    experiment: str
    runs: tuple[str, ...]
    updates: int = 2
    """consecutive updates from the start that each figure averages"""


AGENT_PROFILES = {
    "epn": AgentProfile(
        "epn-memory-planning", ("3x3/epn", "3x3/lstm"), updates=5
    ),  # a 100-step episode of 20-step unrolls (3x3 since version 4: a baseline revision needs these runs)
    "rmc": AgentProfile(
        "rmc-pacman", ("viewport/rmc", "viewport/lstm")
    ),  # the cpu preset's views (v3: the viewport only)
}


def agent_update_rows(
    profile: AgentProfile, baseline: Path | None = None
) -> list[tuple[str, UpdateCost, UpdateCost | None]]:
    """(run, cost, cost with the code in ``baseline`` or None) for each of ``profile``'s runs."""
    if baseline is None:
        return [
            (run, update_cost(get(profile.experiment, "cpu").runs[run], updates=profile.updates), None)
            for run in profile.runs
        ]
    return [
        (run, *update_costs_beside(baseline, profile.experiment, run, 0.0, profile.updates)) for run in profile.runs
    ]


def agent_updates_table(name: str, baseline: str | None = None, baseline_source: Path | None = None) -> None:
    """One V-trace update of the cpu-preset agents of ``AGENT_PROFILES[name]``; with a baseline
    revision, the update with that revision's code beside it."""
    from memrl.experiments import get

    profile = AGENT_PROFILES[name]
    config = get(profile.experiment, "cpu").runs[profile.runs[0]]
    title = f"One V-trace update of {profile.experiment}'s agents (cpu preset: {config.num_envs} envs x {config.rollout_len} steps), seconds, the mean of the first {profile.updates}"
    if baseline_source is not None:
        title += f"; each run in a fresh process, this checkout and then revision {baseline}"
    table = Table(title=title)
    for column in ("run", *UpdateCost.columns(baseline if baseline_source else None)):
        table.add_column(column)
    for run, cost, base in agent_update_rows(profile, baseline_source):
        table.add_row(run, *cost.cells(base))
    console.print(table)
