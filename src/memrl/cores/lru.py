"""Linear Recurrent Unit (Orvieto et al. 2023, "Resurrecting Recurrent Neural Networks for Long
Sequences", Sec. 3 and App. A).

    u_t = W_in x_t                                       (a linear map to the layer's width H)
    λ = exp(−exp(ν) + i exp(θ)),  γ = exp(γ_log)          (initially γ = sqrt(1 − |λ|²))
    h_t = λ ⊙ h_{t−1} + γ ⊙ (B u_t)                       (h ∈ C^N, B ∈ C^{N×H}; h_0 = 0)
    y_t = Re(C h_t) + D ⊙ u_t                             (C ∈ C^{H×N}, D ∈ R^H)

Initialisation (App. A): |λ| uniform on the ring [r_min, r_max] (ν = log(−½ log(U (r_max² − r_min²)
+ r_min²))), its phase uniform in [0, max_phase] (θ = log(max_phase U)); B's real and imaginary parts
N(0, 1/(2H)), C's N(0, 1/N), D N(0, 1). Parameter names and shapes are those of minimal-LRU and
memax's ``LRU`` (B_re, B_im [N, H], C_re, C_im [H, N], D, nu_log, theta_log, gamma_log), so
parameters move between them unchanged (a test checks memax's outputs). The paper stacks such layers
in residual blocks with an MLP; in memrl the agent's head follows the core. The carry holds h as its
real and imaginary parts.
"""

from __future__ import annotations

import math
from functools import partial

import jax
import jax.numpy as jnp
from flax import linen as nn

from memrl.cores.base import register
from memrl.cores.linear_recurrence import ComplexStateCore
from memrl.settings import check_positive


def scaled_normal(key, shape, scale: float):
    """N(0, scale²) entries (B's and C's parts, D)."""
    return jax.random.normal(key, shape) * scale


def nu_log_init(key, shape, r_min: float, r_max: float):
    """log ν with |λ| = exp(−ν) uniform on the ring [r_min, r_max] (App. A)."""
    u = jax.random.uniform(key, shape)
    return jnp.log(-0.5 * jnp.log(u * (r_max**2 - r_min**2) + r_min**2))


def theta_log_init(key, shape, max_phase: float):
    """log θ with the phase θ uniform in [0, max_phase] (App. A)."""
    return jnp.log(max_phase * jax.random.uniform(key, shape))


def eigenvalues(nu_log: jax.Array, theta_log: jax.Array) -> jax.Array:
    """λ = exp(−exp(ν) + i exp(θ)): magnitude below 1 for any ν, so the recurrence is stable."""
    return jnp.exp(-jnp.exp(nu_log) + 1j * jnp.exp(theta_log))


class LRU(ComplexStateCore):
    """One LRU layer after a linear input map (module docstring)."""

    hidden: int = 128
    """width H of the layer's input (after the linear map) and output"""
    state: int = 128
    """complex state units N"""
    r_min: float = 0.0
    """smallest eigenvalue magnitude at initialisation"""
    r_max: float = 1.0
    """largest eigenvalue magnitude at initialisation (below 1: 0.9-0.999 in the paper's long-range runs)"""
    max_phase: float = 2 * math.pi
    """largest eigenvalue phase at initialisation (the paper: 2π, or π/10 for long ranges)"""

    def __post_init__(self):
        check_positive(self, "hidden")
        check_positive(self, "state")
        if not 0.0 <= self.r_min < self.r_max <= 1.0:
            raise ValueError(
                f"need 0 <= r_min < r_max <= 1 (eigenvalue magnitudes), got r_min {self.r_min}, r_max {self.r_max}"
            )
        if not 0.0 < self.max_phase <= 2 * math.pi:
            raise ValueError(f"max_phase must lie in (0, 2π], got {self.max_phase}")
        super().__post_init__()

    def setup(self):
        n, h = self.state, self.hidden
        self.input_map = nn.Dense(h, name="input")
        self.B_re = self.param("B_re", partial(scaled_normal, scale=1 / math.sqrt(2 * h)), (n, h))
        self.B_im = self.param("B_im", partial(scaled_normal, scale=1 / math.sqrt(2 * h)), (n, h))
        self.C_re = self.param("C_re", partial(scaled_normal, scale=1 / math.sqrt(n)), (h, n))
        self.C_im = self.param("C_im", partial(scaled_normal, scale=1 / math.sqrt(n)), (h, n))
        self.D = self.param("D", partial(scaled_normal, scale=1.0), (h,))
        self.nu_log = self.param("nu_log", partial(nu_log_init, r_min=self.r_min, r_max=self.r_max), (n,))
        self.theta_log = self.param("theta_log", partial(theta_log_init, max_phase=self.max_phase), (n,))
        self.gamma_log = self.param(
            "gamma_log", lambda _: jnp.log(jnp.sqrt(1 - jnp.abs(eigenvalues(self.nu_log, self.theta_log)) ** 2))
        )

    def elements(self, x):
        # u is real: γ ⊙ (B u) is two real products, (B_re u) + i (B_im u), not one complex product of 4
        u = self.input_map(x)
        gamma = jnp.exp(self.gamma_log)
        bu = jax.lax.complex(u @ (self.B_re * gamma[:, None]).T, u @ (self.B_im * gamma[:, None]).T)
        lam = jnp.broadcast_to(eigenvalues(self.nu_log, self.theta_log), (*u.shape[:-1], self.state))
        return lam, bu, u

    def readout(self, h, u):
        # Re(C h) = C_re h_re − C_im h_im: two real products; the imaginary part is never formed
        return h.real @ self.C_re.T - h.imag @ self.C_im.T + self.D * u


register("lru", LRU)
