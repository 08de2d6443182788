"""The cost of one V-trace update as training runs it, and apart from it acting (the agent and the
environments over the rollout) and the gradient of the loss; measured with this checkout's code or,
in fresh processes, beside another revision's (``memrl bench htm-agents --baseline``)."""

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

    @staticmethod
    def columns(baseline: str | None = None) -> tuple[str, ...]:
        """The column names of ``cells``, with a baseline revision's two beside them."""
        return ("steps", "update", "acting", "gradient", "steps/s") + (
            (f"update at {baseline}", "speed-up") if baseline else ()
        )

    def cells(self, baseline: UpdateCost | None = None) -> list[str]:
        """The table cells of this cost (steps, update, acting, gradient, steps/s) and, beside a
        baseline revision's, its update and the speed-up."""
        cells = [
            str(self.steps),
            f"{self.update_s:.3f}",
            f"{self.acting_s:.3f}",
            f"{self.gradient_s:.3f}",
            f"{self.steps / self.update_s:,.0f}",
        ]
        return cells + ([f"{baseline.update_s:.3f}", f"{baseline.update_s / self.update_s:.2f}"] if baseline else [])


def best_seconds(function, *args, repeats: int) -> float:
    """The fastest of ``repeats`` calls of the compiled ``function`` (compiled and run once first)."""
    jax.block_until_ready(function(*args))
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(function(*args))
        times.append(time.perf_counter() - start)
    return min(times)


def update_cost(config, repeats: int = 3, updates: int = 2) -> UpdateCost:
    """The cost of one update of ``config``'s V-trace learner and of its two main parts, averaged
    over ``updates`` consecutive updates from the start (a core whose cost changes over an episode,
    EPN's planner on the rows written so far, needs an episode's worth)."""
    learner = Impala(config)
    runner = learner.init(jax.random.PRNGKey(0))
    update_s = best_seconds(jax.jit(lambda r: learner.run(r, updates)), runner, repeats=repeats) / updates
    rollout = jax.jit(lambda r: learner.rollout(r, r.params))
    gradient = jax.jit(lambda params, segment: jax.grad(learner._loss, has_aux=True)(params, segment))
    acting_s = gradient_s = 0.0
    for _ in range(updates):  # the rollouts of those updates (acting with the initial parameters)
        acting_s += best_seconds(rollout, runner, repeats=repeats) / updates
        next_runner, segment = rollout(runner)
        gradient_s += best_seconds(gradient, runner.params, segment, repeats=repeats) / updates
        runner = next_runner
    return UpdateCost(config.steps_per_update, update_s, acting_s, gradient_s)


# what a fresh process runs to measure one experiment run's update with the code it imports: argument
# [experiment, run, reconstruction weight, updates]; revisions before this module kept update_cost in
# htm_agents, and those before its ``updates`` measured two updates (no core's cost changed over an
# episode before EPN's planner skipped unwritten rows)
UPDATE_COST_SCRIPT = """
import dataclasses, json, sys
from memrl.experiments import get
try:
    from memrl.bench.update_cost import update_cost
except ImportError:
    from memrl.bench.htm_agents import update_cost
experiment, run, coef, updates = json.loads(sys.argv[1])
config = dataclasses.replace(get(experiment, "cpu").runs[run], reconstruction_coef=coef)
try:
    cost = update_cost(config, updates=updates)
except TypeError:
    cost = update_cost(config)
print(json.dumps(cost._asdict()))
"""


def update_costs_beside(
    baseline: Path, experiment: str, run: str, reconstruction_coef: float, updates: int = 2
) -> tuple[UpdateCost, UpdateCost]:
    """The update cost (over ``updates`` updates) of ``experiment``'s cpu-preset ``run`` (at
    ``reconstruction_coef``) with this checkout's code and with the code in ``baseline``, each in a
    fresh process, the two in turn."""
    argument = [experiment, run, reconstruction_coef, updates]
    ours = UpdateCost(**run_script(CHECKOUT_SOURCE, UPDATE_COST_SCRIPT, argument))
    return ours, UpdateCost(**run_script(baseline, UPDATE_COST_SCRIPT, argument))
