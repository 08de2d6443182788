"""S6, Mamba's selective state-space layer (Gu & Dao 2023, "Mamba: Linear-Time Sequence Modeling
with Selective State Spaces", Sec. 3.2, Algorithm 2, and Sec. 3.4's block), in parallel-scan form.

    u_t = SiLU(W_u x_t),  g_t = W_g x_t                        (the block's two branches, width E)
    Δ_t = softplus(W_Δ (W_r u_t) + b_Δ)                        (per channel; W_r to rank ⌈E/16⌉)
    B_t = W_B u_t,  C_t = W_C u_t                              (N each: the selection)
    h_t = exp(Δ_t A) ⊙ h_{t−1} + (Δ_t B_t) u_t                 (h ∈ R^{E×N}, A = −exp(A_log); h_0 = 0)
    y_t = W_o [(C_t · h_t + D ⊙ u_t) ⊙ SiLU(g_t)]

B is discretised as Δ B (Euler), as the paper's implementation does; A by zero-order hold.
Initialisation as the paper's code: A_log = log(1..N) for every channel (S4D-real), D = 1, and b_Δ
such that softplus(b_Δ) is log-uniform in [0.001, 0.1]. What differs from a Mamba block: no short
causal convolution before the SSM (a carry of the last inputs that no memory claim here needs), and
no normalisation or residual around it (the agent's encoder and head stand there).

Train it with Adam's ε at 1e-8, as Mamba is trained: at this initialisation the scan parameters'
gradients start near 1e-10-1e-7 (A_log the smallest; ``memrl analyze gradient-scale``), so under PPO's
default ε of 1e-5 Adam barely moves them and S6 does not learn (``--adam-eps 1e-8``; the contract's
check at PPO's defaults keeps this visible).
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
from flax import linen as nn

from memrl.cores.base import register
from memrl.cores.linear_recurrence import LinearRecurrentCore, chosen_scan
from memrl.settings import check_positive

DT_RANGE = (0.001, 0.1)
"""the range of Δ at initialisation (log-uniform), as Mamba's code initialises dt_proj's bias"""


def dt_bias_init(key, shape, dtype=jnp.float32):
    """b_Δ = softplus⁻¹(Δ) for Δ log-uniform in ``DT_RANGE``."""
    low, high = (math.log(v) for v in DT_RANGE)
    dt = jnp.exp(jax.random.uniform(key, shape, dtype) * (high - low) + low)
    return dt + jnp.log(-jnp.expm1(-dt))


class S6(LinearRecurrentCore):
    """Mamba's selective SSM in its gated block (module docstring)."""

    hidden: int = 128
    """width of the output map W_o"""
    channels: int = 128
    """channels E the SSM runs on (the block's expanded width)"""
    state: int = 16
    """state size N per channel (the paper: 16)"""

    def __post_init__(self):
        for name in ("hidden", "channels", "state"):
            check_positive(self, name)
        super().__post_init__()

    def setup(self):
        e, n = self.channels, self.state
        self.input_branch = nn.Dense(e, name="input")
        self.gate_branch = nn.Dense(e, name="gate")
        self.dt_rank = nn.Dense(math.ceil(e / 16), use_bias=False, name="dt_rank")
        self.dt = nn.Dense(e, bias_init=dt_bias_init, name="dt")
        self.select_b = nn.Dense(n, use_bias=False, name="B")
        self.select_c = nn.Dense(n, use_bias=False, name="C")
        self.A_log = self.param(
            "A_log", lambda _, shape: jnp.log(jnp.broadcast_to(jnp.arange(1, n + 1.0), shape)), (e, n)
        )
        self.D = self.param("D", nn.initializers.ones, (e,))
        self.output = nn.Dense(self.hidden, name="output")

    def zero_state(self, batch_shape):
        return jnp.zeros((*batch_shape, self.channels, self.state))

    def projections(self, x):
        """u, Δ [..., E], the selections B and C [..., N] and the gate g of every step at once."""
        u = jax.nn.silu(self.input_branch(x))
        delta = jax.nn.softplus(self.dt(self.dt_rank(u)))
        return u, delta, self.select_b(u), self.select_c(u), self.gate_branch(x)

    def transition(self, u, delta, b):
        """(exp(Δ A), Δ B u) [..., E, N]: a step's decay and write."""
        delta = delta[..., None]
        return jnp.exp(delta * -jnp.exp(self.A_log)), delta * b[..., None, :] * u[..., None]

    def elements(self, x):
        u, delta, b, c, g = self.projections(x)
        decay, written = self.transition(u, delta, b)
        return decay, written, (u, c, g)

    def read(self, contracted, u, g):
        """y = W_o [(C h + D ⊙ u) ⊙ SiLU(g)] from C·h already contracted [..., E]."""
        return self.output((contracted + self.D * u) * jax.nn.silu(g))

    def readout(self, h, context):
        u, c, g = context
        return self.read(jnp.einsum("...en,...n->...e", h, c), u, g)

    def unroll(self, carry, xs, resets):
        """The associative scan as every linear-recurrent core has it, or (``scan`` sequential) one
        that forms each step's decay and write and contracts C·h inside the step, under
        ``jax.checkpoint``: the [T, B, E, N] elements and states are never all kept, only C·h [T, B, E]."""
        if chosen_scan(self.scan) == "associative":
            return super().unroll(carry, xs, resets)
        u, delta, b, c, g = self.projections(xs)

        @jax.checkpoint
        def step(h, inputs):
            u_t, delta_t, b_t, c_t, reset = inputs
            decay, written = self.transition(u_t, delta_t, b_t)
            h = jnp.where(reset[:, None, None], 0.0, decay * h) + written
            return h, jnp.einsum("...en,...n->...e", h, c_t)

        h, contracted = jax.lax.scan(step, self.state_of(carry), (u, delta, b, c, resets))
        return self.carry_of(h), self.read(contracted, u, g)


register("s6", S6)
