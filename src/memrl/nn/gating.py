"""GRU-type gating layer of GTrXL (Parisotto et al. 2020, "Stabilizing Transformers for RL", Eq. 8)."""

from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp


class GRUGate(nn.Module):
    """g(x, y):  r = σ(W_r y + U_r x),  z = σ(W_z y + U_z x − b_g),
    ĥ = tanh(W_g y + U_g (r ⊙ x)),  out = (1 − z) ⊙ x + z ⊙ ĥ.

    ``x`` is the residual stream, ``y`` the sublayer output. b_g starts at ``gate_bias`` (2), so
    z ≈ σ(−2) and the layer starts close to the identity map.
    """

    gate_bias: float = 2.0

    @nn.compact
    def __call__(self, x, y):
        features = x.shape[-1]
        dense = lambda name: nn.Dense(features, use_bias=False, name=name)
        b_g = self.param("b_g", nn.initializers.constant(self.gate_bias), (features,))
        r = jax.nn.sigmoid(dense("W_r")(y) + dense("U_r")(x))
        z = jax.nn.sigmoid(dense("W_z")(y) + dense("U_z")(x) - b_g)
        h = jnp.tanh(dense("W_g")(y) + dense("U_g")(r * x))
        return (1.0 - z) * x + z * h


def residual(gated: bool, gate_bias: float, name: str):
    """The residual connection of a transformer memory layer: x + y, or GTrXL's gate g(x, y)."""
    if gated:
        return GRUGate(gate_bias, name=name)
    return jnp.add
