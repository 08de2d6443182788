"""Supervised tasks: procedurally generated batches of (inputs, label) trials, and their registry.

A task is a frozen dataclass whose fields are its settings, with

    batch = task.sample(key, batch_size, split)     # a pytree of arrays with a leading batch axis

where ``split`` is "train" or "test" (held-out stimuli) and ``batch.label`` holds the index of the
right choice among ``task.num_choices``. Sampling is pure and jittable. Trials that come in kinds
scored apart (PAI's direct and indirect queries) are named by

    kinds = task.trial_kinds(batch)                 # {kind: mask [B]}, empty for one kind
"""

from __future__ import annotations

from memrl.registry import Registry

TASKS: Registry = Registry("task")
SPLITS = ("train", "test")

register = TASKS.register
make = TASKS.make
names = TASKS.names


def check_split(split: str) -> int:
    """The index of ``split`` in SPLITS (it seeds that split's stimuli)."""
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
    return SPLITS.index(split)
