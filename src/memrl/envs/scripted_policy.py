"""Hand-written reference policies (oracles, explorers, random) and their rollouts.

A scripted policy is a pair of pure functions: ``memory = initial_memory(env_state)`` at the start
of an episode (an oracle may read the map there; an observation-only policy ignores it) and
``action, memory = act(key, obs, memory)`` at every step (an oracle that ``reads_state`` gets the
environment state there instead).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp


class ScriptedPolicy(NamedTuple):
    """``initial_memory(env_state)`` at an episode start, then ``act(key, obs, memory) -> (action,
    memory)``; a policy that ``reads_state`` gets the environment state in place of ``obs``."""

    initial_memory: Callable[[Any], Any]
    act: Callable[[jax.Array, Any, Any], tuple[jax.Array, Any]]
    reads_state: bool = False


def episode_rewards(env, policy: ScriptedPolicy, key, num_episodes: int, num_steps: int, params=None) -> jax.Array:
    """Rewards [num_episodes, num_steps] of independent episodes, 0 after an episode has ended."""
    params = env.default_params if params is None else params

    def episode(key):
        reset_key, key = jax.random.split(key)
        obs, state = env.reset_env(reset_key, params)

        def step(carry, key):
            obs, state, memory, done = carry
            policy_key, env_key = jax.random.split(key)
            action, memory = policy.act(policy_key, state if policy.reads_state else obs, memory)
            obs, state, reward, terminated, truncated, _ = env.step_env(env_key, state, action, params)
            return (obs, state, memory, done | terminated | truncated), jnp.where(done, 0.0, reward)

        init = (obs, state, policy.initial_memory(state), jnp.bool_(False))
        return jax.lax.scan(step, init, jax.random.split(key, num_steps))[1]

    return jax.vmap(episode)(jax.random.split(key, num_episodes))
