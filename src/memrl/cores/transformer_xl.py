"""Transformer-XL memory for RL: TrXL-I and GTrXL (Parisotto et al. 2020, "Stabilizing
Transformers for Reinforcement Learning", Sec. 3).

Per layer l, with E the layer input and M its cache of the last ``memory_length`` inputs:

    Ȳ = RelMHA(LN([StopGrad(M), E]))
    Y  = E + ReLU(Ȳ)            (trxl)     Y  = g(E, ReLU(Ȳ))      (gtrxl)
    Ē = MLP(LN(Y))
    E' = Y + ReLU(Ē)            (trxl)     E' = g(Y, ReLU(Ē))      (gtrxl)

``trxl-topk`` (Lampinen et al. 2021, App. D.8, a sparse baseline for HTM) is TrXL-I whose
attention keeps only the ``top_k`` highest-scoring past steps per query and head.

The carry is a fixed-size cache [B, layers, memory_length, d_model] (most recent last) and a
validity mask [B, memory_length]; a reset empties a row's cache, so no episode ever sees another's
activations. ``unroll`` stops the gradient into the cache it starts from (the previous segment),
while steps inside the unroll keep their gradient.
"""

from __future__ import annotations

import flax.linen as nn
import jax.numpy as jnp

from memrl.cores.base import SegmentCore, register
from memrl.cores.sliding_window import slide, window_mask
from memrl.nn.attention import RelativeMultiHeadAttention
from memrl.nn.gating import residual
from memrl.settings import check_positive


class TransformerXLLayer(nn.Module):
    """One TrXL-I / GTrXL layer for new time steps ``x`` [B, Q, D] attending over ``past`` [B, M, D]
    (the cached rows) and themselves: distances [Q, M + Q] and mask [B, Q, M + Q] say which of
    the M + Q rows each new step sees and how far back each lies."""

    d_model: int
    num_heads: int
    mlp_dim: int
    gated: bool
    gate_bias: float
    top_k: int | None = None

    @nn.compact
    def __call__(self, x, past, distances, mask):
        context = nn.LayerNorm(name="attention_norm")(jnp.concatenate([past, x], axis=1))
        attended = RelativeMultiHeadAttention(self.num_heads, self.d_model, self.top_k, name="attention")(
            context[:, past.shape[1] :], context, distances, mask
        )
        y = residual(self.gated, self.gate_bias, "attention_gate")(x, nn.relu(attended))
        hidden = nn.Dense(self.mlp_dim, name="mlp_in")(nn.LayerNorm(name="mlp_norm")(y))
        e = nn.Dense(self.d_model, name="mlp_out")(nn.relu(hidden))
        return residual(self.gated, self.gate_bias, "mlp_gate")(y, nn.relu(e))


class TransformerXL(SegmentCore):
    """Input projection to ``d_model``, then ``num_layers`` TrXL-I (or GTrXL, ``gated``) layers.

    ``unroll`` computes all steps of a segment at once, as Transformer-XL trains: step t sees the
    rows of the last ``memory_length`` steps (cache, then the segment's own rows) of its episode."""

    num_layers: int = 2
    """transformer layers"""
    d_model: int = 128
    """width of the layers (inputs are projected to it)"""
    num_heads: int = 4
    """attention heads"""
    mlp_dim: int = 256
    """hidden units of each layer's MLP"""
    memory_length: int = 128
    """past steps each layer attends to (the cache)"""
    gated: bool = False
    """GRU-type gating of the residuals (GTrXL; fixed by the core's name)"""
    gate_bias: float = 2.0
    """initial bias of the gates towards the identity (GTrXL)"""
    top_k: int | None = None
    """attend only to the k highest-scoring cached steps (trxl-topk), or None for all"""

    def __post_init__(self):
        check_positive(self, "num_layers", "d_model", "num_heads", "mlp_dim", "memory_length")
        if self.d_model % self.num_heads:
            raise ValueError(f"d_model ({self.d_model}) must be divisible by num_heads ({self.num_heads})")
        if self.top_k is not None and self.top_k < 1:
            raise ValueError(f"top_k must be >= 1 (or None for full attention), got {self.top_k}")
        super().__post_init__()

    def initialize_carry(self, rng, batch_shape):
        return {
            "cache": jnp.zeros((*batch_shape, self.num_layers, self.memory_length, self.d_model)),
            "valid": jnp.zeros((*batch_shape, self.memory_length), dtype=bool),
        }

    @nn.compact
    def segment(self, carry, xs, resets):
        """T steps at once: xs [T, B, D_in], resets [T, B] (a reset step starts a new episode) ->
        (carry, ys [T, B, d_model]); equal to T single steps."""
        resets = resets.T  # [B, T]
        distances, mask = window_mask(carry["valid"], resets)
        h = nn.Dense(self.d_model, name="input_projection")(jnp.swapaxes(xs, 0, 1))  # [B, T, D]
        layer_inputs = []
        for layer in range(self.num_layers):
            layer_inputs.append(h)
            h = TransformerXLLayer(
                self.d_model,
                self.num_heads,
                self.mlp_dim,
                self.gated,
                self.gate_bias,
                self.top_k,
                name=f"layer_{layer}",
            )(h, carry["cache"][:, layer], distances, mask)
        cache, valid = slide(carry["cache"], carry["valid"], jnp.stack(layer_inputs, axis=1), resets)
        return {"cache": cache, "valid": valid}, jnp.swapaxes(h, 0, 1)


register("trxl", TransformerXL, fixed=dict(gated=False))
register("gtrxl", TransformerXL, fixed=dict(gated=True))
register("trxl-topk", TransformerXL, fixed=dict(gated=False), defaults=dict(top_k=8))
