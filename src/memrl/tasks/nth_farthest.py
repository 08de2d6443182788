"""Nth Farthest (Santoro et al. 2018, Sec. 4.1; sonnet's ``NthFarthest``): ``num_objects`` vectors
drawn from U(-1, 1)^num_features arrive one per step, in a random order, each tagged with its
object id (one-hot), the reference id m and the rank n (one-hots, the same on every row). After
the last one the model answers: which object is the n-th farthest from object m?

As the official generator computes it (sonnet's ``nth_farthest.py``; ``tests/data/sequence_tasks``
holds its recorded batch, with its provenance), "n-th farthest" is the
n-th NEAREST, 0-based and counting m itself (n = 0 answers m, n = num_objects - 1 the farthest):

    label = argsort_j ‖x_m − x_j‖ [n]          (an object id, not a row position)

Inputs [num_objects, B, num_features + 3 * num_objects] are laid out
[vector | object id | reference id | n], the target is scored on the last step only, with
``num_objects`` classes (chance 1 / num_objects). The batch's ``kinds`` score each rank apart
(``rank0`` .. ``rank{N-1}``) and the ranks above 0 together (``beyond_rank0``): rank 0 is answered
by the reference id on every row, without the vectors, so a memory-less shortcut scores
1/N + (N-1)/N · 1/(N-1) = 2/N overall and 1/(N-1) beyond rank 0.
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp

from memrl.settings import check_positive
from memrl.tasks.base import SequenceBatch, SequenceTask, register, split_key


@dataclasses.dataclass(frozen=True)
class NthFarthest(SequenceTask):
    """Which object is the n-th farthest (0-based nearest) from object m (module docstring)."""

    batch_size: int = 1600
    """sequences per batch (RMC: 1600)"""
    num_objects: int = 8
    num_features: int = 16

    input_kind = "vectors"

    def __post_init__(self):
        check_positive(self, "batch_size", "num_objects", "num_features")

    @property
    def input_size(self) -> int:
        return self.num_features + 3 * self.num_objects

    @property
    def num_outputs(self) -> int:
        return self.num_objects

    def sample(self, key, split: str = "train", state=None) -> SequenceBatch:
        inputs, labels, ranks = jax.vmap(self._sequence)(jax.random.split(split_key(key, split), self.batch_size))
        n, b = self.num_objects, self.batch_size
        targets = jnp.zeros((n, b), jnp.int32).at[-1].set(labels)
        mask = jnp.zeros((n, b), bool).at[-1].set(True)
        kinds = {f"rank{rank}": ranks == rank for rank in range(n)} | {"beyond_rank0": ranks > 0}
        return SequenceBatch(jnp.swapaxes(inputs, 0, 1), targets, mask, kinds)

    def _sequence(self, key):
        """([num_objects, width] rows in a random order, the label, the rank n asked for)."""
        k_data, k_nth, k_reference, k_order = jax.random.split(key, 4)
        n = self.num_objects
        data = jax.random.uniform(k_data, (n, self.num_features), minval=-1.0, maxval=1.0)
        nth = jax.random.randint(k_nth, (), 0, n)
        reference = jax.random.randint(k_reference, (), 0, n)
        distances = jnp.linalg.norm(data - data[reference], axis=-1)
        label = jnp.argsort(distances)[nth]
        one_hot = lambda i: jnp.broadcast_to(jax.nn.one_hot(i, n), (n, n))
        rows = jnp.concatenate([data, jnp.eye(n), one_hot(reference), one_hot(nth)], axis=-1)
        return jax.random.permutation(k_order, rows), label.astype(jnp.int32), nth


register("nth-farthest", NthFarthest)
