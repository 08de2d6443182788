"""mLSTM, the matrix-memory LSTM of xLSTM (Beck et al. 2024, "xLSTM: Extended Long Short-Term
Memory", Sec. 2.3, eqs. 19-27, with the stabiliser of App. A.3).

    q_t = W_q x_t,  k_t = W_k x_t / sqrt(d),  v_t = W_v x_t                  (per head)
    ĩ_t = w_iᵀ x_t + b_i,  log f_t = log σ(w_fᵀ x_t + b_f),  o_t = σ(W_o x_t)  (ĩ, f per head)
    m_t = max(log f_t + m_{t−1}, ĩ_t)                                       (the stabiliser; m_0 = 0)
    i'_t = exp(ĩ_t − m_t),  f'_t = exp(log f_t + m_{t−1} − m_t)
    C_t = f'_t C_{t−1} + i'_t v_t k_tᵀ,   n_t = f'_t n_{t−1} + i'_t k_t        (C_0 = 0, n_0 = 0)
    h_t = o_t ⊙ C_t q_t / max(|n_tᵀ q_t|, exp(−m_t)),   y_t = W_out [h_t over heads]

The input gate is exponential, so a new write can outweigh everything stored (the stabiliser m keeps
the exponentials finite without changing h). Initialisation as the paper's code: the forget gate's
bias spaced from 3 to 6 across heads (remember by default), the input gate's weights 0 and bias
N(0, 0.1²). C q / max(|nᵀ q|, 1) is a covariance read normalised by how much was written along q.
What differs from an mLSTM block: no up-projection, short causal convolution, group norm or skip
around the cell (the agent's encoder and head stand there). The recurrence has a max, so ``unroll``
is a sequential scan after one projection of every step's input.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from flax import linen as nn

from memrl.cores.base import MemoryCore, register
from memrl.settings import check_positive

FORGET_BIAS = (3.0, 6.0)
"""the forget gate's bias at initialisation, spaced linearly across heads (the paper's code)"""


class MLSTM(MemoryCore):
    """One mLSTM cell with ``num_heads`` heads (module docstring)."""

    hidden: int = 128
    """width of the output map W_out"""
    num_heads: int = 4
    """heads, each with its own matrix memory (head_size x head_size)"""
    head_size: int = 32
    """width of each head's queries, keys and values"""

    def __post_init__(self):
        for name in ("hidden", "num_heads", "head_size"):
            check_positive(self, name)
        super().__post_init__()

    def setup(self):
        width, heads = self.num_heads * self.head_size, self.num_heads
        self.query = nn.Dense(width, name="query")
        self.key = nn.Dense(width, name="key")
        self.value = nn.Dense(width, name="value")
        self.output_gate = nn.Dense(width, name="output_gate")
        self.input_gate = nn.Dense(
            heads, kernel_init=nn.initializers.zeros, bias_init=nn.initializers.normal(0.1), name="input_gate"
        )
        self.forget_gate = nn.Dense(heads, bias_init=lambda *_: jnp.linspace(*FORGET_BIAS, heads), name="forget_gate")
        self.read_out = nn.Dense(self.hidden, name="output")

    def heads(self, x):
        return x.reshape(*x.shape[:-1], self.num_heads, self.head_size)

    def initialize_carry(self, rng, batch_shape):
        heads = (*batch_shape, self.num_heads)
        return {
            "C": jnp.zeros((*heads, self.head_size, self.head_size)),
            "n": jnp.zeros((*heads, self.head_size)),
            "m": jnp.zeros(heads),
        }

    def map_input(self, x, batch_ndim: int):
        """q, k, v, the output gate, ĩ and log f of every step at once (none of them reads the carry)."""
        q, k, v = (self.heads(f(x)) for f in (self.query, self.key, self.value))
        gate = jax.nn.sigmoid(self.heads(self.output_gate(x)))
        return q, k / jnp.sqrt(self.head_size), v, gate, self.input_gate(x), jax.nn.log_sigmoid(self.forget_gate(x))

    def step_mapped(self, carry, mapped, reset):
        q, k, v, gate, log_input, log_forget = mapped
        m = jnp.maximum(log_forget + carry["m"], log_input)
        input_scale, forget_scale = jnp.exp(log_input - m), jnp.exp(log_forget + carry["m"] - m)
        C = (
            forget_scale[..., None, None] * carry["C"]
            + input_scale[..., None, None] * v[..., :, None] * k[..., None, :]
        )
        n = forget_scale[..., None] * carry["n"] + input_scale[..., None] * k
        normaliser = jnp.maximum(jnp.abs(jnp.einsum("...k,...k->...", n, q)), jnp.exp(-m))
        h = gate * jnp.einsum("...vk,...k->...v", C, q) / normaliser[..., None]
        return {"C": C, "n": n, "m": m}, self.read_out(h.reshape(*h.shape[:-2], -1))

    def step(self, carry, x, reset):
        return self.step_mapped(carry, self.map_input(x, 1), reset)


register("mlstm", MLSTM)
