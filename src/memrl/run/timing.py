"""The training throughput of a learner, measured after its compile (the bench's tables and the
memory benchmark's throughput column)."""

from __future__ import annotations

import contextlib
import os
import time

import jax

from memrl.run.pipeline import Pipeline


def time_training(learner, updates: int, before_timing=lambda: None, pipelined: bool = False) -> tuple[float, float]:
    """(compile seconds, steps/s after compile) of ``updates`` updates of ``learner`` in one jit, or with
    ``pipelined`` as a run with a policy lag trains them (``pipeline.Pipeline``, one seed); steps are the
    learner's, environment steps or sequences. ``before_timing`` is called just before the timed run."""
    if pipelined:
        pipeline = Pipeline(learner)
        run = lambda r: pipeline(r, updates)
        runner = jax.vmap(learner.init)(jax.random.PRNGKey(0)[None])
    else:
        run = jax.jit(lambda r: learner.run(r, updates))
        runner = learner.init(jax.random.PRNGKey(0))
    start = time.perf_counter()
    runner, _ = jax.block_until_ready(run(runner))
    compile_s = time.perf_counter() - start
    before_timing()
    start = time.perf_counter()
    jax.block_until_ready(run(runner))
    return compile_s, updates * learner.config.steps_per_update / (time.perf_counter() - start)


@contextlib.contextmanager
def on_one_core():
    """This process on one CPU core while inside, where the system lets a process choose (Linux):
    its XLA threads then share that core, so a rate measured inside is a rate per core."""
    if not hasattr(os, "sched_setaffinity"):
        yield
        return
    allowed = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {min(allowed)})
    try:
        yield
    finally:
        os.sched_setaffinity(0, allowed)
