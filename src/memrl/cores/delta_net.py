"""DeltaNet: linear attention whose fast weights learn by the delta rule (Schlag et al. 2021,
"Linear Transformers Are Secretly Fast Weight Programmers", Sec. 4.2; in the form of Yang et al.
2024, "Parallelizing Linear Transformers with the Delta Rule over Sequence Length", Sec. 2-3), and
its gated form (Yang et al. 2025, "Gated Delta Networks", Sec. 3).

    q_t, k_t = normalise(SiLU(W_q x_t)), normalise(SiLU(W_k x_t))     (per head, unit L2 norm)
    v_t = W_v x_t,   β_t = σ(w_βᵀ x_t + b_β)                            (the writing strength, per head)
    S_t = α_t S_{t−1} (I − β_t k_t k_tᵀ) + β_t v_t k_tᵀ                 (S ∈ R^{d_v×d_k}; S_0 = 0)
        = α_t S_{t−1} + β_t (v_t − α_t S_{t−1} k_t) k_tᵀ
    o_t = S_t q_t,   y_t = W_o [o_t over heads]

DeltaNet is α_t = 1: each write replaces what the key k_t read (S k_t moves a fraction β_t of the way
to v_t) instead of adding to it, as linear attention does, so the memory does not fill with
overlapping writes. Gated DeltaNet (``gated``) also decays the whole memory, α_t = exp(−g_t) with
g_t = exp(a) · softplus(w_αᵀ x_t + b_α) per head (Mamba-2's gate; a = log of 1..16 across heads at
initialisation, b_α such that softplus(b_α) is log-uniform in [0.001, 0.1], as in the paper's code).
The recurrence is not diagonal (I − β k kᵀ mixes the key dimensions), so ``unroll`` is a sequential
scan over time after one projection of every step's input (the papers' chunked parallel form is an
accelerator's; the short causal convolutions their blocks add before q, k, v are left out, as for
``s6``). memax's ``DeltaNet`` (0.1.x) applies the transition on the left, S_t = (I − β k kᵀ) S_{t−1}
+ β v kᵀ (checked: its outputs equal that form to 4e-8 and differ from the delta rule's by 0.4), so
that a write does not make S k = v; this core is checked against a NumPy transcription of the
papers' rule instead.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
from flax import linen as nn

from memrl.cores.base import MemoryCore, register
from memrl.settings import check_positive

NORM_EPSILON = 1e-6
"""keeps the L2 normalisation of q and k away from 0/0"""
GATE_RANGE = (0.001, 0.1)
"""the range of softplus(b_α) at initialisation (log-uniform), Mamba-2's and the paper's code's"""


def unit(x: jax.Array) -> jax.Array:
    """x / ‖x‖₂ over the last axis."""
    return x / (jnp.linalg.norm(x, axis=-1, keepdims=True) + NORM_EPSILON)


def gate_bias_init(key, shape, dtype=jnp.float32):
    """b_α with softplus(b_α) log-uniform in ``GATE_RANGE`` (the inverse softplus of a log-uniform draw)."""
    low, high = (math.log(v) for v in GATE_RANGE)
    step = jnp.exp(jax.random.uniform(key, shape, dtype, minval=low, maxval=high))
    return step + jnp.log(-jnp.expm1(-step))


class DeltaNet(MemoryCore):
    """DeltaNet (``gated`` False) or Gated DeltaNet, ``num_heads`` heads (module docstring)."""

    hidden: int = 128
    """width of the output map W_o"""
    num_heads: int = 4
    """heads, each with its own fast-weight matrix (head_size x head_size)"""
    head_size: int = 32
    """width of each head's queries, keys and values"""
    gated: bool = False
    """Gated DeltaNet: decay the memory by α_t = exp(−g_t) before each delta-rule write"""

    def __post_init__(self):
        for name in ("hidden", "num_heads", "head_size"):
            check_positive(self, name)
        super().__post_init__()

    def setup(self):
        width = self.num_heads * self.head_size
        self.query = nn.Dense(width, use_bias=False, name="query")
        self.key = nn.Dense(width, use_bias=False, name="key")
        self.value = nn.Dense(width, use_bias=False, name="value")
        self.beta = nn.Dense(self.num_heads, name="beta")
        self.output = nn.Dense(self.hidden, name="output")
        if self.gated:
            self.decay = nn.Dense(self.num_heads, bias_init=gate_bias_init, name="decay")
            self.decay_log_rate = self.param(
                "decay_log_rate", lambda _: jnp.log(jnp.linspace(1.0, 16.0, self.num_heads))
            )

    def heads(self, x):
        return x.reshape(*x.shape[:-1], self.num_heads, self.head_size)

    def initialize_carry(self, rng, batch_shape):
        return jnp.zeros((*batch_shape, self.num_heads, self.head_size, self.head_size))

    def map_input(self, x, batch_ndim: int):
        """q, k (unit vectors), v, β and the log decay −g of every step at once (none of them reads the carry)."""
        q, k = (unit(self.heads(jax.nn.silu(f(x)))) for f in (self.query, self.key))
        log_decay = jnp.zeros(x.shape[:-1] + (self.num_heads,))
        if self.gated:
            log_decay = -jnp.exp(self.decay_log_rate) * jax.nn.softplus(self.decay(x))
        return q, k, self.heads(self.value(x)), jax.nn.sigmoid(self.beta(x)), log_decay

    def step_mapped(self, carry, mapped, reset):
        q, k, v, beta, log_decay = mapped
        memory = jnp.exp(log_decay)[..., None, None] * carry  # S [.., heads, d_v, d_k]
        read = jnp.einsum("...vk,...k->...v", memory, k)
        memory = memory + beta[..., None, None] * (v - read)[..., :, None] * k[..., None, :]
        o = jnp.einsum("...vk,...k->...v", memory, q)
        return memory, self.output(o.reshape(*o.shape[:-2], -1))

    def step(self, carry, x, reset):
        return self.step_mapped(carry, self.map_input(x, 1), reset)


register("delta-net", DeltaNet)
register("gated-delta-net", DeltaNet, fixed=dict(gated=True))
