"""The supervised sequence-task contract (docs/architecture.md) and the task registry.

A task is a frozen dataclass whose fields are its settings (``batch_size`` and everything else
that decides shapes among them), with

    batch = task.sample(key, split="train", state=None)   # SequenceBatch, time-major, pure and jittable

``split`` is "train" or "test": the held-out split, a seed stream (or stimulus pool, or bank)
disjoint from training's. A task with a curriculum that follows learning (Learning to Execute's
naive and combine) keeps it in ``state``, a pytree the learner carries: ``initial_state()``, and
``next_state(state, held_out_loss)`` after each held-out evaluation; other tasks keep None. A task states what its batches hold, so one sequence model and one loss serve them all:

- ``input_kind``: "tokens" (int ids < ``input_size``), "vectors" (float, ``input_size`` wide) or
  "trials" (a structured pytree that only a model written for the task reads, e.g. PAI's);
- ``output_kind``: "classes" (int targets < ``num_outputs``) or "bits" (``num_outputs`` 0/1 targets);
- ``scoring``: "token" (a sequence's score is its fraction of right targets) or "sequence" (a
  sequence is right only when every scored step is; its accuracy is exact match).
- ``scored_at_final_step``: true where only the last step of every sequence is scored (image
  classification), so the sequence model may read the answer from the core's final state.
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar, NamedTuple

import jax
import jax.numpy as jnp

from memrl.registry import ComponentRegistry

TASK_MODULES = (
    "babyai",
    "copying",
    "demonstrations",
    "digits",
    "language_model",
    "learn_to_execute",
    "listops",
    "nth_farthest",
    "paired_associative_inference",
    "tmaze_returns",
)
"""the modules of memrl's own tasks, each registering its names"""
TASKS: ComponentRegistry = ComponentRegistry("task", modules=tuple(f"memrl.tasks.{module}" for module in TASK_MODULES))
SPLITS = ("train", "test")

register = TASKS.register
make = TASKS.make
names = TASKS.names


class SequenceBatch(NamedTuple):
    """One batch of a task, time-major."""

    inputs: Any  # [T, B, ...] an array or a pytree of them
    targets: jax.Array  # [T, B] int classes, or [T, B, bits]
    target_mask: jax.Array  # [T, B] bool: the scored steps
    kinds: Any = None  # {kind: [B] bool} trials scored apart (PAI's direct and indirect queries), or None


def check_split(split: str) -> int:
    """The index of ``split`` in SPLITS."""
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
    return SPLITS.index(split)


def previous_actions(actions: jax.Array, num_actions: int) -> jax.Array:
    """[T, ...] actions -> [T, ..., num_actions]: step t holds a_{t-1} one-hot, zeros at t = 0 (what
    an agent reads of its previous action)."""
    one_hot = jax.nn.one_hot(actions, num_actions)
    return jnp.concatenate([jnp.zeros_like(one_hot[:1]), one_hot[:-1]])


def split_key(key: jax.Array, split: str) -> jax.Array:
    """``key`` moved to ``split``'s seed stream: the held-out stream never meets the training one."""
    return jax.random.fold_in(key, check_split(split))


@dataclasses.dataclass(frozen=True)
class SequenceTask:
    """Base class: subclasses set the kinds and ``input_size``/``num_outputs`` and implement ``sample``."""

    input_kind: ClassVar[str]
    output_kind: ClassVar[str] = "classes"
    scoring: ClassVar[str] = "token"
    scored_at_final_step: ClassVar[bool] = False
    """every sequence is scored at its final step only, so a model may answer from its final state"""

    @property
    def input_size(self) -> int:
        """Vocabulary size (tokens) or vector width (vectors)."""
        raise NotImplementedError

    @property
    def num_outputs(self) -> int:
        """Classes (classes) or bits (bits) per scored step."""
        raise NotImplementedError

    def sample(self, key: jax.Array, split: str = "train", state=None) -> SequenceBatch:
        raise NotImplementedError

    def initial_state(self):
        """The curriculum's state (None: no curriculum that follows learning)."""
        return None

    def next_state(self, state, held_out_loss: jax.Array):
        """The state after a held-out evaluation with ``held_out_loss``."""
        return state

    def state_metrics(self, state) -> dict[str, jax.Array]:
        """What a run folder records of the state each update (e.g. the curriculum's level)."""
        return {}

    def with_batch_size(self, batch_size: int) -> SequenceTask:
        """The same task drawing ``batch_size`` sequences per batch."""
        return dataclasses.replace(self, batch_size=batch_size)
