"""Reference policies for graph navigation: the shortest-path oracle (the denominator of the EPN
paper's fraction-of-oracle measure) and uniform random."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from memrl.envs.graph_nav import COLLECT, GraphNav
from memrl.envs.graph_search import breadth_first
from memrl.envs.scripted_policy import ScriptedPolicy, register_policies, uniform_random


def oracle(env: GraphNav) -> ScriptedPolicy:
    """Given the map at the episode start; fewest Forward/Left/Right steps to the goal, then Collect.
    It recognises states by comparing what it sees with what every state looks like."""

    def initial_memory(state):
        views = jax.vmap(lambda s: env.view(state, s))(jnp.arange(state.labels.shape[0]))
        return {"views": views, "neighbors": env.neighbors(state.graph)}

    def act(key, obs, memory):
        views = memory["views"].reshape(memory["views"].shape[0], -1)
        state_of = lambda seen: jnp.argmax(jnp.all(views == seen.reshape(-1), axis=-1))
        here, goal = state_of(obs[env.position_part]), state_of(obs["goal"])
        step = breadth_first(memory["neighbors"], here).first_action[goal]
        return jnp.where(here == goal, COLLECT, step)[None].astype(jnp.int32), memory

    return ScriptedPolicy(initial_memory, act)


POLICIES = {"oracle": oracle, "random": uniform_random}
register_policies("graph-nav", POLICIES)


RANDOM_PLAY = {"graph-nav/5": 1.33}
"""uniformly random play's mean return per 200-step episode (``random_play_returns``: 1,000 episodes,
key 0): the level an agent's learning check reads against"""
