"""Passive Visual Match, a 2-D analogue (``pvm``) of the DMLab level of Hung et al. 2019
("Optimizing agent behavior over long time scales by transporting value"), used by Lampinen et al.
2021 (Sec. 3.2) to test memory across a long distractor phase.

Three phases in one walled room, seen from above:
1. Colour (5 s): a coloured square lies on a cell of the room; the agent walks around and sees it.
   Nothing is rewarded.
2. Distractor (30 s): the square is gone; apples lie on random cells, each worth ``apple_reward``
   (1, as in the original) when the agent steps on it.
3. Choice (up to 5 s): ``num_choices`` squares of distinct colours, one of them the phase-1 colour;
   stepping on the matching one gives ``match_reward`` (10, as in the original) and ends the
   episode, stepping on another ends it with 0; the episode is truncated when the phase runs out.

Seconds become steps at ``steps_per_second`` = 15 (DMLab's 60 frames per second with the usual
action repeat of 4): phases of 75, 450 and 75 steps. The original is a first-person 3-D level;
here the observation is the whole room as [size, size, 3 + colours] one-hots (wall, agent, apple,
square colour), so what is tested is the memory across the distractor phase, not 3-D vision.
Actions: North, East, South, West; walls block.

``choice_layout="around"`` (not the original's) sets the choice phase as one move: the agent stands at
the room's centre when the squares appear and they lie around it, one per move (up to four), so
choosing is one move toward the remembered colour wherever it lies. With squares anywhere (the
default, "random") the choice is the remembered colour joined with where each square lies, which
memrl's agents did not learn even one step after seeing the colour (docs/results/htm.md).
``shortest_distractor_seconds`` (not the original's either) draws each episode's distractor length
from a range of whole seconds, so that one agent trains on short delays and long ones alike.
"""

from __future__ import annotations

import dataclasses
from typing import Literal, NamedTuple

import jax
import jax.numpy as jnp
from flax import struct

from memrl.envs.base import Environment, register

MOVES = jnp.array([(-1, 0), (0, 1), (1, 0), (0, -1)], jnp.int32)  # N, E, S, W as (row, col)
NUM_COLORS = 8
"""colours in the original level's palette (memrl's default)"""
COLOR_PHASE, DISTRACTOR_PHASE, CHOICE_PHASE = 0, 1, 2


@struct.dataclass
class PVMParams:
    """Numeric settings; phase lengths in seconds of the original level."""

    steps_per_second: int = 15
    color_seconds: int = 5
    distractor_seconds: int = 30
    choice_seconds: int = 5
    apple_reward: float = 1.0
    match_reward: float = 10.0
    apple_density: float = 0.3
    shortest_distractor_seconds: int | None = None
    """None: every distractor phase lasts ``distractor_seconds``; else each episode's lasts a whole
    number of seconds drawn uniformly from this to ``distractor_seconds`` (not the original's: a mix
    of delays, as Ballet's mixed level, so that short ones teach storing the colour)"""


class PVMState(NamedTuple):
    agent: jax.Array  # int32 [2]
    target_color: jax.Array  # int32
    target_cell: jax.Array  # int32 [2]: the phase-1 square
    apples: jax.Array  # bool [size, size]
    choice_cells: jax.Array  # int32 [num_choices, 2]
    choice_colors: jax.Array  # int32 [num_choices]; entry 0 is the target colour
    distractor_end: jax.Array  # int32: the step at which this episode's distractor phase ends
    step: jax.Array  # int32


