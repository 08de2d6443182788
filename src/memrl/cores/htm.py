"""Hierarchical Transformer Memory, HTM (Lampinen et al. 2021, "Towards mental time travel",
Sec. 2, App. A.1 and D.2-D.3).

Each of ``num_layers`` layers, for the layer input E at one step:

    Y  = E + MHA(LN([W, E]))                         local causal self-attention over a window W
    Z  = Y + HCA(LN(Y), store)                       top-k chunk attention (nn/hierarchical_attention)
    E' = Z + MLP(LN(Z))                              (``gated``: GTrXL gates instead of the sums)

The writing side, which the official code does not release, follows the paper: each layer keeps
its *input* E in a chunk accumulator; when ``chunk_size`` steps have accumulated, the chunk is
written into a ring store of ``num_chunks`` chunks, keyed by the mean of its rows (with
``chunk_overlap`` > 0 the next chunk starts with the last rows of the previous one). A new chunk
starts at every episode boundary: the unfinished chunk of the ending episode is dropped. The store
is cleared at episode start unless ``cross_episode``; the window always is. The memory is read
before the current step is written, and a step with no written chunk reads nothing.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import flax.linen as nn

from memrl.cores.base import MemoryCore, register, reset_carry
from memrl.nn.attention import RelativeMultiHeadAttention
from memrl.nn.gating import residual
from memrl.nn.hierarchical_attention import HierarchicalMemoryAttention


STORE_FIELDS = ("contents", "keys", "store_valid", "pointer")  # what ``cross_episode`` keeps at a reset


class HTMLayer(nn.Module):
    """One memory layer for a single new step: window self-attention, chunk attention, MLP."""

    d_model: int
    num_heads: int
    mlp_dim: int
    k: int
    gated: bool
    gate_bias: float

    @nn.compact
    def __call__(self, x, window, window_valid, keys, contents, store_valid):
        window_length = window.shape[1]
        context = nn.LayerNorm(name="attention_norm")(jnp.concatenate([window, x[:, None]], axis=1))
        distances = jnp.arange(window_length, -1, -1)[None]  # oldest .. current
        mask = jnp.concatenate([window_valid, jnp.ones_like(window_valid[:, :1])], axis=1)[:, None]
        attended = RelativeMultiHeadAttention(self.num_heads, self.d_model, name="attention")(
            context[:, -1:], context, distances, mask
        )[:, 0]
        y = residual(self.gated, self.gate_bias, "attention_gate")(x, attended)
        query = nn.LayerNorm(name="memory_norm")(y)[:, None]
        read = HierarchicalMemoryAttention(self.d_model, self.num_heads, self.k, name="memory_attention")(
            query, keys, contents, store_valid[:, None]
        )[:, 0]
        read = jnp.where(store_valid.any(axis=-1, keepdims=True), read, 0.0)
        z = residual(self.gated, self.gate_bias, "memory_gate")(y, read)
        hidden = nn.Dense(self.mlp_dim, name="mlp_in")(nn.LayerNorm(name="mlp_norm")(z))
        return residual(self.gated, self.gate_bias, "mlp_gate")(z, nn.Dense(self.d_model, name="mlp_out")(nn.relu(hidden)))


def write_step(carry, layer_inputs, chunk_size: int, overlap: int):
    """Append this step's layer inputs [B, L, D] to the accumulators; rows whose chunk is now
    full write it (contents and mean key) at their pointer and start the next chunk."""
    count = carry["count"]
    rows = jnp.arange(chunk_size)
    accumulator = jnp.where(
        (rows == count[:, None])[:, None, :, None], layer_inputs[:, :, None], carry["accumulator"]
    )
    count = count + 1
    full = count == chunk_size
    slot = jax.nn.one_hot(carry["pointer"], carry["store_valid"].shape[-1], dtype=bool) & full[:, None]  # [B, N]
    contents = jnp.where(slot[:, None, :, None, None], accumulator[:, :, None], carry["contents"])
    keys = jnp.where(slot[:, None, :, None], accumulator.mean(axis=2)[:, :, None], carry["keys"])
    carried_over = jnp.roll(accumulator, overlap, axis=2) * (rows < overlap)[None, None, :, None]
    return {
        **carry,
        "accumulator": jnp.where(full[:, None, None, None], carried_over, accumulator),
        "count": jnp.where(full, overlap, count),
        "contents": contents,
        "keys": keys,
        "store_valid": carry["store_valid"] | slot,
        "pointer": jnp.where(full, (carry["pointer"] + 1) % slot.shape[-1], carry["pointer"]),
    }


class HierarchicalTransformerMemory(MemoryCore):
    """Input projection to ``d_model``, then ``num_layers`` HTM layers.

    Carry (B = batch, L = layers, W = window, N = num_chunks, C = chunk_size, D = d_model):
    window [B, L, W, D] and window_valid [B, W]; contents [B, L, N, C, D], keys [B, L, N, D] and
    store_valid [B, N]; accumulator [B, L, C, D], count [B] (rows in the open chunk) and pointer
    [B] (the next store slot; the oldest chunk is overwritten when the store is full)."""

    num_layers: int = 4
    d_model: int = 512
    num_heads: int = 8
    mlp_dim: int = 1024
    window: int = 16
    chunk_size: int = 16
    num_chunks: int = 64
    k: int = 8
    chunk_overlap: int = 0
    cross_episode: bool = False
    gated: bool = False
    gate_bias: float = 2.0

    def __post_init__(self):
        if self.d_model % self.num_heads:
            raise ValueError(f"d_model ({self.d_model}) must be divisible by num_heads ({self.num_heads})")
        for field in ("num_layers", "window", "chunk_size", "num_chunks"):
            if getattr(self, field) < 1:
                raise ValueError(f"{field} must be >= 1, got {getattr(self, field)}")
        if not 1 <= self.k <= self.num_chunks:
            raise ValueError(f"k ({self.k}) must be between 1 and num_chunks ({self.num_chunks})")
        if not 0 <= self.chunk_overlap < self.chunk_size:
            raise ValueError(f"chunk_overlap ({self.chunk_overlap}) must be in [0, chunk_size={self.chunk_size})")
        super().__post_init__()

    def initialize_carry(self, rng, batch_shape):
        layers, d = self.num_layers, self.d_model
        return {
            "window": jnp.zeros((*batch_shape, layers, self.window, d)),
            "window_valid": jnp.zeros((*batch_shape, self.window), bool),
            "contents": jnp.zeros((*batch_shape, layers, self.num_chunks, self.chunk_size, d)),
            "keys": jnp.zeros((*batch_shape, layers, self.num_chunks, d)),
            "store_valid": jnp.zeros((*batch_shape, self.num_chunks), bool),
            "accumulator": jnp.zeros((*batch_shape, layers, self.chunk_size, d)),
            "count": jnp.zeros(batch_shape, jnp.int32),
            "pointer": jnp.zeros(batch_shape, jnp.int32),
        }

    def __call__(self, carry, x, reset):
        initial = self.initialize_carry(None, reset.shape)
        kept = STORE_FIELDS if self.cross_episode else ()
        carry = {name: value if name in kept else reset_carry(value, initial[name], reset) for name, value in carry.items()}
        return self.step(carry, x, reset)

    @nn.compact
    def step(self, carry, x, reset):
        h = nn.Dense(self.d_model, name="input_projection")(x)
        layer_inputs = []
        for layer in range(self.num_layers):
            layer_inputs.append(h)
            h = HTMLayer(
                self.d_model, self.num_heads, self.mlp_dim, self.k, self.gated, self.gate_bias, name=f"layer_{layer}"
            )(
                h,
                carry["window"][:, layer],
                carry["window_valid"],
                carry["keys"][:, layer],
                carry["contents"][:, layer],
                carry["store_valid"],
            )
        newest = jnp.stack(layer_inputs, axis=1)  # [B, L, D]
        carry = write_step(carry, newest, self.chunk_size, self.chunk_overlap)
        window = jnp.concatenate([carry["window"][:, :, 1:], newest[:, :, None]], axis=2)
        window_valid = jnp.concatenate([carry["window_valid"][:, 1:], jnp.ones_like(carry["window_valid"][:, :1])], axis=1)
        return {**carry, "window": window, "window_valid": window_valid}, h

    def unroll(self, carry, xs, resets):
        return super().unroll(jax.lax.stop_gradient(carry), xs, resets)


register("htm", lambda **kw: HierarchicalTransformerMemory(**kw))
