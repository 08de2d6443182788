"""Attention layers shared by the transformer memories."""

from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp


def sinusoid_encoding(positions: jax.Array, dim: int) -> jax.Array:
    """Sine-then-cosine encoding (Vaswani et al. 2017): [..., dim] with
    enc[..., i] = sin(p / 10000^(2i/dim)) for i < dim/2 and the cosines after."""
    half = dim // 2
    inv_freq = 1.0 / (10000.0 ** (jnp.arange(half, dtype=jnp.float32) * 2.0 / dim))
    angles = positions[..., None].astype(jnp.float32) * inv_freq
    return jnp.concatenate([jnp.sin(angles), jnp.cos(angles)], axis=-1)


class RelativeMultiHeadAttention(nn.Module):
    """Transformer-XL attention with relative positions (Dai et al. 2019, Sec. 3.3):

        score_ij = (q_i + u) · k_j + (q_i + v) · W_R R_{d_ij},   d_ij = distance from key j to query i

    queries [B, Q, D], keys_values [B, K, D], distances [Q, K] (int, >= 0), mask [B, Q, K] bool
    (true = may attend). Rows whose every key is masked give zeros. With ``top_k`` (sparse TrXL,
    Lampinen et al. 2021, App. D.8) each query and head keeps only its k highest-scoring keys.
    """

    num_heads: int
    out_features: int
    top_k: int | None = None

    @nn.compact
    def __call__(self, queries, keys_values, distances, mask):
        heads = self.num_heads
        if self.out_features % heads:
            raise ValueError(f"out_features {self.out_features} is not divisible by num_heads {heads}")
        head_dim = self.out_features // heads
        dense = lambda name: nn.DenseGeneral((heads, head_dim), use_bias=False, name=name)
        q = dense("query")(queries)  # [B, Q, H, d]
        k = dense("key")(keys_values)  # [B, K, H, d]
        v = dense("value")(keys_values)
        rel = dense("position")(sinusoid_encoding(distances, self.out_features))  # [Q, K, H, d]
        u = self.param("content_bias", nn.initializers.zeros, (heads, head_dim))
        w = self.param("position_bias", nn.initializers.zeros, (heads, head_dim))
        content = jnp.einsum("bqhd,bkhd->bhqk", q + u, k)
        position = jnp.einsum("bqhd,qkhd->bhqk", q + w, rel)
        logits = (content + position) / jnp.sqrt(head_dim).astype(q.dtype)
        logits = jnp.where(mask[:, None], logits, -1e30)
        if self.top_k is not None and self.top_k < logits.shape[-1]:
            kth = jax.lax.top_k(logits, self.top_k)[0][..., -1:]
            mask = mask[:, None] & (logits >= kth)
            logits = jnp.where(mask, logits, -1e30)
        else:
            mask = jnp.broadcast_to(mask[:, None], logits.shape)
        weights = jax.nn.softmax(logits, axis=-1) * mask
        out = jnp.einsum("bhqk,bkhd->bqhd", weights, v)
        return nn.DenseGeneral(self.out_features, axis=(-2, -1), name="output")(out)
