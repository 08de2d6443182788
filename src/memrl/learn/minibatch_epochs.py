"""Epochs of minibatch gradient steps over one rollout, split by environment so that sequences stay
whole (PPO's and PQN's learning half)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import optax

from memrl.learn.minibatch_epochs_config import MinibatchEpochsConfig


def minibatch_epochs(config: MinibatchEpochsConfig, optimizer, loss, params, opt_state, key, carry, data):
    """``config.update_epochs`` passes, each over the environments in a new random order in
    ``config.num_minibatches`` groups, one gradient step of ``loss(params, carry, data) -> (loss,
    info)`` on each group: ``carry`` holds the environments on axis 0, the time-major ``data`` on
    axis 1. Returns (params, opt_state, info stacked [epochs, minibatches])."""

    def epoch(state, _):
        params, opt_state, key = state
        key, perm_key = jax.random.split(key)
        order = jax.random.permutation(perm_key, config.num_envs)
        order = order.reshape(config.num_minibatches, config.envs_per_minibatch)

        def minibatch(state, idx):
            params, opt_state = state
            grads, info = jax.grad(loss, has_aux=True)(
                params, jax.tree.map(lambda x: x[idx], carry), jax.tree.map(lambda x: jnp.take(x, idx, axis=1), data)
            )
            updates, opt_state = optimizer.update(grads, opt_state, params)
            return (optax.apply_updates(params, updates), opt_state), info

        (params, opt_state), info = jax.lax.scan(minibatch, (params, opt_state), order)
        return (params, opt_state, key), info

    (params, opt_state, _), info = jax.lax.scan(epoch, (params, opt_state, key), None, config.update_epochs)
    return params, opt_state, info
