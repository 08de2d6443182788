"""Multi-categorical action distributions: one categorical per action component.

Logits are concatenated over components: [..., sum(dims)]; actions are int [..., len(dims)].
"""

from __future__ import annotations

import jax
import jax.numpy as jnp


def _split(logits, dims):
    bounds = [sum(dims[:i]) for i in range(1, len(dims))]
    return jnp.split(logits, bounds, axis=-1)


def sample(key, logits, dims):
    keys = jax.random.split(key, len(dims))
    parts = [jax.random.categorical(k, part) for k, part in zip(keys, _split(logits, dims))]
    return jnp.stack(parts, axis=-1).astype(jnp.int32)


def greedy(logits, dims):
    return jnp.stack([jnp.argmax(part, -1) for part in _split(logits, dims)], axis=-1).astype(jnp.int32)


def log_prob(logits, actions, dims):
    """Sum over components of log π(a_c)."""
    total = 0.0
    for c, part in enumerate(_split(logits, dims)):
        logp = jax.nn.log_softmax(part)
        total = total + jnp.take_along_axis(logp, actions[..., c : c + 1], axis=-1)[..., 0]
    return total


def entropy(logits, dims):
    """Sum over components of the categorical entropy."""
    total = 0.0
    for part in _split(logits, dims):
        logp = jax.nn.log_softmax(part)
        total = total - jnp.sum(jnp.exp(logp) * logp, axis=-1)
    return total
