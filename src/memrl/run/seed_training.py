"""Training seeds in this process: chunked, checkpointed training of a group of seeds vmapped
together, resuming from their checkpoints, writing metrics, TensorBoard or W&B rows and a checkpoint
after every chunk. A worker process (``worker.py``) runs it for its job; ``launch.py`` starts the
workers."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import jax
import numpy as np

from memrl.learn.learners import learner_for
from memrl.learn.run_config import ConfigRecord
from memrl.run.devices import check_devices, shard_envs
from memrl.run.final_agents import starting_params
from memrl.run.folder import RunFolder
from memrl.run.hosts import owns_folder, to_host
from memrl.run.pipeline import chunk_runner
from memrl.run.tensorboard import open_writer, write_rows
from memrl.run.wandb_export import log_rows, open_live_run


def _value(x: np.generic) -> int | float | None:
    """A metric as JSON: integers stay integers, NaN (nothing measured in that update) is None."""
    if np.issubdtype(x.dtype, np.integer):
        return int(x)
    return None if np.isnan(x) else float(x)


TRAINING_LOSSES = ("loss", "policy_loss", "value_loss", "reconstruction_loss")
"""metrics that every update measures (held-out ``test_`` metrics are NaN where not measured)"""


def check_finite_losses(metrics: dict, seeds: Sequence[int], updates_before: int) -> None:
    """Raise FloatingPointError naming the loss, the update and the seed if a chunk's stacked
    metrics [seeds, updates] hold a NaN or inf loss (the chunk is then neither logged nor saved)."""
    for name in TRAINING_LOSSES:
        if name in metrics:
            values = np.asarray(metrics[name])
            bad = np.argwhere(~np.isfinite(values))
            if len(bad):
                seed_index, update = bad[0]
                raise FloatingPointError(
                    f"{name} is {values[seed_index, update]} at update {updates_before + update + 1} of seed {seeds[seed_index]}: the run "
                    f"stopped, its checkpoint and metrics stay at update {updates_before} (try a lower lr or max_grad_norm)"
                )


def _rows(metrics: dict, index: int, wall_time: float) -> list[dict]:
    """Per-update rows of seed ``index`` from a chunk's stacked metrics [seeds, updates]."""
    host = {k: np.asarray(v)[index] for k, v in metrics.items()}
    n = len(next(iter(host.values())))
    return [{**{k: _value(v[u]) for k, v in host.items()}, "wall_time": wall_time} for u in range(n)]


def train_seeds(
    config: ConfigRecord,
    folder: RunFolder,
    seeds: Sequence[int],
    on_chunk: Callable[[int], None] | None = None,
    tensorboard: bool = False,
    devices: int = 1,
    wandb: bool = False,
):
    """Train ``seeds`` of ``config`` (vmapped together; their environments split over ``devices``
    local devices of every process of the run), resuming from their checkpoints, writing metrics
    (and, with ``tensorboard``, TensorBoard scalars; with ``wandb``, a W&B run per seed) and a checkpoint after every chunk: process 0
    writes, the others train their share. ``on_chunk(steps_done_per_seed)`` reports."""
    check_devices(devices, config, jax.process_count())
    owner = owns_folder()
    writers = {seed: open_writer(folder.seed_dir(seed)) for seed in seeds} if tensorboard and owner else {}
    live = {seed: open_live_run(folder, config, seed) for seed in seeds} if wandb and owner else {}
    trainer = learner_for(config)
    template = trainer.init(jax.random.PRNGKey(0))
    fresh = [seed for seed in seeds if not folder.checkpoint_path(seed).exists()]
    sources = starting_params(config, fresh) if config.init_params and fresh else {}
    runners = []
    for seed in seeds:
        runner = folder.load_checkpoint(seed, template)
        if runner is None:
            runner = trainer.init(jax.random.PRNGKey(seed), sources.get(seed))
        if owner:
            folder.truncate_metrics(seed, int(runner.update))
        runners.append(runner)
    done = int(runners[0].update)
    if any(int(r.update) != done for r in runners):
        raise RuntimeError("seeds of one job must be at the same update to be trained together")
    batched = jax.tree.map(lambda *xs: np.stack(xs), *runners)
    if devices * jax.process_count() > 1:
        batched = shard_envs(batched, devices)
    run_chunk = chunk_runner(trainer, config)
    start = time.time()
    if on_chunk:
        on_chunk(done * config.steps_per_update)
    try:
        while done < config.num_updates:
            n = min(config.updates_per_chunk, config.num_updates - done)
            chunk_start = time.time()
            batched, metrics = run_chunk(batched, n)
            metrics = to_host(metrics)
            check_finite_losses(metrics, seeds, done)
            done += n
            elapsed, chunk_time = time.time() - start, time.time() - chunk_start
            host = to_host(batched)  # with several processes a collective: every process takes part
            for i, seed in enumerate(seeds if owner else ()):
                rows = _rows(metrics, i, elapsed)
                folder.append_metrics(seed, rows)
                if writers:
                    write_rows(
                        writers[seed],
                        rows,
                        done - n + 1,
                        config.steps_per_update,
                        n * config.steps_per_update / chunk_time,
                    )
                if live:
                    log_rows(live[seed], rows, done - n + 1, config.steps_per_update)
                runner = jax.tree.map(lambda x, i=i: x[i], host)
                if config.keep_every and done % config.keep_every == 0:
                    folder.keep_params(seed, done, runner.params)
                folder.save_checkpoint(seed, runner)
            if on_chunk:
                on_chunk(done * config.steps_per_update)
    finally:  # a writer's last events reach its file only when it closes
        for writer in writers.values():
            writer.close()
        for run in live.values():
            run.finish()
