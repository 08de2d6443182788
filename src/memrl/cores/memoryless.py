"""The memoryless control: each step's output reads that step's input alone, y_t = ReLU(W x_t + b),
and the carry is empty. What an agent does without memory (POPGym's MLP baseline, Morad et al. 2023;
the Markovian policy of Ni et al. 2022): the control a memory's return is read against, trained
through the same agent and learner.
"""

from __future__ import annotations

import flax.linen as nn
import jax.numpy as jnp

from memrl.cores.base import MemoryCore, register
from memrl.settings import check_positive


class Memoryless(MemoryCore):
    hidden: int = 256
    """units of the layer"""

    def __post_init__(self):
        check_positive(self, "hidden")
        super().__post_init__()

    def initialize_carry(self, rng, batch_shape):
        return jnp.zeros((*batch_shape, 0))  # nothing is kept from one step to the next

    @nn.compact
    def step(self, carry, x, reset):
        return carry, nn.relu(nn.Dense(self.hidden, name="layer")(x))

    def unroll(self, carry, xs, resets):
        """Every step at once: the layer reads [T, B, D] as it reads [B, D]."""
        return self.step(carry, xs, resets)


register("memoryless", Memoryless)
