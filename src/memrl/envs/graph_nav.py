"""One-shot graph navigation (``graph-nav/{junctions}``): an analogue of the EPN paper's One-Shot
StreetLearn (Ritter et al. 2021, Sec. 3; official ``one_shot_streetlearn.py``).

What is the same: each episode is a new neighbourhood of streets; the state is a directed edge (a
node and the road the agent faces); actions Forward, Left, Right (turn to the next road by bearing)
and Collect; observations of the current state and of the goal are one-hots over a random
per-episode permutation of the directed edges; Collect in the goal state gives reward 1, after which
the agent starts from a new random state with a new goal; episodes last 200 steps.

What differs: StreetLearn's city graphs and panoramas cannot be had here. Neighbourhoods are
procedural street graphs (``street_graphs``) with the requested number of junctions, drawn from a
bank of ``bank_size`` graphs made once per environment from ``bank_seed``, and the one-hot has
``num_labels`` slots for every size (so an agent trained on 5 junctions runs on 7 and 9). There are
no images. The 200-step limit is reported as ``truncated``.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
from flax import struct

from memrl.envs.base import Environment, random_other, register, replace_params
from memrl.envs.street_graphs import graph_bank

COLLECT = 3


@struct.dataclass
class GraphNavParams:
    """Numeric settings: episode length and the reward per goal."""
    max_steps: int = 200
    target_reward: float = 1.0


class GraphNavState(NamedTuple):
    """Episode graph, label permutation, agent and goal states, step count."""
    graph: jax.Array  # int32 index into the bank
    labels: jax.Array  # int32 [S_max]: observation label of each state
    position: jax.Array  # int32 state
    goal: jax.Array  # int32 state
    timestep: jax.Array


@dataclasses.dataclass(frozen=True)
class GraphNav(Environment):
    """One-shot navigation on neighbourhoods with ``junctions`` junctions; see the module docstring."""
    junctions: int = 5
    num_labels: int = 64
    bank_size: int = 512
    bank_seed: int = 0
    params: GraphNavParams = GraphNavParams()

    def __post_init__(self):
        if self.junctions < 1:
            raise ValueError(f"junctions must be >= 1, got {self.junctions}")
        if self.bank_size < 1:
            raise ValueError(f"bank_size must be >= 1, got {self.bank_size}")

    @functools.cached_property
    def bank(self):
        """(transitions [G, S_max, 3], num_states [G]) as NumPy arrays (constants inside jit); built on first use."""
        transitions, num_states = graph_bank(self.junctions, self.bank_size, self.bank_seed)
        if transitions.shape[1] > self.num_labels:
            raise ValueError(f"graphs with {self.junctions} junctions have up to {transitions.shape[1]} states; num_labels ({self.num_labels}) must be at least that")
        return transitions, num_states

    @property
    def default_params(self) -> GraphNavParams:
        return self.params

    @property
    def observation_shape(self):
        return {"goal": (self.num_labels,), "position": (self.num_labels,)}

    @property
    def action_dims(self):
        return (4,)

    def observe(self, state: GraphNavState) -> dict:
        """One-hots of the labels of the agent's state and of the goal state."""
        one_hot = lambda s: jax.nn.one_hot(state.labels[s], self.num_labels, dtype=jnp.float32)  # noqa: E731
        return {"goal": one_hot(state.goal), "position": one_hot(state.position)}

    def neighbors(self, graph: jax.Array) -> jax.Array:
        """[S_max, 3] next state for Forward, Left, Right (-1 past the graph's states)."""
        return jnp.asarray(self.bank[0])[graph]

    def _start_and_goal(self, key, graph):
        n = jnp.asarray(self.bank[1])[graph]
        start_key, goal_key = jax.random.split(key)
        start = jax.random.randint(start_key, (), 0, n)
        return start, random_other(goal_key, start, n)

    def reset_env(self, key, params):
        graph_key, label_key, place_key = jax.random.split(key, 3)
        graph = jax.random.randint(graph_key, (), 0, self.bank_size)
        labels = jax.random.permutation(label_key, self.num_labels)[: self.bank[0].shape[1]].astype(jnp.int32)
        start, goal = self._start_and_goal(place_key, graph)
        state = GraphNavState(graph, labels, start, goal, jnp.int32(0))
        return self.observe(state), state

    def step_env(self, key, state, action, params):
        action = action[0]
        moved = self.neighbors(state.graph)[state.position, jnp.minimum(action, 2)]
        collected = (action == COLLECT) & (state.position == state.goal)
        new_start, new_goal = self._start_and_goal(key, state.graph)
        position = jnp.where(action == COLLECT, jnp.where(collected, new_start, state.position), moved)
        goal = jnp.where(collected, new_goal, state.goal)
        timestep = state.timestep + 1
        state = state._replace(position=position, goal=goal, timestep=timestep)
        reward = jnp.where(collected, params.target_reward, 0.0).astype(jnp.float32)
        return self.observe(state), state, reward, jnp.bool_(False), timestep >= params.max_steps, {}


def make_graph_nav(junctions: int, num_labels: int = 64, bank_size: int = 512, bank_seed: int = 0, **params) -> GraphNav:
    """``graph-nav/N`` with its shape settings and numeric params optionally overridden."""
    return GraphNav(junctions, num_labels, bank_size, bank_seed, replace_params(GraphNavParams(), "graph-nav", **params))


for _junctions in (5, 7, 9):
    register(f"graph-nav/{_junctions}", lambda _j=_junctions, **kw: make_graph_nav(_j, **kw))
