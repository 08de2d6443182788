"""Pure loss functions over one time stream ([T] arrays); batch them with ``jax.vmap``.

Names follow the step they belong to: ``r_t`` is the reward after acting at step t, ``v_t`` the
value estimate of the state at step t, ``discount_t`` = γ(1 − done_t).
"""

from __future__ import annotations

from typing import NamedTuple

import chex
import jax
import jax.numpy as jnp

from memrl.nn.cross_entropy import sigmoid_cross_entropy


def generalized_advantage_estimation(r_t, discount_t, v_t, v_tp1, lambda_):
    """GAE (Schulman et al. 2016, Eq. 16):

        δ_t = r_t + discount_t v_{t+1} − v_t,    A_t = δ_t + discount_t λ A_{t+1},   A_T = 0 past the end.

    All inputs [T]; returns the advantages A [T].
    """
    chex.assert_rank([r_t, discount_t, v_t, v_tp1], 1)
    chex.assert_equal_shape([r_t, discount_t, v_t, v_tp1])
    delta_t = r_t + discount_t * v_tp1 - v_t

    def backward(next_advantage, inputs):
        delta, discount = inputs
        advantage = delta + discount * lambda_ * next_advantage
        return advantage, advantage

    _, advantages = jax.lax.scan(backward, jnp.zeros_like(r_t[0]), (delta_t, discount_t), reverse=True)
    return advantages


def ppo_clipped_policy_loss(logp_t, old_logp_t, advantage_t, clip_epsilon):
    """PPO's clipped surrogate (Schulman et al. 2017, Eq. 7), as a loss to minimise:

    ρ_t = exp(log π(a_t) − log π_old(a_t)),   L = −mean_t min(ρ_t A_t, clip(ρ_t, 1 ± ε) A_t)
    """
    chex.assert_rank([logp_t, old_logp_t, advantage_t], 1)
    chex.assert_equal_shape([logp_t, old_logp_t, advantage_t])
    ratio = jnp.exp(logp_t - old_logp_t)
    clipped = jnp.clip(ratio, 1.0 - clip_epsilon, 1.0 + clip_epsilon)
    return -jnp.mean(jnp.minimum(ratio * advantage_t, clipped * advantage_t))


def clipped_value_loss(v_t, old_v_t, target_t, clip_epsilon):
    """Value loss with PPO-style clipping around the old estimate:

    L = ½ mean_t max((v_t − G_t)², (old_v_t + clip(v_t − old_v_t, ±ε) − G_t)²)
    """
    chex.assert_rank([v_t, old_v_t, target_t], 1)
    chex.assert_equal_shape([v_t, old_v_t, target_t])
    clipped = old_v_t + jnp.clip(v_t - old_v_t, -clip_epsilon, clip_epsilon)
    return 0.5 * jnp.mean(jnp.maximum(jnp.square(v_t - target_t), jnp.square(clipped - target_t)))


class VTraceOutput(NamedTuple):
    """V-trace targets and policy-gradient advantages, [T] each."""

    vs: jax.Array  # [T] V-trace value targets
    pg_advantage: jax.Array  # [T] advantages for the policy gradient


def vtrace(r_t, discount_t, v_t, v_tp1, log_rho_t, rho_bar=1.0, c_bar=1.0):
    """V-trace targets and policy-gradient advantages (Espeholt et al. 2018, Eq. 1 and Sec. 4.2):

        ρ_t = min(ρ̄, π(a_t)/μ(a_t)),   c_t = min(c̄, π(a_t)/μ(a_t)),
        δ_t = ρ_t (r_t + discount_t v_{t+1} − v_t),
        vs_t − v_t = δ_t + discount_t c_t (vs_{t+1} − v_{t+1}),   vs_T = v_T (the bootstrap),
        A_t = ρ_t (r_t + discount_t vs_{t+1} − v_t).

    ``log_rho_t`` = log π(a_t) − log μ(a_t); ``v_tp1`` is the value of the state after step t (the
    last entry is the bootstrap). All inputs [T]; the outputs carry no gradient.
    """
    chex.assert_rank([r_t, discount_t, v_t, v_tp1, log_rho_t], 1)
    chex.assert_equal_shape([r_t, discount_t, v_t, v_tp1, log_rho_t])
    rho_t = jnp.exp(log_rho_t)
    clipped_rho_t = jnp.minimum(rho_bar, rho_t)
    c_t = jnp.minimum(c_bar, rho_t)
    delta_t = clipped_rho_t * (r_t + discount_t * v_tp1 - v_t)

    def backward(next_correction, inputs):
        delta, discount, c = inputs
        correction = delta + discount * c * next_correction
        return correction, correction

    _, correction_t = jax.lax.scan(backward, jnp.zeros_like(r_t[0]), (delta_t, discount_t, c_t), reverse=True)
    vs_t = v_t + correction_t
    vs_tp1 = v_tp1 + jnp.concatenate([correction_t[1:], jnp.zeros_like(correction_t[:1])])
    pg_advantage = clipped_rho_t * (r_t + discount_t * vs_tp1 - v_t)
    return VTraceOutput(jax.lax.stop_gradient(vs_t), jax.lax.stop_gradient(pg_advantage))


