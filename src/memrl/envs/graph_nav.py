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
``num_labels`` slots for every size (so an agent trained on 5 junctions runs on 7 and 9). Instead
of panoramas, ``observation="images"`` gives procedural views (``street_views``): ``{"image": view
from the agent's state, "goal": view from the goal state}``, uint8 [image_size, image_size, 3], with
junction colours drawn afresh each episode, so that convolutional encoders can be exercised. The
200-step limit is reported as ``truncated``.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
from flax import struct

from memrl.envs.base import Environment, random_other, register
from memrl.envs.street_graphs import GraphBank, graph_bank
from memrl.envs.street_views import render_view

COLLECT = 3
OBSERVATIONS = ("labels", "images")


@struct.dataclass
class GraphNavParams:
    """Numeric settings: episode length and the reward per goal."""

    max_steps: int = 200
    target_reward: float = 1.0


class GraphNavState(NamedTuple):
    """Episode graph, label permutation, junction colours, agent and goal states, step count."""

    graph: jax.Array  # int32 index into the bank
    labels: jax.Array  # int32 [S_max]: observation label of each state
    colours: jax.Array  # float32 [S_max, 3]: colour of each junction in the views (nodes <= states)
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
    observation: str = "labels"
    image_size: int = 16

    def __post_init__(self):
        if self.junctions < 1:
            raise ValueError(f"junctions must be >= 1, got {self.junctions}")
        if self.bank_size < 1:
            raise ValueError(f"bank_size must be >= 1, got {self.bank_size}")
        if self.observation not in OBSERVATIONS:
            raise ValueError(f"observation must be one of {OBSERVATIONS}, got {self.observation!r}")
        if self.image_size < 8:
            raise ValueError(f"image_size must be >= 8 pixels, got {self.image_size}")
        if self.params.max_steps < 2:
            raise ValueError(
                f"max_steps must be >= 2 (steps per episode; the goal is never the start state, so a reward takes a move and a collect), got {self.params.max_steps}"
            )

    @functools.cached_property
    def bank(self) -> GraphBank:
        """The episode graphs as NumPy arrays (constants inside jit); built on first use."""
        bank = graph_bank(self.junctions, self.bank_size, self.bank_seed)
        if bank.transitions.shape[1] > self.num_labels:
            raise ValueError(
                f"graphs with {self.junctions} junctions have up to {bank.transitions.shape[1]} states; num_labels ({self.num_labels}) must be at least that"
            )
        return bank

    @property
    def observation_shape(self):
        if self.observation == "images":
            view = (self.image_size, self.image_size, 3)
            return {"goal": view, "image": view}
        return {"goal": (self.num_labels,), "position": (self.num_labels,)}

    @property
    def action_dims(self):
        return (4,)

    @property
    def position_part(self) -> str:
        """The observation part that shows the agent's state ("position" or "image")."""
        return "image" if self.observation == "images" else "position"

    def view(self, state: GraphNavState, s: jax.Array) -> jax.Array:
        """What state ``s`` looks like in this episode: the one-hot of its label, or its view."""
        if self.observation == "images":
            nodes, heading = jnp.asarray(self.bank.state_node)[state.graph], jnp.asarray(self.bank.heading)[state.graph]
            return render_view(s, nodes, heading, state.colours, self.image_size)
        return jax.nn.one_hot(state.labels[s], self.num_labels, dtype=jnp.float32)

    def observe(self, state: GraphNavState) -> dict:
        return {"goal": self.view(state, state.goal), self.position_part: self.view(state, state.position)}

    def neighbors(self, graph: jax.Array) -> jax.Array:
        """[S_max, 3] next state for Forward, Left, Right (-1 past the graph's states)."""
        return jnp.asarray(self.bank.transitions)[graph]

    def _start_and_goal(self, key, graph):
        n = jnp.asarray(self.bank.num_states)[graph]
        start_key, goal_key = jax.random.split(key)
        start = jax.random.randint(start_key, (), 0, n)
        return start, random_other(goal_key, start, n)

    def reset_env(self, key, params):
        graph_key, label_key, place_key = jax.random.split(key, 3)
        colour_key = jax.random.fold_in(
            key, 3
        )  # apart from the split, so labelled episodes are as before views existed
        graph = jax.random.randint(graph_key, (), 0, self.bank_size)
        max_states = self.bank.transitions.shape[1]
        labels = jax.random.permutation(label_key, self.num_labels)[:max_states].astype(jnp.int32)
        colours = jax.random.uniform(colour_key, (max_states, 3))
        start, goal = self._start_and_goal(place_key, graph)
        state = GraphNavState(graph, labels, colours, start, goal, jnp.int32(0))
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


for _junctions in (5, 7, 9):
    register(f"graph-nav/{_junctions}", GraphNav.from_settings, fixed=dict(junctions=_junctions))
