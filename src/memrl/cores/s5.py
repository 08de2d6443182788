"""S5, the simplified state-space layer (Smith, Warrington & Linderman 2023, "Simplified State Space
Layers for Sequence Modeling", Sec. 3 and App. B), with episode resets inside its scan as Lu et al.
2023 ("Structured State Space Models for In-Context Reinforcement Learning", Sec. 4) train it in RL.

    u_t = W_in x_t                                             (a linear map to the layer's width H)
    Λ̄ = exp(Λ Δ),  B̄ = Λ⁻¹ (Λ̄ − 1) B̃                           (zero-order hold, Δ = exp(log Δ) per state)
    h_t = Λ̄ ⊙ h_{t−1} + B̄ u_t                                   (h ∈ C^P, diagonal Λ ∈ C^P; h_0 = 0)
    y_t = 2 Re(C̃ h_t) + D ⊙ u_t                                 (conjugate symmetry: P states stand for 2P)

Initialisation as the paper's code: Λ is HiPPO-N's spectrum (the normal part of HiPPO-LegS,
diagonalised as S = V Λ V*, Λ's real parts their mean −1/2), repeated over ``blocks`` diagonal blocks
of 2P / blocks states each, of which conjugate symmetry keeps half; B̃ = V⁻¹ B with B LeCun-normal
[2P, H], C̃ = C V with C's real and imaginary parts standard normal [H, 2P], D N(0, 1), log Δ uniform
in [log 0.001, log 0.1]; B̃ and C̃ are stored as [..., 2] (real, imaginary). The paper stacks such layers with nonlinearities in residual blocks; in memrl
the agent's encoder and head stand around the one layer. The carry holds h as its real and imaginary parts.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
from flax import linen as nn

from memrl.cores.base import register
from memrl.cores.linear_recurrence import ComplexStateCore
from memrl.settings import check_positive

STEP_RANGE = (0.001, 0.1)
"""the range of Δ at initialisation (log-uniform per state), the paper's dt_min and dt_max"""
LOG_LOW, LOG_HIGH = (math.log(step) for step in STEP_RANGE)


def complex_parts(z: jax.Array) -> jax.Array:
    """A complex array as float32 [..., 2] (real, imaginary), as the paper's code stores B̃ and C̃."""
    return jnp.stack([z.real, z.imag], axis=-1).astype(jnp.float32)


def as_complex(parts: jax.Array) -> jax.Array:
    return jax.lax.complex(parts[..., 0], parts[..., 1])


def hippo_normal_spectrum(size: int) -> tuple[np.ndarray, np.ndarray]:
    """(Λ [size], V [size, size]): HiPPO-LegS plus its low-rank correction P Pᵀ is normal, S = V Λ V*;
    Λ's real parts are set to their mean (−1/2), as the paper's ``make_DPLR_HiPPO`` does."""
    p = np.sqrt(1 + 2 * np.arange(size))
    legs = -(np.tril(p[:, None] * p[None, :]) - np.diag(np.arange(size)))
    low_rank = np.sqrt(np.arange(size) + 0.5)
    normal = legs + low_rank[:, None] * low_rank[None, :]
    imag, vectors = np.linalg.eigh(normal * -1j)
    return np.mean(np.diagonal(normal)) + 1j * imag, vectors


class S5(ComplexStateCore):
    """One S5 layer after a linear input map (module docstring)."""

    hidden: int = 128
    """width H of the layer's input (after the linear map) and output"""
    state: int = 64
    """complex state units P kept (conjugate symmetry: they stand for 2P)"""
    blocks: int = 1
    """diagonal blocks of the HiPPO-N initialisation (the paper's J), each of 2P / blocks states"""

    def __post_init__(self):
        for name in ("hidden", "state", "blocks"):
            check_positive(self, name)
        if self.state % self.blocks:
            raise ValueError(f"state ({self.state}) must be divisible by blocks ({self.blocks})")
        super().__post_init__()

    def spectrum(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(Λ [P], V [2P, P], V⁻¹ [P, 2P]) of the block-diagonal HiPPO-N initialisation, conjugate half kept."""
        size = 2 * self.state // self.blocks
        lam, vectors = hippo_normal_spectrum(size)
        lam, vectors = lam[: size // 2], vectors[:, : size // 2]
        v = np.kron(np.eye(self.blocks), vectors)
        v_inv = np.kron(np.eye(self.blocks), vectors.conj().T)
        return np.tile(lam, self.blocks), v, v_inv

    def setup(self):
        h, p = self.hidden, self.state
        lam, v, v_inv = self.spectrum()
        self.input_map = nn.Dense(h, name="input")
        self.Lambda_re = self.param("Lambda_re", lambda _: jnp.asarray(lam.real, jnp.float32))
        self.Lambda_im = self.param("Lambda_im", lambda _: jnp.asarray(lam.imag, jnp.float32))

        def b_tilde(key):
            return complex_parts(jnp.asarray(v_inv, jnp.complex64) @ nn.initializers.lecun_normal()(key, (2 * p, h)))

        def c_tilde(key):
            re, im = jax.random.truncated_normal(key, -2.0, 2.0, (2, h, 2 * p))
            return complex_parts(jax.lax.complex(re, im) @ jnp.asarray(v, jnp.complex64))

        self.B = self.param("B", b_tilde)
        self.C = self.param("C", c_tilde)
        self.D = self.param("D", nn.initializers.normal(1.0), (h,))
        self.log_step = self.param(
            "log_step", lambda key: jax.random.uniform(key, (p,), minval=LOG_LOW, maxval=LOG_HIGH)
        )

    def discretised(self) -> tuple[jax.Array, jax.Array]:
        """(Λ̄ [P], B̄ [P, H]) by the zero-order hold."""
        lam = jax.lax.complex(self.Lambda_re, self.Lambda_im)
        lam_bar = jnp.exp(lam * jnp.exp(self.log_step))
        return lam_bar, ((lam_bar - 1) / lam)[:, None] * as_complex(self.B)

    def elements(self, x):
        u = self.input_map(x)
        lam_bar, b_bar = self.discretised()
        lam_bar = jnp.broadcast_to(lam_bar, (*u.shape[:-1], self.state))
        return lam_bar, jax.lax.complex(u @ b_bar.real.T, u @ b_bar.imag.T), u  # u is real: two real products

    def readout(self, h, u):
        return 2 * (h.real @ self.C[..., 0].T - h.imag @ self.C[..., 1].T) + self.D * u  # 2 Re(C̃ h)


register("s5", S5)
