"""Fast and Forgetful Memory (Morad et al. 2023, "Reinforcement Learning with Fast and Forgetful
Memory", Sec. 4), a memory designed for RL and tested on POPGym.

    x̃_t = (W_x x_t) ⊙ σ(W_i x_t)                                   (m trace inputs, gated)
    S_t = γ ⊙ S_{t−1} + x̃_t 1_cᵀ,   γ_jk = exp(−|α_j| + i ω_k)       (S ∈ C^{m×c}; S_0 = 0)
    z_t = W_z [Re S_t, Im S_t]                                       (the m·c state flattened)
    g_t = σ(W_o x_t)
    y_t = LN(z_t) ⊙ g_t + (W_s x_t) ⊙ (1 − g_t)                      (LN without scale or bias)

Each of the m traces decays at its own rate α_j and is read at c frequencies ω_k, so the state
holds both how long ago and how strongly something was written. The decays and frequencies are
learned. Initialisation follows the authors' code: α from halving every step (ln 2) to keeping 1%
(``forgotten_at``) after ``max_period`` steps, evenly spaced over the m traces (the authors' fastest
decay, 0.67 per step, is set by their float range, not a design choice); ω_k = 2π / p_k for periods
p evenly spaced from ``min_period`` to ``max_period``. The authors clamp α below 0; −|α| here keeps
every decay stable without a clamp. The recurrence is linear with a constant γ, so ``unroll`` is one
parallel scan (their cumulative-sum form over chunks computes the same).

memax 0.1.1's ``FFM`` differs in its output (LN(z ⊙ g) + x ⊙ (1 − g), no skip map) and its
initialisation (α in [1e-6, 0.5], periods up to 10,000); its aggregator is this one (a test checks).
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
from flax import linen as nn

from memrl.cores.base import register
from memrl.cores.linear_recurrence import LinearRecurrentCore
from memrl.settings import check_positive


def decays(trace: int, max_period: int, forgotten_at: float) -> jax.Array:
    """Initial α [trace]: from ln 2 (halving every step) to ln(1/forgotten_at)/max_period."""
    return jnp.linspace(math.log(2.0), math.log(1.0 / forgotten_at) / max_period, trace)


def frequencies(context: int, min_period: int, max_period: int) -> jax.Array:
    """Initial ω [context]: 2π over periods evenly spaced from min_period to max_period."""
    return 2 * jnp.pi / jnp.linspace(min_period, max_period, context)


class FFM(LinearRecurrentCore):
    """The FFM layer (module docstring)."""

    hidden: int = 128
    """output width H"""
    trace: int = 32
    """traces m, each with its own decay"""
    context: int = 4
    """frequencies c at which every trace is read (the state holds m·c complex numbers)"""
    min_period: int = 1
    """shortest initial period of the frequencies, in steps"""
    max_period: int = 1024
    """longest initial period, and the steps after which the slowest trace keeps forgotten_at"""
    forgotten_at: float = 0.01
    """what the slowest trace keeps of an input after ``max_period`` steps, at initialisation"""

    def __post_init__(self):
        check_positive(self, "hidden", "trace", "context", "min_period", "max_period")
        if self.min_period > self.max_period:
            raise ValueError(f"min_period ({self.min_period}) must be at most max_period ({self.max_period})")
        if not 0.0 < self.forgotten_at < 0.5:
            raise ValueError(
                f"forgotten_at must lie in (0, 0.5) (below the fastest trace's one half per step), got {self.forgotten_at}"
            )
        super().__post_init__()

    def setup(self):
        self.trace_input = nn.Dense(self.trace, name="trace_input")
        self.input_gate = nn.Dense(self.trace, name="input_gate")
        self.mix = nn.Dense(self.hidden, name="mix")
        self.output_gate = nn.Dense(self.hidden, name="output_gate")
        self.skip = nn.Dense(self.hidden, name="skip")
        self.alpha = self.param("alpha", lambda _: decays(self.trace, self.max_period, self.forgotten_at))
        self.omega = self.param("omega", lambda _: frequencies(self.context, self.min_period, self.max_period))
        self.norm = nn.LayerNorm(epsilon=1e-5, use_scale=False, use_bias=False)

    def zero_state(self, batch_shape):
        return jnp.zeros((*batch_shape, self.trace, self.context), jnp.complex64)

    def carry_of(self, s):
        return {"re": s.real, "im": s.imag}

    def state_of(self, carry):
        return jax.lax.complex(carry["re"], carry["im"])

    def elements(self, x):
        gated = self.trace_input(x) * jax.nn.sigmoid(self.input_gate(x))
        gamma = jnp.exp(-jnp.abs(self.alpha)[:, None] + 1j * self.omega)  # [trace, context]
        b = jnp.broadcast_to(gated[..., None], (*gated.shape, self.context)).astype(jnp.complex64)
        return jnp.broadcast_to(gamma, b.shape), b, x

    def readout(self, s, x):
        flat = jnp.stack([s.real, s.imag], -1).reshape(*s.shape[:-2], 2 * self.trace * self.context)
        gate = jax.nn.sigmoid(self.output_gate(x))
        return self.norm(self.mix(flat)) * gate + self.skip(x) * (1.0 - gate)


register("ffm", FFM)
