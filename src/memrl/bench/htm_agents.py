"""Where one V-trace update of HTM's image agents spends its time: the whole update, and apart from
it acting (the agent and the environments over the rollout) and the gradient of the loss (conv
encoder, memory, heads and, at Table 1's weight, the reconstruction decoder), for the agents of the
``cpu`` presets of ``htm-pvm`` and ``htm-ballet``, with and without the reconstruction loss, beside
the LSTM agent of the same experiment."""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import NamedTuple

import jax

from memrl.bench.revisions import CHECKOUT_SOURCE, run_script
from memrl.experiments import get
from memrl.learn.impala import Impala

PROFILED_RUNS = (("htm-pvm", "pvm/htm"), ("htm-pvm", "pvm/lstm"), ("htm-ballet", "mixed/htm"), ("htm-ballet", "mixed/lstm"))


class UpdateCost(NamedTuple):
    steps: int
    """environment steps per update"""
    update_s: float
    """one whole update, as training runs it (inside ``run``'s scan)"""
    acting_s: float
    """the rollout: acting and environment steps"""
    gradient_s: float
    """the gradient of the loss over the rollout"""


def best_seconds(function, *args, repeats: int) -> float:
    """The fastest of ``repeats`` calls of the compiled ``function`` (compiled and run once first)."""
    jax.block_until_ready(function(*args))
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(function(*args))
        times.append(time.perf_counter() - start)
    return min(times)


def update_cost(config, repeats: int = 3) -> UpdateCost:
    """The cost of one update of ``config``'s V-trace learner and of its two main parts."""
    learner = Impala(config)
    runner = learner.init(jax.random.PRNGKey(0))
    updates = 2
    update_s = best_seconds(jax.jit(lambda r: learner.run(r, updates)), runner, repeats=repeats) / updates
    rollout = jax.jit(lambda r: learner.rollout(r, r.params))
    acting_s = best_seconds(rollout, runner, repeats=repeats)
    _, segment = rollout(runner)
    gradient = jax.jit(lambda params, segment: jax.grad(learner._loss, has_aux=True)(params, segment))
    gradient_s = best_seconds(gradient, runner.params, segment, repeats=repeats)
    return UpdateCost(config.steps_per_update, update_s, acting_s, gradient_s)


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


# what a fresh process runs to measure one profiled run with the code it imports (any revision with
# ``update_cost``): argument [experiment, run, reconstruction weight]
UPDATE_COST_SCRIPT = """
import dataclasses, json, sys
from memrl.experiments import get
from memrl.bench.htm_agents import update_cost
experiment, run, coef = json.loads(sys.argv[1])
config = dataclasses.replace(get(experiment, "cpu").runs[run], reconstruction_coef=coef)
print(json.dumps(update_cost(config)._asdict()))
"""


def htm_agent_rows_beside(baseline: Path) -> list[tuple[str, str, UpdateCost, UpdateCost]]:
    """(experiment/run, reconstruction, cost with this checkout's code, cost with the code in
    ``baseline``) for every profiled run, each measured in a fresh process, the two in turn."""
    rows = []
    for name, label, coef, _ in profiled_configs():
        argument = [*name.split(" "), coef]
        ours = UpdateCost(**run_script(CHECKOUT_SOURCE, UPDATE_COST_SCRIPT, argument))
        theirs = UpdateCost(**run_script(baseline, UPDATE_COST_SCRIPT, argument))
        rows.append((name, label, ours, theirs))
    return rows
