"""ConvLSTM (Shi et al. 2015), the RMC paper's BoxWorld baseline (Santoro et al. 2018, App. A.3:
a 5×5 ConvLSTM with 64 output channels, 2×2 kernels, stride 1).

The input [B, grid² · C] is read as a [B, grid, grid, C] feature map (the conv encoder's,
flattened); gates are convolutions (SAME padding) over the map and the previous hidden state:

    i, f, g, o = split(conv_k([x, h]) + b),   b_f = 1
    c' = σ(f) ⊙ c + σ(i) ⊙ tanh(g),  h' = σ(o) ⊙ tanh(c')             per cell of the grid

The output is flatten(h') [B, grid² · channels].
"""

from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp

from memrl.cores.base import MemoryCore, register
from memrl.nn.convolution import SameConv
from memrl.settings import check_positive


class ConvLSTM(MemoryCore):
    """ConvLSTM over a ``grid`` × ``grid`` map (module docstring); carry (c, h) [B, grid, grid, channels]."""

    grid: int = 5
    """height and width of the input feature map (the BoxWorld viewport: 5)"""
    channels: int = 64
    """channels of the cell and hidden state (RMC's baseline: 64)"""
    kernel: int = 2
    """size of the gate convolutions (RMC's baseline: 2)"""

    def __post_init__(self):
        check_positive(self, "grid", "channels", "kernel")
        super().__post_init__()

    def initialize_carry(self, rng, batch_shape):
        zeros = jnp.zeros((*batch_shape, self.grid, self.grid, self.channels))
        return zeros, zeros

    @nn.compact
    def step(self, carry, x, reset):
        c, h = carry
        cells = self.grid * self.grid
        if x.shape[-1] % cells:
            raise ValueError(
                f"conv-lstm reads its input as a {self.grid}x{self.grid} map; {x.shape[-1]} features are not a multiple of {cells}"
            )
        x = x.reshape(x.shape[0], self.grid, self.grid, x.shape[-1] // cells)
        gates = SameConv(4 * self.channels, self.kernel, name="gates")(jnp.concatenate([x, h], axis=-1))
        i, f, g, o = jnp.split(gates, 4, axis=-1)
        c = jax.nn.sigmoid(f + 1.0) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
        h = jax.nn.sigmoid(o) * jnp.tanh(c)
        return (c, h), h.reshape(h.shape[0], -1)


register("conv-lstm", ConvLSTM)
