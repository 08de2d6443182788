"""Relational Memory Core (Santoro et al. 2018, Sec. 3; sonnet v1 ``RelationalMemory``).

The memory M holds ``mem_slots`` rows of ``mem_size = head_size * num_heads`` units and starts as
the identity ``eye(mem_slots)``, padded with zero columns or truncated to ``mem_size``. Each step:

    x̃ = W_x x                                            the input as one extra row (mem_size)
    Z = [M; x̃]
    per block:  Z = LN(Z + MHDPA(Z)),  Z = LN(MLP(Z) + Z)  (the MLP shared by the blocks)
    M̃ = Z without its input row
    MHDPA: per head, q, k, v = split(LN(W_qkv z)), q scaled by key_size^-1/2, softmax(q kᵀ) v

Gates, LSTM-like (Sec. 3.3, no output gate), per unit ("unit"), per slot ("memory") or none:

    i, f = split(W_i x̃ + U tanh(M)),   M' = σ(i + b_i) ⊙ tanh(M̃) + σ(f + b_f) ⊙ M

with b_i = ``input_bias`` (0) and b_f = ``forget_bias`` (1). The output is flatten(M').
Each block has its own attention projection and layer norms; only the MLP (ReLU between its
layers, none after the last) is shared across blocks, as in sonnet.

The attention weights of each block, [B, heads, slots + 1, slots + 1] (queries by keys, the input
row last), are sown in the ``intermediates`` collection under ``attention`` (``apply(...,
mutable=["intermediates"])`` collects them; ``unroll`` stacks them over time).
"""

from __future__ import annotations

from typing import Literal

import jax
import jax.numpy as jnp
import flax.linen as nn

from memrl.cores.base import MemoryCore, register
from memrl.settings import check_positive

GATE_STYLES = ("unit", "memory", "none")
LAYER_NORM_EPSILON = 1e-5  # sonnet v1's LayerNorm


def initial_memory(batch_shape: tuple[int, ...], mem_slots: int, mem_size: int) -> jax.Array:
    """eye(mem_slots) padded with zero columns or truncated to mem_size, per batch row."""
    eye = jnp.eye(mem_slots, max(mem_slots, mem_size))[:, :mem_size]
    return jnp.broadcast_to(eye, (*batch_shape, mem_slots, mem_size))


class RelationalAttention(nn.Module):
    """Multi-head dot-product attention of every row of ``memory`` [B, N, mem_size] over all rows;
    returns (attended [B, N, mem_size], weights [B, heads, N, N])."""

    num_heads: int
    head_size: int
    key_size: int

    @nn.compact
    def __call__(self, memory):
        qkv_size = 2 * self.key_size + self.head_size
        qkv = nn.Dense(qkv_size * self.num_heads, name="qkv")(memory)
        qkv = nn.LayerNorm(epsilon=LAYER_NORM_EPSILON, name="qkv_norm")(qkv)
        qkv = qkv.reshape(*memory.shape[:-1], self.num_heads, qkv_size)
        q, k, v = jnp.split(qkv, [self.key_size, 2 * self.key_size], axis=-1)
        q = q * self.key_size**-0.5
        weights = jax.nn.softmax(jnp.einsum("bqhd,bkhd->bhqk", q, k), axis=-1)
        attended = jnp.einsum("bhqk,bkhd->bqhd", weights, v)
        return attended.reshape(*memory.shape[:-1], self.num_heads * self.head_size), weights


class RelationalMemory(MemoryCore):
    """RMC (module docstring); carry M [B, mem_slots, mem_size], output flatten(M') [B, slots * size]."""

    mem_slots: int = 4
    """rows of the memory (BoxWorld, Mini Pacman: 4; Nth Farthest: 1, 8 or 16; language: 1)"""
    head_size: int = 64
    """units per head; a row has head_size * num_heads units (BoxWorld: 1024 total / 4 slots / 4 heads = 64)"""
    num_heads: int = 4
    """attention heads"""
    num_blocks: int = 1
    """rounds of attention per step (every paper setting: 1)"""
    attention_mlp_layers: int = 2
    """layers of the row-wise MLP after attention, each mem_size wide (sonnet's default 2; language: 5)"""
    key_size: int | None = None
    """width of queries and keys per head (None: head_size)"""
    gate_style: Literal["unit", "memory", "none"] = "unit"
    """gates per unit, per memory slot, or no gating"""
    input_bias: float = 0.0
    """added to the input gate before its sigmoid"""
    forget_bias: float = 1.0
    """added to the forget gate before its sigmoid"""

    def __post_init__(self):
        check_positive(self, "mem_slots", "head_size", "num_heads", "num_blocks", "attention_mlp_layers")
        if self.key_size is not None and self.key_size < 1:
            raise ValueError(f"rmc key_size must be >= 1 (or None for head_size), got {self.key_size}")
        if self.gate_style not in GATE_STYLES:
            raise ValueError(f"rmc gate_style must be one of {GATE_STYLES}, got {self.gate_style!r}")
        super().__post_init__()

    @property
    def mem_size(self) -> int:
        return self.head_size * self.num_heads

    def initialize_carry(self, rng, batch_shape):
        return initial_memory(batch_shape, self.mem_slots, self.mem_size)

    @nn.compact
    def step(self, memory, x, reset):
        row = nn.Dense(self.mem_size, name="input")(x.reshape(x.shape[0], -1))
        attended = self._attend(jnp.concatenate([memory, row[:, None]], axis=1))[:, :-1]
        if self.gate_style == "none":
            new_memory = attended
        else:
            gates = 2 * self.mem_size if self.gate_style == "unit" else 2
            gate_logits = nn.Dense(gates, name="gate_input")(row)[:, None] + nn.Dense(gates, name="gate_memory")(jnp.tanh(memory))
            input_gate, forget_gate = jnp.split(gate_logits, 2, axis=-1)
            input_gate = jax.nn.sigmoid(input_gate + self.input_bias)
            forget_gate = jax.nn.sigmoid(forget_gate + self.forget_bias)
            new_memory = input_gate * jnp.tanh(attended) + forget_gate * memory
        return new_memory, new_memory.reshape(new_memory.shape[0], -1)

    @nn.nowrap
    def _attend(self, memory):
        mlp_layers = [nn.Dense(self.mem_size, name=f"mlp_{i}") for i in range(self.attention_mlp_layers)]

        def mlp(z):
            for i, layer in enumerate(mlp_layers):
                z = layer(z)
                if i < len(mlp_layers) - 1:
                    z = jax.nn.relu(z)
            return z

        for block in range(self.num_blocks):
            attention = RelationalAttention(self.num_heads, self.head_size, self.key_size or self.head_size, name=f"attention_{block}")
            attended, weights = attention(memory)
            self.sow("intermediates", "attention", weights)
            memory = nn.LayerNorm(epsilon=LAYER_NORM_EPSILON, name=f"attention_norm_{block}")(memory + attended)
            memory = nn.LayerNorm(epsilon=LAYER_NORM_EPSILON, name=f"mlp_norm_{block}")(mlp(memory) + memory)
        return memory


register("rmc", RelationalMemory)
