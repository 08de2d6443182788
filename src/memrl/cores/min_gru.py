"""minGRU (Feng et al. 2024, "Were RNNs All We Needed?", Sec. 3.1).

    z_t = σ(W_z x_t + b_z),  h̃_t = W_h x_t + b_h
    h_t = (1 − z_t) ⊙ h_{t−1} + z_t ⊙ h̃_t                  (h_0 = 0)

A GRU whose gate and candidate read the input only, so the recurrence is linear in h and trains in
parallel over time. This is the paper's minGRU in linear space (its Algorithm 2); its log-space form
(Algorithm 4) computes the same recurrence with candidates made positive by g(x) = x + 0.5 (x ≥ 0),
σ(x) (x < 0), for numerical range over very long sequences, and is not what this core computes.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from flax import linen as nn

from memrl.cores.base import register
from memrl.cores.linear_recurrence import LinearRecurrentCore
from memrl.settings import check_positive


class MinGRU(LinearRecurrentCore):
    """The minGRU recurrence (module docstring)."""

    hidden: int = 128
    """units of the state h"""
    gate_bias: float = 0.0
    """initial bias b_z of the update gate (the paper's: 0, so z starts at 0.5 and a value written
    once halves every step; negative values start the state keeping more, as an LSTM's forget bias does)"""

    def __post_init__(self):
        check_positive(self, "hidden")
        super().__post_init__()

    def setup(self):
        self.gate = nn.Dense(self.hidden, bias_init=nn.initializers.constant(self.gate_bias), name="gate")
        self.candidate = nn.Dense(self.hidden, name="candidate")

    def zero_state(self, batch_shape):
        return jnp.zeros((*batch_shape, self.hidden))

    def elements(self, x):
        z = jax.nn.sigmoid(self.gate(x))
        return 1.0 - z, z * self.candidate(x), None

    def readout(self, h, context):
        return h


register("min-gru", MinGRU)
