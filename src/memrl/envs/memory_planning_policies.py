"""Reference policies for the Memory&Planning Game (Ritter et al. 2021, Sec. 3 and Fig. 2).

- ``oracle``: is given the map at the episode start; walks a shortest path to the goal, Collects on it
  (the paper's shortest-path optimum; reference 31.61 ± 1.63 on 4×4).
- ``explorer``: knows the torus topology but not the labels. It tracks its position relative to the
  episode start by adding up its own moves and stores label -> relative cell for every label it sees.
  On the goal it Collects; if the goal label is in its map it walks a shortest path there; otherwise
  it walks to the nearest cell it has not visited (BFS, ties in the order Up, Down, Left, Right).
  Its map is cleared at the episode start (reference 28.87 ± 1.66 on 4×4).
- ``within_trial_explorer``: the explorer that also forgets its map whenever the goal changes, the
  best an agent can do that plans only from what it saw since the last goal (the paper's
  within-trial optimum).
- ``transition_planner``: remembers only the transitions it has made (label, move -> label, and the
  way back), without the torus topology: what an agent whose memory holds its transitions (EPN's
  rows) can do with a perfect planner over them. On the goal it Collects; if the goal is reachable
  over remembered transitions it walks a shortest such path; otherwise it takes a move from here
  not yet remembered (uniformly), else any move (30.26 on 3×3, 22.48 on 4×4; 4000 episodes, key 2021).
- ``random_walk``: Collects on the goal, otherwise moves uniformly at random: a reactive agent that
  recognises the goal but, keeping no map, cannot head for it (measured 5.13 ± 2.08 on 4×4).
- ``two_move_walk``: Collects on the goal, otherwise Down or Right, each with probability 1/2: the
  best policy that keeps no memory. Labels are redrawn every episode, so such a policy sees only
  whether it stands on the goal and can do no more than fix its move probabilities; a search over
  them (docs/results.md) puts the best at two orthogonal moves near 1/2 each (entropy ln 2), 7.3 on
  4×4 and 12.2 on 3×3, the plateau where trained agents that do not yet use their memory stop. It is
  the best *fixed* memoryless policy: an agent whose parameters change within an episode (a learner's
  updates every 20 steps) can score more without any memory, so an agent's use of memory is read off
  its frozen parameters, not its training return (docs/results.md).
- ``uniform_random`` over the five actions (reference 1.04 ± 0.99 on 4×4).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from memrl.envs.graph_search import breadth_first
from memrl.envs.memory_planning import COLLECT, INVERSE_MOVES, MOVES, MemoryPlanningGame
from memrl.envs.scripted_policy import ScriptedPolicy, register_policies, uniform_random


def torus_neighbors(env: MemoryPlanningGame) -> jax.Array:
    """[n², 4]: the node reached from each node by Up, Down, Left, Right."""
    xy = env.xy(jnp.arange(env.num_nodes))
    return jnp.stack([env.node((xy + MOVES[a]) % env.maze_size) for a in range(4)], axis=1)


def oracle(env: MemoryPlanningGame) -> ScriptedPolicy:
    """The full-map oracle (see the module docstring)."""
    neighbors = torus_neighbors(env)

    def initial_memory(state):
        return {"node_of_label": jnp.argsort(state.labels)}

    def act(key, obs, memory):
        here = memory["node_of_label"][jnp.argmax(obs["position"])]
        goal = memory["node_of_label"][jnp.argmax(obs["goal"])]
        step = breadth_first(neighbors, here).first_action[goal]
        return jnp.where(here == goal, COLLECT, step)[None].astype(jnp.int32), memory

    return ScriptedPolicy(initial_memory, act)


def _explorer(env: MemoryPlanningGame, forget_at_new_goal: bool) -> ScriptedPolicy:
    neighbors = torus_neighbors(env)
    n = env.num_nodes

    def empty_map():
        return jnp.full(n, -1, jnp.int32), jnp.zeros(n, bool)

    def initial_memory(state):
        cell_of_label, visited = empty_map()
        return {
            "cell": jnp.int32(0),
            "action": jnp.int32(COLLECT),
            "cell_of_label": cell_of_label,
            "visited": visited,
            "goal_label": jnp.int32(-1),
        }

    def act(key, obs, memory):
        label, goal_label = jnp.argmax(obs["position"]), jnp.argmax(obs["goal"])
        cell_of_label, visited = memory["cell_of_label"], memory["visited"]
        if forget_at_new_goal:
            forget = goal_label != memory["goal_label"]
            blank_map, blank_visited = empty_map()
            cell_of_label, visited = (
                jnp.where(forget, blank_map, cell_of_label),
                jnp.where(forget, blank_visited, visited),
            )
        moved = memory["action"] != COLLECT
        here = jnp.where(moved, neighbors[memory["cell"], jnp.clip(memory["action"], 0, 3)], memory["cell"])
        cell_of_label, visited = cell_of_label.at[label].set(here), visited.at[here].set(True)
        search = breadth_first(neighbors, here)
        goal_cell = cell_of_label[goal_label]
        nearest_unvisited = jnp.argmin(jnp.where(visited, n + 1, search.rank))
        target = jnp.where(goal_cell >= 0, goal_cell, nearest_unvisited)
        action = jnp.where(label == goal_label, COLLECT, search.first_action[target]).astype(jnp.int32)
        memory = {
            "cell": here,
            "action": action,
            "cell_of_label": cell_of_label,
            "visited": visited,
            "goal_label": goal_label,
        }
        return action[None], memory

    return ScriptedPolicy(initial_memory, act, tracks_action=True)


def explorer(env: MemoryPlanningGame) -> ScriptedPolicy:
    """The explorer that keeps its map for the whole episode."""
    return _explorer(env, forget_at_new_goal=False)


def within_trial_explorer(env: MemoryPlanningGame) -> ScriptedPolicy:
    """The explorer that forgets its map whenever the goal changes."""
    return _explorer(env, forget_at_new_goal=True)


def transition_planner(env: MemoryPlanningGame) -> ScriptedPolicy:
    """The planner over remembered transitions (see the module docstring)."""
    n = env.num_nodes

    def initial_memory(state):
        return {"next_label": jnp.full((n, 4), -1, jnp.int32), "label": jnp.int32(-1), "action": jnp.int32(COLLECT)}

    def act(key, obs, memory):
        label, goal_label = jnp.argmax(obs["position"]).astype(jnp.int32), jnp.argmax(obs["goal"])
        previous, move = memory["label"], jnp.minimum(memory["action"], 3)
        learnt = memory["next_label"].at[previous, move].set(label).at[label, INVERSE_MOVES[move]].set(previous)
        next_label = jnp.where(memory["action"] < 4, learnt, memory["next_label"])  # the episode starts with Collect
        search = breadth_first(next_label, label)
        unknown = next_label[label] < 0
        explore = jnp.where(
            jnp.any(unknown),
            jax.random.categorical(key, jnp.where(unknown, 0.0, -jnp.inf)),
            jax.random.randint(key, (), 0, 4),
        )
        step = jnp.where(search.distance[goal_label] > 0, search.first_action[goal_label], explore)
        action = jnp.where(label == goal_label, COLLECT, step).astype(jnp.int32)
        return action[None], {"next_label": next_label, "label": label, "action": action}

    return ScriptedPolicy(initial_memory, act, tracks_action=True)


def collect_or_move(draw_move) -> ScriptedPolicy:
    """A memoryless policy: Collect on the goal, otherwise the move ``draw_move(key)``."""

    def act(key, obs, memory):
        on_goal = jnp.argmax(obs["position"]) == jnp.argmax(obs["goal"])
        return jnp.where(on_goal, COLLECT, draw_move(key))[None].astype(jnp.int32), memory

    return ScriptedPolicy(lambda state: None, act)


def random_walk(env: MemoryPlanningGame) -> ScriptedPolicy:
    """Collect on the goal, otherwise one of the four moves at random."""
    return collect_or_move(lambda key: jax.random.randint(key, (), 0, 4))


def two_move_walk(env: MemoryPlanningGame) -> ScriptedPolicy:
    """Collect on the goal, otherwise Down or Right at random: the best memoryless policy."""
    down, right = 1, 3
    return collect_or_move(lambda key: jnp.where(jax.random.bernoulli(key), down, right))


POLICIES = {
    "oracle": oracle,
    "explorer": explorer,
    "within_trial_explorer": within_trial_explorer,
    "transition_planner": transition_planner,
    "random_walk": random_walk,
    "two_move_walk": two_move_walk,
    "random": uniform_random,
}

register_policies("memory-planning", POLICIES)

RETURNS_4X4 = {
    "oracle": 31.56,
    "explorer": 28.88,
    "within_trial_explorer": 10.83,
    "two_move_walk": 7.29,
    "random_walk": 5.13,
}
"""the mean return per 100-step episode of five of these policies on ``memory-planning/4x4``, measured
over 4000 episodes (docs/results.md): the levels an agent's return is read against"""
RETURNS_3X3 = {
    "oracle": 39.72,
    "explorer": 38.10,
    "within_trial_explorer": 17.86,
    "two_move_walk": 12.21,
    "random_walk": 9.93,
}
"""the same on ``memory-planning/3x3`` (4000 episodes, key 2021; docs/results.md)"""
RETURNS = {"3x3": RETURNS_3X3, "4x4": RETURNS_4X4}
"""the reference returns of each game size the experiments use, by ``memory-planning/SIZE``'s size"""
