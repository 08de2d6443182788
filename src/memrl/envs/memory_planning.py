"""The Memory&Planning Game (Ritter et al. 2021, "Rapid task-solving in novel environments", Sec. 3;
official ``rapid_task_solving/memory_planning_game.py``).

An n×n torus of nodes. Each episode draws a fresh random permutation of labels over the nodes, a
start node and a goal node different from it. Observation: one-hots (n² each) of the label of the
agent's node and of the goal's node. Actions: Up (0,+1), Down (0,−1), Left (−1,0), Right (+1,0)
with wraparound, and Collect. Collect on the goal gives ``target_reward``; the agent stays where it
is and a new goal, different from its node, is drawn. Every other step gives ``per_step_reward``.
The episode ends at its ``max_steps``-th step with discount 0 in the official code, so memrl reports
that step as ``terminated``.

Nodes are indexed x·n + y, the order of networkx's ``grid_2d_graph`` that the official code uses.
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import jax
import jax.numpy as jnp
from flax import struct

from memrl.envs.base import Environment, random_other, register

UP, DOWN, LEFT, RIGHT, COLLECT = 0, 1, 2, 3, 4
MOVES = jnp.array([(0, 1), (0, -1), (-1, 0), (1, 0), (0, 0)], jnp.int32)  # (dx, dy) per action
INVERSE_MOVES = jnp.array([DOWN, UP, RIGHT, LEFT], jnp.int32)  # the move that undoes each of the four moves


@struct.dataclass
class MemoryPlanningParams:
    """Numeric settings (the official defaults)."""

    max_steps: int = 100
    target_reward: float = 1.0
    per_step_reward: float = 0.0


class MemoryPlanningState(NamedTuple):
    """The map, the agent's and the goal's cells, and the step count."""

    labels: jax.Array  # int32 [n²]: label of node x·n + y
    position: jax.Array  # int32 [2]: (x, y)
    goal: jax.Array  # int32 [2]
    timestep: jax.Array  # int32 steps taken


@dataclasses.dataclass(frozen=True)
class MemoryPlanningGame(Environment):
    """The n×n Memory&Planning Game; ``maze_size`` decides the shapes."""

    maze_size: int = 4
    params: MemoryPlanningParams = MemoryPlanningParams()

    def __post_init__(self):
        if not isinstance(self.maze_size, int) or self.maze_size < 2:
            raise ValueError(f"maze_size must be an integer >= 2, got {self.maze_size!r}")
        if self.params.max_steps < 2:
            raise ValueError(
                f"max_steps must be >= 2 (steps per episode; the goal is never the start cell, so a reward takes a move and a collect), got {self.params.max_steps}"
            )

    @property
    def num_nodes(self) -> int:
        """n², the number of nodes (and of labels)."""
        return self.maze_size**2

    @property
    def observation_shape(self):
        return {"goal": (self.num_nodes,), "position": (self.num_nodes,)}

    @property
    def action_dims(self):
        return (5,)

    def node(self, xy: jax.Array) -> jax.Array:
        """Node index x·n + y of cells [..., 2]."""
        return xy[..., 0] * self.maze_size + xy[..., 1]

    def xy(self, node: jax.Array) -> jax.Array:
        """Cells [..., 2] of node indices."""
        return jnp.stack([node // self.maze_size, node % self.maze_size], -1).astype(jnp.int32)

    def observe(self, state: MemoryPlanningState) -> dict:
        """One-hots of the labels of the agent's node and of the goal's node."""
        one_hot = lambda xy: jax.nn.one_hot(state.labels[self.node(xy)], self.num_nodes, dtype=jnp.float32)
        return {"goal": one_hot(state.goal), "position": one_hot(state.position)}

    def initial_state(self, labels, position, goal) -> MemoryPlanningState:
        """The state at an episode start from a given map, start cell and goal cell."""
        return MemoryPlanningState(
            jnp.asarray(labels, jnp.int32), jnp.asarray(position, jnp.int32), jnp.asarray(goal, jnp.int32), jnp.int32(0)
        )

    def reset_env(self, key, params):
        label_key, start_key, goal_key = jax.random.split(key, 3)
        start = jax.random.randint(start_key, (), 0, self.num_nodes)
        state = self.initial_state(
            jax.random.permutation(label_key, self.num_nodes),
            self.xy(start),
            self.xy(random_other(goal_key, start, self.num_nodes)),
        )
        return self.observe(state), state

    def transition(self, state: MemoryPlanningState, action, params: MemoryPlanningParams, next_goal):
        """The deterministic part of a step, given the goal to draw if this step collects.
        Returns (state, reward, terminated)."""
        action = action[0]
        position = (state.position + MOVES[action]) % self.maze_size
        collected = (action == COLLECT) & jnp.all(state.position == state.goal)
        goal = jnp.where(collected, next_goal, state.goal)
        reward = jnp.where(collected, params.target_reward, params.per_step_reward).astype(jnp.float32)
        timestep = state.timestep + 1
        return MemoryPlanningState(state.labels, position, goal, timestep), reward, timestep >= params.max_steps

    def step_env(self, key, state, action, params):
        next_goal = self.xy(random_other(key, self.node(state.position), self.num_nodes))
        state, reward, terminated = self.transition(state, action, params, next_goal)
        return self.observe(state), state, reward, terminated, jnp.bool_(False), {}


for _size in range(3, 9):
    register(f"memory-planning/{_size}x{_size}", MemoryPlanningGame.from_settings, fixed=dict(maze_size=_size))
