"""One V-trace update of the EPN paper's agents at the ``cpu`` preset of ``epn-memory-planning``
(issue 50: the planner fast enough to train on a CPU), beside the LSTM agent, optionally with
another revision's code beside each."""

from __future__ import annotations

from pathlib import Path

from memrl.bench.update_cost import UpdateCost, update_cost, update_costs_beside
from memrl.experiments import get

EPN_RUNS = ("4x4/epn", "4x4/lstm")
EXPERIMENT = "epn-memory-planning"


def epn_agent_rows(baseline: Path | None = None) -> list[tuple[str, UpdateCost, UpdateCost | None]]:
    """(run, cost, cost with the code in ``baseline`` or None) for each of ``EPN_RUNS``."""
    if baseline is None:
        return [(run, update_cost(get(EXPERIMENT, "cpu").runs[run]), None) for run in EPN_RUNS]
    return [(run, *update_costs_beside(baseline, EXPERIMENT, run, 0.0)) for run in EPN_RUNS]
