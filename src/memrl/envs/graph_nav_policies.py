"""Reference policies for graph navigation: the shortest-path oracle (the denominator of the EPN
paper's fraction-of-oracle measure), the planner over remembered transitions (what an agent whose
memory holds the episode's transitions, as EPN's rows do, can reach with a perfect planner over
them) and uniform random."""

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
        return {"views": _views(env, state), "neighbors": env.neighbors(state.graph)}

    def act(key, obs, memory):
        here, goal = _state_of(memory["views"], obs[env.position_part]), _state_of(memory["views"], obs["goal"])
        step = breadth_first(memory["neighbors"], here).first_action[goal]
        return jnp.where(here == goal, COLLECT, step)[None].astype(jnp.int32), memory

    return ScriptedPolicy(initial_memory, act)


def transition_planner(env: GraphNav) -> ScriptedPolicy:
    """Remembers only the transitions it has made this episode (state, Forward/Left/Right -> state;
    a Collect's jump to a new start is none). On the goal it Collects; if the goal is reachable over
    remembered transitions it takes a shortest such path; otherwise it explores: an action not yet
    taken here (uniformly), else the first step towards the nearest remembered state with one, else
    a turn or Forward at random. States are recognised by their views, as the oracle's."""
    return _planner(env, forget_at_new_goal=False)


def within_trial_planner(env: GraphNav) -> ScriptedPolicy:
    """The transition planner that forgets its transitions whenever it has collected a goal: the best
    an agent can do that plans only from what it saw since the last goal (EPN's within-trial level)."""
    return _planner(env, forget_at_new_goal=True)


def _planner(env: GraphNav, forget_at_new_goal: bool) -> ScriptedPolicy:
    def initial_memory(state):
        views = _views(env, state)
        return {
            "views": views,
            "next_state": jnp.full((views.shape[0], COLLECT), -1, jnp.int32),
            "state": jnp.int32(0),
            "action": jnp.int32(COLLECT),
        }

    def act(key, obs, memory):
        here, goal = _state_of(memory["views"], obs[env.position_part]), _state_of(memory["views"], obs["goal"])
        moved = memory["action"] < COLLECT  # the episode starts as after a Collect
        previous = jnp.where(moved, memory["state"], memory["next_state"].shape[0])  # out of range: dropped
        remembered = memory["next_state"]
        if forget_at_new_goal:
            remembered = jnp.where(moved, remembered, -1)
        next_state = remembered.at[previous, jnp.minimum(memory["action"], COLLECT - 1)].set(here, mode="drop")
        search = breadth_first(next_state, here)
        untried = next_state < 0
        frontier = (search.distance >= 0) & jnp.any(untried, axis=1)
        nearest = jnp.argmin(jnp.where(frontier, search.rank, search.rank.shape[0] + 1))
        explore_key, random_key = jax.random.split(key)
        explore = jnp.where(
            jnp.any(untried[here]),
            jax.random.categorical(explore_key, jnp.where(untried[here], 0.0, -jnp.inf)),
            jnp.where(frontier[nearest], search.first_action[nearest], jax.random.randint(random_key, (), 0, COLLECT)),
        )
        step = jnp.where(search.distance[goal] > 0, search.first_action[goal], explore)
        action = jnp.where(here == goal, COLLECT, step).astype(jnp.int32)
        return action[None], {**memory, "next_state": next_state, "state": here, "action": action}

    return ScriptedPolicy(initial_memory, act, tracks_action=True)


def _views(env: GraphNav, state) -> jax.Array:
    """[S_max, ...]: what every state of the episode looks like."""
    return jax.vmap(lambda s: env.view(state, s))(jnp.arange(state.labels.shape[0]))


def _state_of(views: jax.Array, seen: jax.Array) -> jax.Array:
    """The state whose view is ``seen``."""
    views = views.reshape(views.shape[0], -1)
    return jnp.argmax(jnp.all(views == seen.reshape(-1), axis=-1))


POLICIES = {
    "oracle": oracle,
    "transition_planner": transition_planner,
    "within_trial_planner": within_trial_planner,
    "random": uniform_random,
}
register_policies("graph-nav", POLICIES)


RANDOM_PLAY = {"graph-nav/5": 1.33}
"""uniformly random play's mean return per 200-step episode (``random_play_returns``: 1,000 episodes,
key 0): the level an agent's learning check reads against"""
