"""GRU core (Cho et al. 2014).

r = σ(W_r x + U_r h + b_r),  z = σ(W_z x + U_z h + b_z)
n = tanh(W_n x + b_n + r ⊙ (U_n h + b_hn)),  h' = (1 − z) ⊙ n + z ⊙ h

b_z starts at ``update_bias``: 0 as in Cho et al. and PyTorch; 1.0 starts z at σ(1) ≈ 0.73, the
share of the state kept each step, as an LSTM's forget-gate bias 1.0 starts its forget gate.
"""

from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp

from memrl.cores.base import MemoryCore, register
from memrl.settings import check_positive


class GRU(MemoryCore):
    hidden: int = 256
    """units of the GRU state"""
    update_bias: float = 0.0
    """initial bias of the update gate z (the share of the state kept): 0 as Cho et al.; 1.0 as an
    LSTM's forget-gate bias"""

    def __post_init__(self):
        check_positive(self, "hidden")
        super().__post_init__()

    def initialize_carry(self, rng, batch_shape):
        return jnp.zeros((*batch_shape, self.hidden))

    @nn.compact
    def step(self, h, x, reset):
        xr, xz, xn = jnp.split(nn.Dense(3 * self.hidden, bias_init=self._gate_bias, name="input")(x), 3, axis=-1)
        hr, hz, hn = jnp.split(nn.Dense(3 * self.hidden, name="recurrent")(h), 3, axis=-1)
        r = jax.nn.sigmoid(xr + hr)
        z = jax.nn.sigmoid(xz + hz)
        n = jnp.tanh(xn + r * hn)
        h = (1.0 - z) * n + z * h
        return h, h

    def _gate_bias(self, key, shape, dtype=jnp.float32):
        """[b_r, b_z, b_n]: zeros, and ``update_bias`` in b_z."""
        return jnp.zeros(shape, dtype).at[self.hidden : 2 * self.hidden].set(self.update_bias)


register("gru", GRU)
