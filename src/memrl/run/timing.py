"""The training throughput of a learner, measured after its compile (the bench's tables and the
memory benchmark's throughput column)."""

from __future__ import annotations

import time

import jax


def time_training(learner, updates: int) -> tuple[float, float]:
    """(compile seconds, steps/s after compile) of ``updates`` updates of ``learner`` in one jit (steps:
    the learner's, environment steps or sequences)."""
    run = jax.jit(lambda r: learner.run(r, updates))
    runner = learner.init(jax.random.PRNGKey(0))
    start = time.perf_counter()
    runner, _ = jax.block_until_ready(run(runner))
    compile_s = time.perf_counter() - start
    start = time.perf_counter()
    jax.block_until_ready(run(runner))
    return compile_s, updates * learner.config.steps_per_update / (time.perf_counter() - start)
