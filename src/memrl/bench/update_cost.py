"""The cost of one V-trace update as training runs it, and apart from it acting (the agent and the
environments over the rollout) and the gradient of the loss; measured with this checkout's code or,
in fresh processes, beside another revision's (``memrl bench --baseline``)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import NamedTuple

import jax

from memrl.bench.revisions import CHECKOUT_SOURCE, run_script
from memrl.learn.impala import Impala


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


# what a fresh process runs to measure one experiment run's update with the code it imports: argument
# [experiment, run, reconstruction weight]; revisions before this module kept update_cost in htm_agents
UPDATE_COST_SCRIPT = """
import dataclasses, json, sys
from memrl.experiments import get
try:
    from memrl.bench.update_cost import update_cost
except ImportError:
    from memrl.bench.htm_agents import update_cost
experiment, run, coef = json.loads(sys.argv[1])
config = dataclasses.replace(get(experiment, "cpu").runs[run], reconstruction_coef=coef)
print(json.dumps(update_cost(config)._asdict()))
"""


def update_costs_beside(baseline: Path, experiment: str, run: str, reconstruction_coef: float) -> tuple[UpdateCost, UpdateCost]:
    """The update cost of ``experiment``'s cpu-preset ``run`` (at ``reconstruction_coef``) with this
    checkout's code and with the code in ``baseline``, each in a fresh process, the two in turn."""
    argument = [experiment, run, reconstruction_coef]
    ours = UpdateCost(**run_script(CHECKOUT_SOURCE, UPDATE_COST_SCRIPT, argument))
    return ours, UpdateCost(**run_script(baseline, UPDATE_COST_SCRIPT, argument))
