"""The copying task (Hochreiter & Schmidhuber 1997), as the TLB paper sets it (Didolkar et al.
2022, Sec. 7.6): ``num_digits`` digits drawn from 1..8, then ``gap`` blanks (0), then the
indicator 9, then ``num_digits`` blanks during which the model must output the digits in order.

    inputs   d_1 .. d_10  0 x gap  9  0 x 10          T = 2 * num_digits + gap + 1
    targets  (unscored)            ...  d_1 .. d_10   scored on the last num_digits steps

The paper's "receives 10 more zeros and then it outputs the original sequence" is read as in
Arjovsky et al. (2016): the outputs are due on those last blank steps. A sequence counts as right
when all its digits are (scoring "sequence"); per-digit accuracy is reported too.
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp

from memrl.settings import check_positive
from memrl.tasks.base import SequenceBatch, SequenceTask, register, split_key

BLANK, INDICATOR = 0, 9


@dataclasses.dataclass(frozen=True)
class Copying(SequenceTask):
    """Copy 10 digits after a gap (module docstring: the layout and the scoring)."""

    batch_size: int = 100
    """sequences per batch (TLB: 100)"""
    gap: int = 100
    """blank steps between the digits and the indicator (TLB: 100..600)"""
    num_digits: int = 10

    input_kind = "tokens"
    scoring = "sequence"

    def __post_init__(self):
        check_positive(self, "batch_size", "gap", "num_digits")

    @property
    def input_size(self) -> int:
        return 10

    @property
    def num_outputs(self) -> int:
        return 10

    @property
    def length(self) -> int:
        return 2 * self.num_digits + self.gap + 1

    def sample(self, key, split: str = "train", state=None) -> SequenceBatch:
        n, b = self.num_digits, self.batch_size
        digits = jax.random.randint(split_key(key, split), (n, b), 1, 9, dtype=jnp.int32)
        blanks = lambda steps: jnp.full((steps, b), BLANK, jnp.int32)
        inputs = jnp.concatenate([digits, blanks(self.gap), jnp.full((1, b), INDICATOR, jnp.int32), blanks(n)])
        targets = jnp.concatenate([blanks(n + self.gap + 1), digits])
        mask = jnp.broadcast_to((jnp.arange(self.length) >= self.length - n)[:, None], (self.length, b))
        return SequenceBatch(inputs, targets, mask)


register("copying", Copying)
