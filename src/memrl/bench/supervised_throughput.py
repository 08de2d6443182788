"""Supervised training throughput (sequences/s and tokens/s) of cores on copying and Nth Farthest."""

from __future__ import annotations

import jax
from rich.table import Table

from memrl.console import console
from memrl.run.timing import time_training

SUPERVISED_SHAPES = {
    "copying": dict(task_settings={"gap": 100}, batch_size=100),  # TLB's batch, gap 100: 121 steps
    "nth-farthest": dict(
        task_settings={}, batch_size=1600, head_widths=(256, 256, 256, 256)
    ),  # RMC's batch and MLP, 8 x 16
}


def measure_supervised(task: str, core: str, updates: int) -> tuple[float, float, float]:
    """(compile seconds, sequences/s, tokens/s after compile) of ``updates`` supervised updates."""
    from memrl import cores, tasks
    from memrl.learn.supervised import SupervisedLearner
    from memrl.learn.supervised_config import SupervisedConfig

    shapes = dict(SUPERVISED_SHAPES[task])
    made = tasks.make(task, **shapes.pop("task_settings"))
    config = SupervisedConfig(task=made, core=cores.make(core), total_steps=updates * shapes["batch_size"], **shapes)
    learner = SupervisedLearner(config)
    compile_s, sequences_per_s = time_training(learner, updates)
    length = jax.eval_shape(learner.task.sample, jax.random.PRNGKey(0)).target_mask.shape[0]
    return compile_s, sequences_per_s, sequences_per_s * length


def supervised_table(updates: int, cores: tuple[str, ...] = ("lstm", "gtrxl", "rmc", "dnc")) -> None:
    """Supervised throughput of ``cores`` on each task of ``SUPERVISED_SHAPES``."""
    table = Table(title=f"Supervised training, cores at their defaults, embedding 64, {jax.default_backend()}")
    for column in ("task", "core", "batch", "compile s", "sequences/s", "tokens/s"):
        table.add_column(column)
    for task, shapes in SUPERVISED_SHAPES.items():
        for core in cores:
            compile_s, sequences, tokens = measure_supervised(task, core, updates)
            table.add_row(
                task, core, str(shapes["batch_size"]), f"{compile_s:.1f}", f"{sequences:,.0f}", f"{tokens:,.0f}"
            )
    console.print(table)
