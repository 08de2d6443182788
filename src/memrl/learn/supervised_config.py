"""Configuration of supervised runs on a task of ``memrl.tasks`` (e.g. Paired Associative Inference)."""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import jax

from memrl.learn.run_config import ConfigRecord


@dataclasses.dataclass(frozen=True)
class SupervisedConfig(ConfigRecord):
    """Minibatch training of a model on freshly sampled trials with softmax cross-entropy and Adam.

    A trial plays the part of an episode in the run folder's metrics: ``env_steps`` counts trials
    trained on and ``episode_return`` is the fraction of the batch answered right."""

    learner: ClassVar[str] = "supervised"

    task: str = "pai"
    """registered task name (see ``memrl list``)"""
    task_args: dict[str, int | float | bool | str] = dataclasses.field(default_factory=dict)
    core: str = "htm"
    """the memory model (``supervised.MODELS``)"""
    core_args: dict[str, int | float | bool | str] = dataclasses.field(default_factory=dict)
    warmup_updates: int = 0
    """updates at the start that train on the task with ``warmup_task_args`` (a curriculum stage)"""
    warmup_task_args: dict[str, int | float | bool | str] = dataclasses.field(default_factory=dict)
    """task settings that replace ``task_args`` during the warm-up, e.g. PAI's ``direct_fraction 1.0``;
    they must keep the trials' shapes"""
    seed: int = 0
    seeds: int = 1
    total_steps: int = 1_000_000
    """training trials per seed"""
    batch_size: int = 32
    lr: float = 3e-4
    max_grad_norm: float = 1.0
    updates_per_chunk: int = 100

    POSITIVE_INTS: ClassVar[tuple[str, ...]] = ("seeds", "total_steps", "batch_size", "updates_per_chunk")
    POSITIVE: ClassVar[tuple[str, ...]] = ("lr", "max_grad_norm")

    def __post_init__(self):
        from memrl import tasks
        from memrl.learn.supervised import MODELS

        if self.task not in tasks.names():
            raise ValueError(f"unknown task {self.task!r}; known: {', '.join(tasks.names())}")
        if self.core not in MODELS:
            raise ValueError(f"unknown supervised model {self.core!r}; known: {', '.join(MODELS)}")
        try:
            task = tasks.make(self.task, **self.task_args)
            warmup_task = tasks.make(self.task, **(self.task_args | self.warmup_task_args))
            MODELS[self.core](**self.core_args)
        except TypeError as err:
            raise ValueError(str(err)) from None
        self.check_ranges()
        if self.warmup_updates < 0:
            raise ValueError(f"warmup_updates must be >= 0, got {self.warmup_updates}")
        if self.warmup_task_args and not self.warmup_updates:
            raise ValueError("warmup_task_args is set but warmup_updates is 0; give the warm-up's length")
        shapes = [jax.eval_shape(lambda t=t: t.sample(jax.random.PRNGKey(0), 2)) for t in (task, warmup_task)]
        if shapes[0] != shapes[1]:
            raise ValueError(
                f"warmup_task_args {self.warmup_task_args} change the shapes of the trials; a warm-up may only "
                "change settings that keep them (for pai: direct_fraction, not num_chains or chain_length)"
            )
        if self.total_steps < self.batch_size:
            raise ValueError(f"total_steps ({self.total_steps}) is less than one batch ({self.batch_size})")

    @property
    def env(self) -> str:
        """The task, under the name run summaries and tables use for what a run trains on."""
        return self.task

    @property
    def steps_per_update(self) -> int:
        """Trials per update."""
        return self.batch_size

    @property
    def num_updates(self) -> int:
        return self.total_steps // self.batch_size
