"""Chunks of updates, the acting of each update beside the learning of the one before where a run has
a policy lag.

With ``policy_lag`` L ≥ 1 the actor of update k+1 uses parameters that exist before update k has
learned, and learning changes nothing else that acting reads (``ActorCriticLearner.advanced``). So
update k+1's acting half (``act``: the rollout, with its environment steps, which a ``gymnasium/<id>``
environment takes on the host) and update k's learning half (``learn``) are independent, and
``Pipeline`` runs them at once, each a compiled program called from its own thread: XLA runs one
program's operations one after another, but two programs from two threads side by side. The
numbers are those of the learner's ``run`` (a scan of ``update``), as tests/run/test_pipeline.py
checks. It pays where the process has a second core (``launch.run_jobs`` gives one to a run's last
seeds when a core is free); with L = 0 a chunk is one compiled scan of updates.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import jax
import numpy as np


class Pipeline:
    """``n`` updates of a runner batched over seeds, acting for update k+1 while update k learns."""

    def __init__(self, learner):
        self.act = jax.jit(jax.vmap(learner.act))
        self.learn = jax.jit(jax.vmap(learner.learn))
        self.advanced = jax.jit(jax.vmap(learner.advanced))
        self.actor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memrl-actor")

    def acted(self, runner):
        return jax.block_until_ready(self.act(runner))  # here, in the actor's thread, not later in the caller's

    def __call__(self, runner, n: int):
        """(runner, metrics stacked [seeds, n]), as ``jax.vmap(lambda r: learner.run(r, n))`` returns them."""
        runner, segment, key = self.acted(runner)
        metrics = []
        for update in range(n):
            following = self.actor.submit(self.acted, self.advanced(runner)) if update < n - 1 else None
            learned, update_metrics = jax.block_until_ready(self.learn(runner, segment, key))
            metrics.append(update_metrics)
            if following is None:
                runner = learned
            else:
                acted, segment, key = following.result()
                runner = acted.replace(params=learned.params, opt_state=learned.opt_state)
        return runner, jax.tree.map(lambda *each: np.stack(each, axis=1), *metrics)


def chunk_runner(learner, config):
    """A function (runner, n) -> (runner, metrics [seeds, n]) running ``n`` updates of a runner batched
    over seeds: a ``Pipeline`` where the run has a policy lag, else one compiled scan per ``n``."""
    if getattr(config, "policy_lag", 0) > 0:
        return Pipeline(learner)
    compiled = {}

    def scanned(runner, n: int):
        if n not in compiled:
            compiled[n] = jax.jit(jax.vmap(lambda r: learner.run(r, n)))
        return compiled[n](runner)

    return scanned
