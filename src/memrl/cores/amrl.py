"""AMRL: aggregated memory (Beck et al. 2020, "AMRL: Aggregated Memory for Reinforcement Learning").

    h_t = LSTM(x_t);  [a_t, s_t] = split(h_t)          (halves of the LSTM output)
    m_t = AGG(m_{t-1}, a_t),  m_0 = 0                   (order-invariant aggregator)
    y_t = [s_t, m_t]                                    (skip half, then aggregate)

AGG is max (m_t = max(m_{t-1}, a_t), so max(0, a_1) at the first step), avg (running sum
divided by the step count) or sum. With ``straight_through`` the backward pass treats AGG as the
identity: dm_t/dm_{t-1} = dm_t/da_t = I for max, and the avg's division by t is skipped in the
backward pass (forward sum/t, backward passes the upstream gradient to the sum unchanged).

In memrl the paper's FF1 (256-256, ReLU) is the agent's observation encoder and FF2 (256) the
agent's head, so this core is exactly LSTM(256) -> split -> aggregate as in the paper's Fig. 2.
``set`` is the paper's SET ablation: the AVG aggregator over the encoded observations, no LSTM
and no straight-through.
"""

from __future__ import annotations

from typing import Literal

import flax.linen as nn
import jax
import jax.numpy as jnp

from memrl.cores.base import MemoryCore, register
from memrl.cores.lstm import LSTMCellFused, lstm_zeros
from memrl.settings import check_positive

Aggregator = Literal["max", "avg", "sum"]


def straight_through(forward: jax.Array, backward: jax.Array) -> jax.Array:
    """Value of ``forward`` with the gradient of ``backward``."""
    return backward + jax.lax.stop_gradient(forward - backward)


def aggregate(kind: Aggregator, total, count, a, use_straight_through: bool):
    """One aggregator step. ``total`` is the running max or sum, ``count`` the steps so far
    (including this one). Returns (new total, output)."""
    if kind == "max":
        new = jnp.maximum(total, a)
        if use_straight_through:
            new = straight_through(new, total + a)
        return new, new
    total = total + a
    if kind == "sum":
        return total, total
    mean = total / count[..., None]
    return total, straight_through(mean, total) if use_straight_through else mean


class AMRL(MemoryCore):
    """LSTM followed by an order-invariant aggregator over half of its output."""

    aggregator: Aggregator = "max"
    """how the memory aggregates the LSTM's outputs over time: max, avg or sum (fixed by the core's name)"""
    hidden: int = 256
    """units of the LSTM and of the aggregated memory"""
    straight_through: bool = True
    """pass gradients through the aggregator straight, as AMRL's ST estimator does"""

    def __post_init__(self):
        if self.aggregator not in ("max", "avg", "sum"):
            raise ValueError(f"aggregator must be 'max', 'avg' or 'sum', got {self.aggregator!r}")
        check_positive(self, "hidden")
        if self.hidden % 2:
            raise ValueError(f"hidden must be even (its output is split in half), got {self.hidden}")
        super().__post_init__()

    def initialize_carry(self, rng, batch_shape):
        half = self.hidden // 2
        return {
            "lstm": lstm_zeros(batch_shape, self.hidden),
            "total": jnp.zeros((*batch_shape, half)),
            "count": jnp.zeros(batch_shape),
        }

    @nn.compact
    def step(self, carry, x, reset):
        lstm_state, h = LSTMCellFused(self.hidden, name="lstm")(carry["lstm"], x)
        a, skip = jnp.split(h, 2, axis=-1)
        count = carry["count"] + 1.0
        total, m = aggregate(self.aggregator, carry["total"], count, a, self.straight_through)
        carry = {"lstm": lstm_state, "total": total, "count": count}
        return carry, jnp.concatenate([skip, m], axis=-1)


class SET(MemoryCore):
    """Running average of the (encoded) inputs: the AMRL paper's SET ablation. ``features`` must
    equal the input width (the carry's shape is fixed before any input is seen)."""

    features: int = 256
    """width of the aggregated (summed) features"""

    def __post_init__(self):
        check_positive(self, "features")
        super().__post_init__()

    def initialize_carry(self, rng, batch_shape):
        return {"total": jnp.zeros((*batch_shape, self.features)), "count": jnp.zeros(batch_shape)}

    def step(self, carry, x, reset):
        if x.shape[-1] != self.features:
            raise ValueError(
                f"SET.features must equal the width of its inputs ({x.shape[-1]}: the encoder's output), got {self.features}"
            )
        count = carry["count"] + 1.0
        total, mean = aggregate("avg", carry["total"], count, x, use_straight_through=False)
        return {"total": total, "count": count}, mean


register("amrl-max", AMRL, fixed=dict(aggregator="max"))
register("amrl-avg", AMRL, fixed=dict(aggregator="avg"))
register("amrl-sum", AMRL, fixed=dict(aggregator="sum"))
register("set", SET)
