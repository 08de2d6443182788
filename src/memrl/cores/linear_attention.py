"""Linear attention as a recurrence (Katharopoulos et al. 2020, "Transformers are RNNs: Fast
Autoregressive Transformers with Linear Attention", Sec. 3.2 and 3.4, eqs. 16-20).

    φ(x) = elu(x) + 1
    q_t, k_t, v_t = W_q x_t, W_k x_t, W_v x_t              (per head)
    S_t = S_{t−1} + φ(k_t) v_tᵀ,   z_t = z_{t−1} + φ(k_t)    (S_0 = 0, z_0 = 0)
    o_t = φ(q_t)ᵀ S_t / (φ(q_t)ᵀ z_t + ε),  y_t = W_o [o_t over heads]

Causal attention with the feature map φ in place of the softmax: the state is the running sums
S and z, so a step costs the same at any time. memax's ``FART`` keeps only the latest φ(k_t) as
the normaliser's sum (its semigroup returns k, not the running sum): not the paper's eq. 20, so this
core is checked against a NumPy transcription of the equations instead.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from flax import linen as nn

from memrl.cores.base import broadcast_right, register
from memrl.cores.linear_recurrence import LinearRecurrentCore, chosen_scan
from memrl.settings import check_positive

EPSILON = 1e-6
"""keeps the normaliser away from 0 (φ > 0, so it is 0 only before any key is summed)"""


def feature_map(x: jax.Array) -> jax.Array:
    """φ(x) = elu(x) + 1 (eq. 10): positive, so every attention weight is."""
    return jax.nn.elu(x) + 1.0


class LinearAttention(LinearRecurrentCore):
    """Causal linear attention with ``num_heads`` heads (module docstring)."""

    hidden: int = 128
    """width of the output map W_o"""
    num_heads: int = 4
    """heads, each with its own fast-weight state (head_size x head_size)"""
    head_size: int = 32
    """width of each head's queries, keys and values"""

    def __post_init__(self):
        for name in ("hidden", "num_heads", "head_size"):
            check_positive(self, name)
        super().__post_init__()

    def setup(self):
        width = self.num_heads * self.head_size
        self.query = nn.Dense(width, name="query")
        self.key = nn.Dense(width, name="key")
        self.value = nn.Dense(width, name="value")
        self.output = nn.Dense(self.hidden, name="output")

    def heads(self, x):
        return x.reshape(*x.shape[:-1], self.num_heads, self.head_size)

    def zero_state(self, batch_shape):
        heads = (*batch_shape, self.num_heads, self.head_size)
        return {"kv": jnp.zeros((*heads, self.head_size)), "k": jnp.zeros(heads)}

    def projections(self, x):
        """φ(q), φ(k) and v of every step at once, per head."""
        q, k, v = (self.heads(f(x)) for f in (self.query, self.key, self.value))
        return feature_map(q), feature_map(k), v

    def elements(self, x):
        q, k, v = self.projections(x)
        summed = {"kv": k[..., :, None] * v[..., None, :], "k": k}
        return jnp.ones(x.shape[:-1]), summed, q

    def attended(self, state, q):
        """o = φ(q)ᵀ S / (φ(q)ᵀ z + ε) per head."""
        numerator = jnp.einsum("...hk,...hkv->...hv", q, state["kv"])
        normaliser = jnp.einsum("...hk,...hk->...h", q, state["k"])[..., None] + EPSILON
        return numerator / normaliser

    def read(self, o):
        return self.output(o.reshape(*o.shape[:-2], -1))

    def readout(self, state, q):
        return self.read(self.attended(state, q))

    def unroll(self, carry, xs, resets):
        """The associative scan as every linear-recurrent core has it, or (``scan`` sequential) one
        that adds each step's φ(k) vᵀ and reads with φ(q) inside the step, under ``jax.checkpoint``:
        the [T, B, heads, d, d] sums are never all kept, only each step's read [T, B, heads, d]."""
        if chosen_scan(self.scan) == "associative":
            return super().unroll(carry, xs, resets)
        q, k, v = self.projections(xs)

        @jax.checkpoint
        def step(state, inputs):
            q_t, k_t, v_t, reset = inputs
            kept = jax.tree.map(lambda s: jnp.where(broadcast_right(reset, s), 0.0, s), state)
            state = {"kv": kept["kv"] + k_t[..., :, None] * v_t[..., None, :], "k": kept["k"] + k_t}
            return state, self.attended(state, q_t)

        state, o = jax.lax.scan(step, carry, (q, k, v, resets))
        return state, self.read(o)


register("linear-attention", LinearAttention)