def masked_sequence_cross_entropy(logits_t, target_t, mask_t):
    """Softmax cross-entropy summed over the scored steps of one sequence:

        L = Σ_t m_t · (−log softmax(logits_t)[y_t])

    logits [T, C], int targets [T], mask [T]; returns the sum (divide by Σ m over the batch for the mean).
    """
    chex.assert_rank([logits_t, target_t, mask_t], [2, 1, 1])
    chex.assert_equal_shape_prefix([logits_t, target_t, mask_t], 1)
    log_p = jax.nn.log_softmax(logits_t)
    return -jnp.sum(jnp.where(mask_t, jnp.take_along_axis(log_p, target_t[:, None], axis=-1)[:, 0], 0.0))


def masked_bit_cross_entropy(logits_t, target_t, mask_t):
    """Sigmoid cross-entropy of multi-label (bit) targets, summed over the bits of the scored steps:

        L = Σ_t m_t Σ_i −[y_ti log σ(z_ti) + (1 − y_ti) log(1 − σ(z_ti))]

    logits [T, K], 0/1 targets [T, K], mask [T]; returns the sum.
    """
    chex.assert_rank([logits_t, target_t, mask_t], [2, 2, 1])
    chex.assert_equal_shape([logits_t, target_t])
    return jnp.sum(jnp.where(mask_t[:, None], sigmoid_cross_entropy(logits_t, target_t), 0.0))


def value_rescale(x, eps=1e-3):
    """R2D2's invertible value rescaling (Kapturowski et al. 2019, Sec. 2; Pohlen et al. 2018):
    h(x) = sign(x)(sqrt(|x| + 1) − 1) + εx."""
    return jnp.sign(x) * (jnp.sqrt(jnp.abs(x) + 1.0) - 1.0) + eps * x


def inverse_value_rescale(x, eps=1e-3):
    """h⁻¹(x) = sign(x)(((sqrt(1 + 4ε(|x| + 1 + ε)) − 1) / 2ε)² − 1), the inverse of ``value_rescale``."""
    root = (jnp.sqrt(1.0 + 4.0 * eps * (jnp.abs(x) + 1.0 + eps)) - 1.0) / (2.0 * eps)
    return jnp.sign(x) * (jnp.square(root) - 1.0)


def n_step_returns(r_t, done_t, v_t, gamma, n: int):
    """The n-step returns of a stored sequence of T steps, for its first T − 1 (the last has no
    successor to bootstrap from):

        G_t = Σ_{j<m} γ^j A_j r_{t+j} + γ^m A_m v_{t+m},  m = min(n, T − 1 − t),  A_j = Π_{i<j} (1 − done_{t+i})

    ``v_t`` is the value of the state at step t (R2D2: h⁻¹ of the target network's Q at the online
    network's greedy action); an episode's end cuts the sum and the bootstrap. Returns [T − 1]."""
    chex.assert_rank([r_t, done_t, v_t], 1)
    last = r_t.shape[0] - 1
    t = jnp.arange(last)
    returns, alive, discount = jnp.zeros(last), jnp.ones(last), jnp.ones(last)
    for j in range(n):
        within = t + j < last
        step = jnp.minimum(t + j, last)
        returns = returns + jnp.where(within, discount * alive * r_t[step], 0.0)
        alive = jnp.where(within, alive * (1.0 - done_t[step]), alive)
        discount = jnp.where(within, discount * gamma, discount)
    return returns + discount * alive * v_t[jnp.minimum(t + n, last)]


def q_lambda_returns(r_t, done_t, q_t, gamma, lambda_):
    """Peng's Q(λ) returns of a sequence of T steps, for its first T − 1 (PQN's targets, Gallici et
    al. 2024; the last step only bootstraps):

        G_t = r_t + γ (1 − done_t) [(1 − λ) max_a q_{t+1}(a) + λ G_{t+1}],   G_{T−1} = max_a q_{T−1}(a)

    ``q_t`` [T, A] are the Q-values at each step (PQN: the online network's, without gradient);
    λ = 0 is the one-step target, λ = 1 the return to the sequence's end. Returns [T − 1]."""
    chex.assert_rank([r_t, done_t, q_t], [1, 1, 2])
    best = q_t.max(axis=-1)

    def backward(next_return, inputs):
        reward, done, next_best = inputs
        g = reward + gamma * (1.0 - done) * ((1.0 - lambda_) * next_best + lambda_ * next_return)
        return g, g

    _, returns = jax.lax.scan(backward, best[-1], (r_t[:-1], done_t[:-1], best[1:]), reverse=True)
    return returns
