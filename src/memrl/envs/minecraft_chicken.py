"""AMRL's Minecraft Chicken task (Beck et al. 2020, App. A.2.3) as a 2D analogue with the rendered
egocentric view of memrl's Minecraft mazes (``minecraft_view``).

A room 3 cells wide and 4 deep; the agent starts at the middle of its south end, a, facing north,
and always faces north. The floor is green or red for the first ``signal_steps`` (48) steps, the
recurring signal, then grey for ``grey_steps`` (96) more. A chicken stands frozen on one cell:
first c1 or c2 (one row ahead of c3 and one column to its left or right, drawn uniformly), and
once it is collected (``collect`` with the chicken on the cell in front of the agent) a new one
appears on c3, the cell in front of a, behind the agent; once that one is collected the next is on
c1 or c2 again, and so on; each is worth ``chicken_reward`` (0.1). Walls and the chicken block
moves. At step ``signal_steps + grey_steps`` (144, counted from 0) the floor turns purple and the
agent must recall the colour: left for red, right for green earns ``success_reward`` (4), any
other action ``fail_reward`` (−3), and the episode ends.

Optimum (App. A.2.3): 8.8. Every chicken takes three steps at best (two moves to the cell south of
it, one to collect; c3 blocks the short way back), 48 in 144 steps, 4.8, and the right choice, 4.
Without memory of the colour: 4.8 + (4 − 3)/2 = 5.3.

Not in the paper's text, memrl's choices: the cells' placement inside the 4×3 room (the paper's
map is a figure), that collecting needs the chicken in front of the agent, and the purple floor
that asks for the choice (the paper does not say how its agent is asked). Actions: 0 forward
(north), 1 backward, 2 left, 3 right, 4 collect.
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from memrl.envs.base import Environment, register
from memrl.envs.minecraft_view import CODE, VIEW_SHAPE, crop, picture

FORWARD, BACKWARD, LEFT, RIGHT, COLLECT = range(5)
MOVES = jnp.asarray([(1, 0), (-1, 0), (0, -1), (0, 1), (0, 0)], jnp.int32)  # (row, col) deltas
START = (1, 2)  # a; rows 1-4 and columns 1-3 are the room, inside walls
C3 = (2, 2)
C1_C2 = ((3, 1), (3, 3))
WALLS = np.pad(np.zeros((4, 3), bool), 1, constant_values=True)


@struct.dataclass
class ChickenParams:
    """Numeric settings: the signal's and the grey floor's steps and the three rewards."""

    signal_steps: int = 48
    grey_steps: int = 96
    chicken_reward: float = 0.1
    success_reward: float = 4.0
    fail_reward: float = -3.0


class ChickenState(NamedTuple):
    """The agent's and the chicken's cells, the steps taken and the floor's colour."""

    agent: jax.Array  # int32 [2] (row, col)
    chicken: jax.Array  # int32 [2]
    timestep: jax.Array  # int32 steps taken
    green: jax.Array  # bool: the floor's colour during the signal


@dataclasses.dataclass(frozen=True)
class MinecraftChicken(Environment):
    """The Chicken room (module docstring)."""

    params: ChickenParams = ChickenParams()

    def __post_init__(self):
        p = self.params
        if p.signal_steps < 1 or p.grey_steps < 0:
            raise ValueError(f"signal_steps must be >= 1 and grey_steps >= 0, got {p.signal_steps} and {p.grey_steps}")

    @property
    def observation_shape(self):
        return VIEW_SHAPE

    @property
    def action_dims(self):
        return (5,)

    @staticmethod
    def choice_step(params: ChickenParams):
        """The step (from 0) at which the agent must recall the colour."""
        return params.signal_steps + params.grey_steps

    def world(self, state: ChickenState, params: ChickenParams) -> jax.Array:
        """[6, 5] block codes: walls, the floor's current colour, the chicken."""
        signal = jnp.where(state.green, CODE["green"], CODE["red"])
        floor = jnp.where(
            state.timestep < params.signal_steps,
            signal,
            jnp.where(state.timestep < self.choice_step(params), CODE["grey"], CODE["end"]),
        )
        world = jnp.where(jnp.asarray(WALLS), CODE["wall"], floor)
        return world.at[state.chicken[0], state.chicken[1]].set(CODE["chicken"])

    def observe(self, state: ChickenState, params: ChickenParams) -> jax.Array:
        """The agent's 20×20×3 view."""
        return picture(crop(self.world(state, params), state.agent[0], state.agent[1]))

    @staticmethod
    def first_chicken(key) -> jax.Array:
        """c1 or c2, uniformly."""
        return jnp.asarray(C1_C2, jnp.int32)[jax.random.randint(key, (), 0, 2)]

    def initial_state(self, green, chicken) -> ChickenState:
        """The reset state with the floor colour and the first chicken's cell."""
        return ChickenState(
            jnp.asarray(START, jnp.int32), jnp.asarray(chicken, jnp.int32), jnp.int32(0), jnp.asarray(green, bool)
        )

    def reset_env(self, key, params):
        green_key, chicken_key = jax.random.split(key)
        state = self.initial_state(jax.random.bernoulli(green_key), self.first_chicken(chicken_key))
        return self.observe(state, params), state

    def step_env(self, key, state, action, params):
        choice = action[0]
        choosing = state.timestep >= self.choice_step(params)
        onto = state.agent + MOVES[choice]
        blocked = jnp.asarray(WALLS)[onto[0], onto[1]] | jnp.all(onto == state.chicken)
        agent = jnp.where(choosing | blocked, state.agent, onto)
        collected = ~choosing & (choice == COLLECT) & jnp.all(state.agent + MOVES[FORWARD] == state.chicken)
        next_chicken = jnp.where(
            jnp.all(state.chicken == jnp.asarray(C3)), self.first_chicken(key), jnp.asarray(C3, jnp.int32)
        )
        right = jnp.where(state.green, choice == RIGHT, choice == LEFT)
        reward = jnp.where(collected, params.chicken_reward, 0.0) + jnp.where(
            choosing, jnp.where(right, params.success_reward, params.fail_reward), 0.0
        )
        state = ChickenState(agent, jnp.where(collected, next_chicken, state.chicken), state.timestep + 1, state.green)
        return self.observe(state, params), state, reward.astype(jnp.float32), choosing, jnp.bool_(False), {}


register("minecraft-maze/chicken", MinecraftChicken.from_settings)
