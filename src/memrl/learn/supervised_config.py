"""Configuration of supervised runs on a sequence task of ``memrl.tasks`` (copying, Nth Farthest,
ListOps, Paired Associative Inference, ...)."""

from __future__ import annotations

import dataclasses
import functools
from typing import ClassVar

import jax
from flax import linen as nn

from memrl.learn.run_config import ConfigRecord, made_by_default
from memrl.settings import Count, NonNegative, NonNegativeInt, Positive, Widths
from memrl.tasks.base import SequenceTask


@dataclasses.dataclass(frozen=True, eq=False)  # equal when recorded alike: ConfigRecord.__eq__
class SupervisedConfig(ConfigRecord):
    """Minibatch training of a model on freshly sampled sequences with the masked sequence
    cross-entropy and Adam. Run folders count ``sequences`` trained on and report ``accuracy`` (the
    task's scoring, on each training batch) and, after every chunk, ``test_accuracy`` on a held-out batch."""

    learner: ClassVar[str] = "supervised"
    step_metric: ClassVar[str] = "sequences"
    step_label: ClassVar[str] = "sequences"
    score_metric: ClassVar[str] = "accuracy"
    score_label: ClassVar[str] = "accuracy (training batches)"
    final_metric: ClassVar[str] = "test_accuracy"
    final_label: ClassVar[str] = "final held-out accuracy"
    core: nn.Module = made_by_default("core", "lstm")
    """the sequence model's memory core, or a task model (htm-pai), as its registered name makes it
    (``cores.make("lstm", hidden=128)``; memrl list names them); config.json records it as
    ``{"kind": "lstm", "hidden": 128}``"""
    total_steps: Count = 1_000_000
    """sequences per seed"""
    lr: Positive = 3e-4
    """learning rate"""
    max_grad_norm: Positive | None = 1.0
    """clip of the global gradient norm (None: no clipping)"""
    updates_per_chunk: Count = 100
    """updates per compiled chunk; metrics, progress and checkpoints happen between chunks"""

    task: SequenceTask = made_by_default("task", "copying")
    """the sequence task, as its registered name makes it (``tasks.make("copying", gap=30)``; memrl
    list names them); config.json records it as ``{"kind": "copying", "gap": 30}``. Its batch size is
    the run's ``batch_size`` (the task's own is replaced)"""
    embed_dim: Count = 64
    """width of the sequence model's input embedding (token embedding or linear map)"""
    head_widths: Widths = ()
    """ReLU layers of the sequence model's per-step head, between the core and the readout (RMC's
    Nth Farthest takes 256 256 256 256)"""
    readout: str = "steps"
    """what the head reads: "steps" (each step's core output) or "state" (the mean of the core's final
    state vectors, TLB's image classifier; for tasks scored at their final step, e.g. digits)"""
    stages: tuple[str, ...] = ()
    """curriculum stages, trained in order before the task as configured, each "UPDATES key=value ...":
    UPDATES updates with these task settings in place of the task's own; e.g. "2000 direct_fraction=1.0"
    "28000 stored_chains=2". A stage must keep the trials' shapes (for pai: not num_chains or chain_length)"""
    unroll_length: NonNegativeInt = 0
    """steps per segment of truncated backpropagation through time: the sequence runs in segments of
    this many steps, each from the last one's carry with its gradient stopped, as RL agents train in
    unrolls (HTM's: 64-128 steps); 0: the whole sequence"""
    batch_size: Count = 32
    """sequences per update"""
    lr_warmup: NonNegativeInt = 0
    """updates over which the learning rate rises linearly from 0 to ``lr`` (TLB's ListOps: 1000)"""
    weight_decay: NonNegative = 0.0
    """decoupled weight decay: above 0, Adam becomes AdamW (TLB's image classification: 0.05)"""

    COMPONENTS: ClassVar[tuple[str, ...]] = ("core", "task")
    SET_BY_THE_RUN: ClassVar[dict[str, tuple[str, ...]]] = {"task": ("batch_size",)}

    def __post_init__(self):
        """The task draws the run's ``batch_size`` sequences per batch (the config owns the batch size:
        a task's own is replaced, as ``dataclasses.replace(config, batch_size=...)`` needs); then the
        checks (``validate``)."""
        task, batch_size = self.task, self.batch_size
        sized = isinstance(batch_size, int) and batch_size >= 1  # else validate refuses it
        if isinstance(task, SequenceTask) and sized and task.batch_size != batch_size:
            object.__setattr__(self, "task", task.with_batch_size(batch_size))
        self.validate()

    @classmethod
    def registries(cls, field: str) -> tuple:
        """A supervised run's core is a memory core or a task model; its task a registered task."""
        from memrl import cores, tasks
        from memrl.agents.supervised_models import TASK_MODELS

        return {"core": (cores.CORES, TASK_MODELS), "task": (tasks.TASKS,)}[field]

    @classmethod
    def made_from_record(cls, field: str, record: dict):
        """As ``ConfigRecord.made_from_record``; a task record holds no batch size (the run's ``batch_size``)."""
        if field == "task" and "batch_size" in record:
            raise ValueError("a task record holds no batch_size: the run's batch_size (--batch-size) gives it")
        return super().made_from_record(field, record)

    @property
    def task_name(self) -> str:
        """The registered name of the task, as tables, folder names and summaries say."""
        return self.name_of("task")

    def validate(self):
        """As ``ConfigRecord.validate``, and the task and the model: registered ones, stages that keep
        the batches' shapes and leave updates for the task itself."""
        from memrl.agents.supervised_models import TASK_MODELS

        super().validate()
        model_fields = ("embed_dim", "head_widths", "readout", "unroll_length")
        if self.registry_of("core", self.core) is TASK_MODELS and any(
            getattr(self, name) != getattr(SupervisedConfig, name) for name in model_fields
        ):
            raise ValueError(
                f"{', '.join(model_fields)} set the sequence model; the task model {self.core_name!r} has its own (--core.*)"
            )
        try:
            self.model  # noqa: B018 (built here, once: the learner takes it)
        except TypeError as err:
            raise ValueError(str(err)) from None
        if self.stages:
            shape = jax.eval_shape(self.task.sample, jax.random.PRNGKey(0))
            for text, stage_task in zip(self.stages, self.stage_tasks):
                if jax.eval_shape(stage_task.sample, jax.random.PRNGKey(0)) != shape:
                    raise ValueError(
                        f"stage {text!r} changes the shapes of the batches; a stage may only change settings that keep "
                        "them (for pai: direct_fraction or stored_chains, not num_chains or chain_length)"
                    )
        staged = sum(updates for updates, _ in self.curriculum)
        if self.stages and staged >= self.num_updates:
            raise ValueError(
                f"the stages take {staged} of the run's {self.num_updates} updates; the task as configured would never be trained"
            )
        return self

    @property
    def curriculum(self) -> tuple[tuple[int, dict[str, int | float | bool | str]], ...]:
        """The stages as (updates, task settings that replace the task's own)."""
        return tuple(parse_stage(text) for text in self.stages)

    @functools.cached_property
    def model(self):
        """The model the run trains (``make_model``), built once."""
        from memrl.agents.supervised_models import make_model

        return make_model(
            self.core, self.task_name, self.task, self.embed_dim, self.head_widths, self.readout, self.unroll_length
        )

    @functools.cached_property
    def stage_tasks(self) -> tuple:
        """The task of each stage: the task with the stage's settings in their place."""
        from memrl import tasks

        made = []
        for text, (_, settings) in zip(self.stages, self.curriculum):
            tasks.TASKS.check_settings(self.task_name, settings, f"--stages {text!r}")
            try:
                made.append(tasks.TASKS.changed(self.task, **settings))
            except (TypeError, ValueError) as err:
                raise ValueError(f"stage {text!r}: {err}") from None
        return tuple(made)

    @property
    def trained_on(self) -> str:
        return self.task_name

    @property
    def steps_per_update(self) -> int:
        """Sequences per update."""
        return self.batch_size


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
        settings[key] = setting_value(value)
    return int(words[0]), settings


def setting_value(text: str) -> int | float | bool | str:
    """A setting written as text, read as the command line reads one: True/False, an integer, a
    float, else the text."""
    if text in ("True", "False"):
        return text == "True"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text