@dataclasses.dataclass(frozen=True)
class PassiveVisualMatch(Environment):
    """A ``room_size`` × ``room_size`` room (walls included) with ``num_choices`` squares in phase 3,
    their colours drawn from ``num_colors``."""

    room_size: int = 7
    num_choices: int = 3
    num_colors: int = NUM_COLORS
    choice_layout: Literal["random", "around"] = "random"
    """where the choice phase's squares lie: on random floor cells ("random"), or around the room's
    centre, one per move, with the agent set at the centre when they appear ("around")"""
    params: PVMParams = PVMParams()

    def __post_init__(self):
        if self.room_size < 4:
            raise ValueError(f"room_size must be >= 4 (a 2×2 floor at least), got {self.room_size}")
        if not 2 <= self.num_colors:
            raise ValueError(f"num_colors must be at least 2, got {self.num_colors}")
        most = min(
            self.num_colors, (self.room_size - 2) ** 2 - 2
        )  # the floor holds the agent, the phase-1 square and the choices apart
        if self.choice_layout not in ("random", "around"):
            raise ValueError(f"choice_layout must be 'random' or 'around', got {self.choice_layout!r}")
        if self.choice_layout == "around":
            if self.room_size < 5:
                raise ValueError(f"choice_layout 'around' needs room_size >= 5 (a 3×3 floor), got {self.room_size}")
            most = min(most, len(MOVES))  # one square per move
        longest, shortest = self.params.distractor_seconds, self.params.shortest_distractor_seconds
        if shortest is not None and not 0 <= shortest <= longest:
            raise ValueError(
                f"shortest_distractor_seconds must be between 0 and distractor_seconds ({longest}) or None, got {shortest}"
            )
        if not 2 <= self.num_choices <= most:
            raise ValueError(
                f"num_choices must be between 2 and {most} (num_colors {self.num_colors}, room_size {self.room_size}), got {self.num_choices}"
            )

    @property
    def observation_shape(self):
        return (self.room_size, self.room_size, 3 + self.num_colors)

    @property
    def action_dims(self):
        return (len(MOVES),)

    @staticmethod
    def phase_ends(params: PVMParams) -> tuple[jax.Array, jax.Array, jax.Array]:
        """The steps at which the colour, distractor and choice phases end in the longest episode."""
        color = params.color_seconds * params.steps_per_second
        distractor = color + params.distractor_seconds * params.steps_per_second
        return color, distractor, distractor + params.choice_seconds * params.steps_per_second

    @staticmethod
    def episode_end(state: PVMState, params: PVMParams) -> jax.Array:
        """The step at which this episode's choice phase runs out."""
        return state.distractor_end + params.choice_seconds * params.steps_per_second

    def phase(self, state: PVMState, params: PVMParams) -> jax.Array:
        color_end = self.phase_ends(params)[0]
        return jnp.where(
            state.step < color_end,
            COLOR_PHASE,
            jnp.where(state.step < state.distractor_end, DISTRACTOR_PHASE, CHOICE_PHASE),
        )

    def centre(self) -> jax.Array:
        """[2] the room's centre cell (row, column): where "around" sets the agent among the squares."""
        return jnp.full(2, self.room_size // 2, jnp.int32)

    def choice_cells(self, order: jax.Array) -> jax.Array:
        """[num_choices, 2] the squares' cells: floor cells after the agent's and the phase-1 square's
        in ``order`` (a permutation of the floor), or (``around``) the centre's neighbours, in an order
        drawn from it."""
        if self.choice_layout == "around":
            around = self.centre() + MOVES
            return around[jnp.argsort(order[: len(MOVES)])[: self.num_choices]]
        return self.floor_cells()[order[2 : 2 + self.num_choices]]

    def floor_cells(self) -> jax.Array:
        inner = jnp.arange(1, self.room_size - 1)
        return jnp.stack(jnp.meshgrid(inner, inner, indexing="ij"), -1).reshape(-1, 2)

    def observe(self, state: PVMState, params: PVMParams) -> jax.Array:
        size = self.room_size
        wall = jnp.ones((size, size), bool).at[1:-1, 1:-1].set(False)
        agent = jnp.zeros((size, size), bool).at[state.agent[0], state.agent[1]].set(True)
        phase = self.phase(state, params)
        colors = jnp.zeros((size, size, self.num_colors), bool)
        colors = jnp.where(
            phase == COLOR_PHASE,
            colors.at[state.target_cell[0], state.target_cell[1], state.target_color].set(True),
            colors,
        )
        choices = colors.at[state.choice_cells[:, 0], state.choice_cells[:, 1], state.choice_colors].set(True)
        colors = jnp.where(phase == CHOICE_PHASE, choices, colors)
        apples = state.apples & (phase == DISTRACTOR_PHASE)
        return jnp.concatenate([wall[..., None], agent[..., None], apples[..., None], colors], -1).astype(jnp.float32)

    def reset_env(self, key, params):
        cells_key, color_key, apple_key, delay_key = jax.random.split(key, 4)
        color_end, longest_end, _ = self.phase_ends(params)
        if params.shortest_distractor_seconds is None:
            distractor_end = jnp.int32(longest_end)
        else:
            seconds = jax.random.randint(
                delay_key, (), params.shortest_distractor_seconds, params.distractor_seconds + 1
            )
            distractor_end = (color_end + seconds * params.steps_per_second).astype(jnp.int32)
        floor = self.floor_cells()
        order = jax.random.permutation(cells_key, len(floor))
        colors = jax.random.permutation(color_key, self.num_colors)[: self.num_choices]
        state = PVMState(
            agent=floor[order[0]],
            target_color=colors[0],
            target_cell=floor[order[1]],
            apples=jax.random.bernoulli(apple_key, params.apple_density, (self.room_size, self.room_size)),
            choice_cells=self.choice_cells(order),
            choice_colors=colors,
            distractor_end=distractor_end,
            step=jnp.int32(0),
        )
        return self.observe(state, params), state

    def step_env(self, key, state, action, params):
        moved = state.agent + MOVES[action[0]]
        inside = jnp.all((moved >= 1) & (moved <= self.room_size - 2))
        agent = jnp.where(inside, moved, state.agent)
        state = state._replace(agent=agent, step=state.step + 1)
        phase_before = self.phase(state._replace(step=state.step - 1), params)
        apple = state.apples[agent[0], agent[1]] & (phase_before == DISTRACTOR_PHASE)
        on_choice = jnp.all(state.choice_cells == agent, axis=-1) & (phase_before == CHOICE_PHASE)
        terminated = on_choice.any()
        reward = jnp.where(apple, params.apple_reward, 0.0) + jnp.where(on_choice[0], params.match_reward, 0.0)
        state = state._replace(
            apples=state.apples.at[agent[0], agent[1]].set(state.apples[agent[0], agent[1]] & ~apple)
        )
        if self.choice_layout == "around":  # set at the centre, among the squares, as they appear
            entering = state.step == state.distractor_end
            state = state._replace(agent=jnp.where(entering, self.centre(), state.agent))
        truncated = ~terminated & (state.step >= self.episode_end(state, params))
        return self.observe(state, params), state, reward.astype(jnp.float32), terminated, truncated, {}


register("pvm", PassiveVisualMatch.from_settings)
