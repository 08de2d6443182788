"""LSTM core (Hochreiter & Schmidhuber 1997) with forget-gate bias 1.0.

    i, f, g, o = split(W [x, h] + b),   b_f = 1
    c' = σ(f) ⊙ c + σ(i) ⊙ tanh(g),    h' = σ(o) ⊙ tanh(c')

W = [W_x; W_h] starts as sonnet v1's and Haiku's LSTMs start it (``weight_init="fused"``): one
truncated normal of standard deviation 1/sqrt(x + h) over the whole kernel, the initialisation of
the papers' LSTM baselines. ``"split"`` draws W_x at 1/sqrt(x) and W_h at 1/sqrt(h), each part by
its own fan-in (the scales of Keras' and Flax's LSTMs), so the input moves the gates about
sqrt((x + h) / x) times more at the start. On Nth Farthest the two differ qualitatively
(docs/results.md, Nth Farthest).
"""

from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp

from memrl.cores.base import MemoryCore, register
from memrl.settings import check_positive

WEIGHT_INITS = ("fused", "split")


def check_weight_init(owner, field: str = "weight_init") -> None:
    """Refuse a ``field`` of ``owner`` that is not one of WEIGHT_INITS."""
    if getattr(owner, field) not in WEIGHT_INITS:
        raise ValueError(f"{type(owner).__name__}.{field} must be one of {WEIGHT_INITS}, got {getattr(owner, field)!r}")


def _lstm_kernel_init(inputs: int, weight_init: str):
    """The kernel [inputs + hidden, 4·hidden]: one fan-in over it ("fused") or one per part ("split")."""
    lecun = nn.initializers.lecun_normal()
    if weight_init == "fused":
        return lecun

    def init(key, shape, dtype=jnp.float32):
        input_key, recurrent_key = jax.random.split(key)
        return jnp.concatenate(
            [lecun(input_key, (inputs, shape[1]), dtype), lecun(recurrent_key, (shape[0] - inputs, shape[1]), dtype)]
        )

    return init


def _lstm_bias_init(hidden: int):
    def init(key, shape, dtype=jnp.float32):
        return jnp.zeros(shape, dtype).at[hidden : 2 * hidden].set(1.0)

    return init


class SplitGates(nn.Module):
    """An LSTM's gates W [x, h] + b (a kernel [x + h, 4·hidden] and the bias, as one Dense over
    [x, h] has them): fused for one step, or split as W_x x + b, which needs no carry (an unroll
    computes it for all steps in one matrix product), and W_h h per step."""

    hidden: int
    weight_init: str = "fused"

    @nn.compact
    def __call__(self, x, h=None):
        """W [x, h] + b, or W_x x + b when ``h`` is None."""
        kernel = self.param(
            "kernel", _lstm_kernel_init(x.shape[-1], self.weight_init), (x.shape[-1] + self.hidden, 4 * self.hidden)
        )
        bias = self.param("bias", _lstm_bias_init(self.hidden), (4 * self.hidden,))
        if h is None:
            return x @ kernel[: x.shape[-1]] + bias
        return jnp.concatenate([x, h], axis=-1) @ kernel + bias

    def recurrent(self, h):
        """W_h h (the kernel exists: ``__call__`` made it, and runs before every step)."""
        return h @ self.get_variable("params", "kernel")[-self.hidden :]


def lstm_update(c, gates):
    """((c', h'), h') from the cell c and the gates' logits [i, f, g, o] (module docstring)."""
    i, f, g, o = jnp.split(gates, 4, axis=-1)
    c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
    h = jax.nn.sigmoid(o) * jnp.tanh(c)
    return (c, h), h


class LSTMCellFused(nn.Module):
    """One fused-matmul LSTM cell; carry (c, h). Its ``gates`` also compute the split form."""

    hidden: int
    weight_init: str = "fused"

    def setup(self):
        self.gates = SplitGates(self.hidden, self.weight_init)

    def __call__(self, carry, x):
        c, h = carry
        return lstm_update(c, self.gates(x, h))


def lstm_zeros(batch_shape, hidden):
    return (jnp.zeros((*batch_shape, hidden)), jnp.zeros((*batch_shape, hidden)))


class LSTM(MemoryCore):
    """Single-layer LSTM core; output is h."""

    hidden: int = 256
    """units of the LSTM state"""
    weight_init: str = "fused"
    """"fused" (one fan-in over the input and the state together, as sonnet and Haiku) or "split" (each by its own)"""

    def __post_init__(self):
        check_positive(self, "hidden")
        check_weight_init(self)
        super().__post_init__()

    def initialize_carry(self, rng, batch_shape):
        return lstm_zeros(batch_shape, self.hidden)

    def setup(self):
        self.cell = LSTMCellFused(self.hidden, self.weight_init)

    def step(self, carry, x, reset):
        return self.cell(carry, x)

    def map_input(self, x, batch_ndim: int):
        """W_x x + b, the input's part of the gates."""
        return self.cell.gates(x)

    def step_mapped(self, carry, input_gates, reset):
        c, h = carry
        return lstm_update(c, input_gates + self.cell.gates.recurrent(h))


class StackedLSTM(MemoryCore):
    """``layers`` LSTMs on top of each other (AMRL's LSTM_STACK baseline uses two); output is the
    top layer's h."""

    hidden: int = 256
    """units of each LSTM's state"""
    layers: int = 2
    """LSTMs stacked, each reading the one below"""
    weight_init: str = "fused"
    """"fused" (one fan-in over the input and the state together, as sonnet and Haiku) or "split" (each by its own)"""

    def __post_init__(self):
        check_positive(self, "hidden", "layers")
        check_weight_init(self)
        super().__post_init__()

    def initialize_carry(self, rng, batch_shape):
        return tuple(lstm_zeros(batch_shape, self.hidden) for _ in range(self.layers))

    @nn.compact
    def step(self, carry, x, reset):
        new_carry = []
        for layer in range(self.layers):
            state, x = LSTMCellFused(self.hidden, self.weight_init, name=f"cell_{layer}")(carry[layer], x)
            new_carry.append(state)
        return tuple(new_carry), x


register("lstm", LSTM)
register("lstm-stack", StackedLSTM)
