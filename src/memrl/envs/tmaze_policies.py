"""Scripted T-maze policies (the golden data's oracle, always-left and random) and their returns.

Each is a ``ScriptedPolicy`` whose memory holds the indicators seen so far (0 until seen), which is
all the oracle needs to remember; none of them reads the environment state.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from memrl.envs.scripted_policy import ScriptedPolicy, episode_rewards, register_policies, uniform_random
from memrl.envs.tmaze import DOWN, LEFT, RIGHT, UP, TMaze

EMPTY_MEMORY = {"first": jnp.float32(0.0), "second": jnp.float32(0.0)}


def _check_answer(env: TMaze, obs, answer):
    return [answer] if env.checks else []


def oracle(env: TMaze):
    """RIGHT along the corridor, the right check answers, and the goal arm at the end."""

    def policy(key, obs, memory):
        indicator = obs[1]
        second = jnp.where((memory["first"] != 0) & (indicator != 0), indicator, memory["second"])
        first = jnp.where(memory["first"] == 0, indicator, memory["first"])
        goal_up = (first > 0) & (second < 0) if env.ordered else first > 0
        main = jnp.where(obs[2] == 1.0, jnp.where(goal_up, UP, DOWN), RIGHT)
        check = jnp.where(obs[-1] > 0, 0, 1) if env.checks else None
        return jnp.array([main, *_check_answer(env, obs, check)], jnp.int32), {"first": first, "second": second}

    return ScriptedPolicy(lambda state: EMPTY_MEMORY, policy, decides=at_the_junction)


def at_the_junction(obs) -> jax.Array:
    """``decides``: the junction's step, where the main action picks the goal arm (what the task scores)."""
    return obs[2] == 1.0


def always_left(env: TMaze):
    """Main action LEFT and check answer 0 ("up") always."""

    def policy(key, obs, memory):
        return jnp.array([LEFT, *_check_answer(env, obs, 0)], jnp.int32), memory

    return ScriptedPolicy(lambda state: EMPTY_MEMORY, policy)


POLICIES = {"oracle": oracle, "always_left": always_left, "random": uniform_random}
register_policies("tmaze", POLICIES)


def episode_returns(env: TMaze, policy: ScriptedPolicy, key, num_episodes: int, params=None) -> jax.Array:
    """Returns of ``num_episodes`` independent episodes (each at most ``timeout + 1`` steps)."""
    params = env.default_params if params is None else params
    return episode_rewards(env, policy, key, num_episodes, params.timeout + 1, params).sum(-1)
