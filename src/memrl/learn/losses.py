"""Pure loss functions over one time stream ([T] arrays); batch them with ``jax.vmap``.

Names follow the step they belong to: ``r_t`` is the reward after acting at step t, ``v_t`` the
value estimate of the state at step t, ``discount_t`` = γ(1 − done_t).
"""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp


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
