"""EPN's training update with the planner on memory prefixes against the whole memory, seeds vmapped in
one program as a GPU trains them: what ``EPN(prefixes=...)`` saves where ``memrl bench`` (one core, one
seed, fresh processes) does not look (docs/results.md, training throughput of the EPN agent).

    python benchmarks/epn_planner_prefixes.py PRESET SEEDS UPDATES

PRESET is an ``epn-memory-planning`` preset (``paper`` on a GPU); each measurement runs UPDATES
updates (a multiple of the updates per episode) after a compiled first call, the faster of two.
"""

import dataclasses
import sys
import time

import jax

from memrl.bench.update_cost import best_seconds
from memrl.experiments import get
from memrl.learn.impala import Impala


def updates_per_second(config, seeds: int, updates: int) -> tuple[float, float]:
    """(compile and first call seconds, seconds per update) of ``seeds`` vmapped learners."""
    learner = Impala(config)
    runners = jax.vmap(learner.init)(jax.random.split(jax.random.PRNGKey(0), seeds))
    run = jax.jit(jax.vmap(lambda runner: learner.run(runner, updates)))
    start = time.perf_counter()
    runners = jax.block_until_ready(run(runners)[0])
    compiled = time.perf_counter() - start
    return compiled, best_seconds(run, runners, repeats=2) / updates


def main(preset: str, seeds: int, updates: int) -> None:
    runs = get("epn-memory-planning", preset).runs
    base = runs[
        next(name for name in runs if name.endswith("/epn"))
    ]  # the all-to-all planner (4x4 in the paper preset, 3x3 in the cpu one)
    for prefixes in (5, 1):
        config = dataclasses.replace(base, core=base.core.clone(prefixes=prefixes))
        compiled, seconds = updates_per_second(config, seeds, updates)
        print(
            f"prefixes {prefixes}: compile and first call {compiled:.1f} s, {1000 * seconds:.1f} ms per update of "
            f"{seeds} x {config.steps_per_update} steps, {seeds * config.steps_per_update / seconds:,.0f} env steps/s on {jax.devices()[0].platform}"
        )


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
