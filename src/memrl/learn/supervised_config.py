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
    stages: tuple[str, ...] = ()
    """curriculum stages, trained in order before the task as configured, each "UPDATES key=value ...":
    UPDATES updates with these task settings in place of those in ``task_args``; e.g. "2000 direct_fraction=1.0"
    "28000 stored_chains=2". A stage must keep the trials' shapes (for pai: not num_chains or chain_length)"""
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
            MODELS[self.core](**self.core_args)
        except TypeError as err:
            raise ValueError(str(err)) from None
        self.check_ranges()
        if self.total_steps < self.batch_size:
            raise ValueError(f"total_steps ({self.total_steps}) is less than one batch ({self.batch_size})")
        shape = jax.eval_shape(lambda: task.sample(jax.random.PRNGKey(0), 2))
        for text, stage_task in zip(self.stages, self.stage_tasks()):
            if jax.eval_shape(lambda t=stage_task: t.sample(jax.random.PRNGKey(0), 2)) != shape:
                raise ValueError(
                    f"stage {text!r} changes the shapes of the trials; a stage may only change settings that keep "
                    "them (for pai: direct_fraction or stored_chains, not num_chains or chain_length)"
                )
        staged = sum(updates for updates, _ in self.curriculum)
        if self.stages and staged >= self.num_updates:
            raise ValueError(f"the stages take {staged} of the run's {self.num_updates} updates; the task as configured would never be trained")

    @property
    def curriculum(self) -> tuple[tuple[int, dict[str, int | float | bool | str]], ...]:
        """The stages as (updates, task settings that replace those of ``task_args``)."""
        return tuple(parse_stage(text) for text in self.stages)

    def stage_tasks(self) -> tuple:
        """The task of each stage: ``task_args`` with the stage's settings in their place."""
        from memrl import tasks

        made = []
        for text, (_, settings) in zip(self.stages, self.curriculum):
            try:
                made.append(tasks.make(self.task, **(self.task_args | settings)))
            except (TypeError, ValueError) as err:
                raise ValueError(f"stage {text!r}: {err}") from None
        return tuple(made)

    @classmethod
    def from_dict(cls, data: dict):
        """As ``ConfigRecord.from_dict``; a record from before the stages (with ``warmup_updates`` and
        ``warmup_task_args``) becomes the same run with one stage."""
        data = dict(data)
        if "warmup_updates" in data:
            updates, settings = data.pop("warmup_updates"), data.pop("warmup_task_args", {})
            if updates:
                data["stages"] = [" ".join([str(updates), *(f"{key}={value}" for key, value in settings.items())])]
        return super().from_dict(data)

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


def parse_stage(text: str) -> tuple[int, dict[str, int | float | bool | str]]:
    """ "2000 direct_fraction=1.0 stored_chains=2" -> (2000, {"direct_fraction": 1.0, "stored_chains": 2}).
    Values are read as the command line reads task settings: True/False, an integer, a float, else text."""
    usage = f"a stage is written 'UPDATES key=value ...' (e.g. '2000 direct_fraction=1.0'), got {text!r}"
    words = text.split()
    if not words or not words[0].isdigit() or int(words[0]) < 1:
        raise ValueError(f"{usage}: UPDATES must be a positive integer")
    settings = {}
    for word in words[1:]:
        key, sep, value = word.partition("=")
        if not sep or not key or not value:
            raise ValueError(f"{usage}: {word!r} is not key=value")
        if key in settings:
            raise ValueError(f"{usage}: {key!r} is set twice")
        settings[key] = _setting_value(value)
    return int(words[0]), settings


def _setting_value(text: str) -> int | float | bool | str:
    if text in ("True", "False"):
        return text == "True"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text
