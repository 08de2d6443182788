"""Hierarchical chunk attention of HTM (Lampinen et al. 2021, "Towards mental time travel",
Sec. 2 and App. A.1), matching the official ``HierarchicalMemoryAttention`` numerically.

For a query q, chunk summary keys K_m and chunk contents X_m (C rows each):

    r_m   = (q W_q) · (K_m W_k) / sqrt(F)          (relevance; masked chunks get -1e6)
    top-k chunks by r_m, w = softmax over the k selected r_m
    out   = Σ_j w_j · MHA(q, X_{m_j} + P)            (P: reversed sine-then-cosine positions)

The within-chunk attention uses the raw query vector as its single query token; keys and
contents are read without gradient (the memory is a record, not a path for learning). The masked
relevances r [B, Q, M] and the selected chunks [B, Q, k] are sown in ``intermediates`` as
``chunk_relevance`` and ``chunk_selected`` (``apply(..., mutable=["intermediates"])``).
"""

from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp

from memrl.nn.attention import sinusoid_encoding

MASKED_RELEVANCE = -1e6


def chunk_position_encoding(chunk_size: int, dim: int) -> jax.Array:
    """[C, dim] sinusoids with positions C-1, ..., 0: the newest row of a chunk is position 0."""
    return sinusoid_encoding(jnp.arange(chunk_size - 1, -1, -1), dim)


class ChunkAttention(nn.Module):
    """Multi-head attention of one query token over the rows of each selected chunk
    (haiku ``MultiHeadAttention`` with key size F/H, biases on every projection).

    query [B, Q, E], contents [B, M, C, D], selected [B, Q, k] chunk indices -> [B, Q, k, F]."""

    feature_size: int
    num_heads: int

    @nn.compact
    def __call__(self, query, contents, selected):
        heads, head_dim = self.num_heads, self.feature_size // self.num_heads
        key, value = DenseParameters(self.feature_size, name="key"), DenseParameters(self.feature_size, name="value")
        (key_kernel, key_bias), (value_kernel, value_bias) = key(contents.shape[-1]), value(contents.shape[-1])
        rows = jax.vmap(lambda chunks, index: chunks[index])(contents, selected)  # [B, Q, k, C, D]
        q = nn.Dense(self.feature_size, name="query")(query).reshape(*query.shape[:-1], heads, head_dim)
        scale = jnp.sqrt(head_dim).astype(q.dtype)
        if (
            selected.shape[1] * selected.shape[2] < contents.shape[1]
        ):  # fewer reads than chunks (acting): project what is read
            k = (rows @ key_kernel + key_bias).reshape(*rows.shape[:-1], heads, head_dim)
            v = (rows @ value_kernel + value_bias).reshape(*rows.shape[:-1], heads, head_dim)
            weights = jax.nn.softmax(jnp.einsum("bqhd,bqkchd->bqkhc", q, k) / scale, axis=-1)
            attended = jnp.einsum("bqkhc,bqkchd->bqkhd", weights, v)
        else:
            # a chunk read by several queries (learning over a segment): the same attention with the
            # key and value maps moved to the query's side, q·(W_k x + b_k) = (W_k q)·x + q·b_k (the
            # last term is the same for every row, so the softmax drops it) and Σ w (W_v x + b_v) =
            # W_v Σ w x + b_v; the rows carry no gradient, so nothing is projected or scattered back per row
            q_rows = jnp.einsum("bqhe,dhe->bqhd", q, key_kernel.reshape(-1, heads, head_dim))
            weights = jax.nn.softmax(jnp.einsum("bqhd,bqkcd->bqkhc", q_rows, rows) / scale, axis=-1)
            mixed_rows = jnp.einsum("bqkhc,bqkcd->bqkhd", weights, rows)
            attended = jnp.einsum(
                "bqkhd,dhe->bqkhe", mixed_rows, value_kernel.reshape(-1, heads, head_dim)
            ) + value_bias.reshape(heads, head_dim)
        return nn.Dense(self.feature_size, name="linear")(attended.reshape(*attended.shape[:-2], -1))


class DenseParameters(nn.Module):
    """The kernel [D, features] and bias [features] of an ``nn.Dense`` (same names and initialisers),
    for attention that applies them on either side of a product."""

    features: int

    @nn.compact
    def __call__(self, in_features: int):
        kernel = self.param("kernel", nn.initializers.lecun_normal(), (in_features, self.features))
        return kernel, self.param("bias", nn.initializers.zeros, (self.features,))


class HierarchicalMemoryAttention(nn.Module):
    """Top-k chunk attention. queries [B, Q, E], keys [B, M, D], contents [B, M, C, D],
    mask [B, Q, M] bool (true = the query may read the chunk) or None -> [B, Q, F].

    Ties among the relevances (for example a query with no valid chunk) go to the lowest chunk
    indices, as in ``jax.lax.top_k``; when fewer than k chunks are valid, the masked ones fill the
    remaining slots with weight 0 (exp(-1e6) underflows)."""

    feature_size: int
    num_heads: int
    k: int
    memory_position_encoding: bool = True

    @nn.compact
    def __call__(self, queries, keys, contents, mask=None):
        if self.feature_size % self.num_heads:
            raise ValueError(f"feature_size ({self.feature_size}) must be divisible by num_heads ({self.num_heads})")
        num_chunks, chunk_size, dim = contents.shape[-3:]
        if not 1 <= self.k <= num_chunks:
            raise ValueError(f"k ({self.k}) must be between 1 and the number of chunks ({num_chunks})")
        keys, contents = jax.lax.stop_gradient(keys), jax.lax.stop_gradient(contents)
        query_summary = nn.Dense(self.feature_size, use_bias=False, name="query")(queries)
        key_summary = nn.Dense(self.feature_size, use_bias=False, name="key")(keys)
        relevance = jnp.einsum("bqf,bmf->bqm", query_summary, key_summary) / jnp.sqrt(self.feature_size)
        if mask is not None:
            relevance = jnp.where(mask, relevance, MASKED_RELEVANCE)
        top_relevance, top_index = jax.lax.top_k(relevance, self.k)  # [B, Q, k]
        # for ``memrl analyze chunk-selection`` (kept only where "intermediates" is mutable)
        self.sow("intermediates", "chunk_relevance", relevance)
        self.sow("intermediates", "chunk_selected", top_index)
        top_weights = jax.nn.softmax(top_relevance, axis=-1)
        if self.memory_position_encoding:
            contents = contents + chunk_position_encoding(chunk_size, dim).astype(contents.dtype)
        per_chunk = ChunkAttention(self.feature_size, self.num_heads, name="within_mem_attn")(
            queries, contents, top_index
        )
        return jnp.einsum("bqk,bqkf->bqf", top_weights, per_chunk)
