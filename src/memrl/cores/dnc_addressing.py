"""The DNC's memory addressing (Graves et al. 2016, Methods; as ``deepmind/dnc``'s addressing.py
and access.py compute it). Pure functions over one batch; shapes: memory [B, N, W] (N slots of
word size W), read weights [B, R, N], write weights [B, H, N] for R read and H write heads.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

EPSILON = 1e-6  # the official _EPSILON: in norms, the cosine denominator and the usage clamp


def content_weights(memory: jax.Array, keys: jax.Array, strengths: jax.Array) -> jax.Array:
    """C(M, k, β)[i] = softmax_i(softplus(β) · cos(k, M_i)), with the official ε's:
    cos = k·M_i / (‖k‖‖M_i‖ + ε), ‖v‖ = sqrt(Σ v² + ε). keys [B, K, W], strengths [B, K] -> [B, K, N]."""
    norm = lambda v: jnp.sqrt(jnp.sum(v * v, axis=-1, keepdims=True) + EPSILON)
    dot = jnp.einsum("bkw,bnw->bkn", keys, memory)
    similarity = dot / (norm(keys) * jnp.swapaxes(norm(memory), -1, -2) + EPSILON)
    return jax.nn.softmax(similarity * jax.nn.softplus(strengths)[..., None], axis=-1)


def usage_after_write_and_read(prev_usage, prev_write_weights, free_gates, prev_read_weights):
    """u = (u_prev + (1 − u_prev) ⊙ w_w) ⊙ ψ, with w_w = 1 − Π_h (1 − w_h) over write heads
    (under stop-gradient) and ψ = Π_r (1 − f_r w_r) over read heads (retention by the free gates).
    prev_usage [B, N], free_gates [B, R]."""
    written = 1.0 - jnp.prod(1.0 - jax.lax.stop_gradient(prev_write_weights), axis=1)
    usage = prev_usage + (1.0 - prev_usage) * written
    retention = jnp.prod(1.0 - free_gates[..., None] * prev_read_weights, axis=1)
    return usage * retention


def allocation(usage: jax.Array) -> jax.Array:
    """a[φ_j] = (1 − u[φ_j]) Π_{i<j} u[φ_i], φ the slots sorted by usage ascending (ties: lower
    index first), usage clamped to ε + (1 − ε) u. [B, N] -> [B, N]."""
    usage = EPSILON + (1.0 - EPSILON) * usage
    order = jnp.argsort(usage, axis=-1, stable=True)
    sorted_usage = jnp.take_along_axis(usage, order, axis=-1)
    exclusive_product = jnp.cumprod(
        jnp.concatenate([jnp.ones_like(sorted_usage[:, :1]), sorted_usage[:, :-1]], axis=-1), axis=-1
    )
    sorted_allocation = (1.0 - sorted_usage) * exclusive_product
    return jnp.take_along_axis(sorted_allocation, jnp.argsort(order, axis=-1), axis=-1)


def write_allocation_weights(usage: jax.Array, write_gates: jax.Array) -> jax.Array:
    """Allocation for each write head in turn, each seeing the usage the ones before it will add:
    a_h = allocation(u_h), u_{h+1} = u_h + (1 − u_h) g_h a_h. usage [B, N], write_gates [B, H] -> [B, H, N]."""
    weights = []
    for head in range(write_gates.shape[1]):
        weights.append(allocation(usage))
        usage = usage + (1.0 - usage) * write_gates[:, head, None] * weights[-1]
    return jnp.stack(weights, axis=1)


def erase_and_write(memory, write_weights, erase_vectors, write_vectors):
    """M' = M ⊙ Π_h (1 − w_h e_hᵀ) + Σ_h w_h v_hᵀ. erase/write vectors [B, H, W]."""
    keep = jnp.prod(1.0 - write_weights[..., :, None] * erase_vectors[..., None, :], axis=1)
    return memory * keep + jnp.einsum("bhn,bhw->bnw", write_weights, write_vectors)


def link_and_precedence(prev_link, prev_precedence, write_weights):
    """Per write head: L[i, j] = (1 − w[i] − w[j]) L_prev[i, j] + w[i] p_prev[j] with a zero
    diagonal, then p = (1 − Σ_i w[i]) p_prev + w. link [B, H, N, N], precedence [B, H, N]."""
    w_i, w_j = write_weights[..., :, None], write_weights[..., None, :]
    link = (1.0 - w_i - w_j) * prev_link + w_i * prev_precedence[..., None, :]
    link = link * (1.0 - jnp.eye(link.shape[-1], dtype=link.dtype))
    precedence = (1.0 - write_weights.sum(-1, keepdims=True)) * prev_precedence + write_weights
    return link, precedence


def directional_read_weights(link, prev_read_weights, forward: bool):
    """Forward f = L w (what was written after what was read), backward b = Lᵀ w; per read and
    write head: link [B, H, N, N], prev_read_weights [B, R, N] -> [B, R, H, N]."""
    if forward:
        return jnp.einsum("bhij,brj->brhi", link, prev_read_weights)
    return jnp.einsum("bhji,brj->brhi", link, prev_read_weights)
