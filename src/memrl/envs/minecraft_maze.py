"""AMRL's Minecraft mazes MC-LS, MC-LSO and MC-LSN (Beck et al. 2020, Sec. 4.2 and App.
A.1.4-A.1.6) as a 2D analogue with a rendered egocentric RGB view (``minecraft_view``).

The agent starts on a platform facing an indicator block, green or red, and steps east off it
into the maze (MC-LSO: onto a second platform with a second indicator, then east into the maze).
Each of ``num_rooms`` rooms takes six steps, every one rewarded with ``step_reward`` (0.1):
north through the entrance between two pillars, north onto a ledge facing a column, off the ledge
to the column's safe side (a blue, diamond column: east; a silver, iron one: west), north twice
along the raised walkway, and back down to the centre, which is the next room's entrance. After the
last room the centre cell is purple: east ("right") there earns ``success_reward`` (4) if the
indicator was green (MC-LSO: green then red) and ``fail_reward`` (−3) otherwise, as does west
("left") in the opposite case, and the episode ends. Any other action does nothing (the agent
stays, no reward): walls, pillars and columns block it, the raised cells cannot be climbed, and
the unsafe side of a ledge is closed, as a wrong answer to T-LS's check keeps the agent in place.
An episode not decided after ``timeout`` (200) steps is truncated. MC-LSN adds Gaussian noise of
standard deviation ``noise_std`` (0.05) to every pixel and channel of every observation, clipped
to [-1, 1].

Optimum and memory-less returns (App. A.1.4-A.1.6): MC-LS (16 rooms) 97 rewarded steps + 4 = 13.7,
a policy without memory of the indicator 9.7 + (4 − 3)/2 = 10.2; MC-LSO (10 rooms, two platforms)
6.2 + 4 = 10.2 and 6.2 + 2.25 = 8.45 (always west is right 3 times in 4); MC-LSN (10 rooms) 10.1
and 6.6. The view shows every short-term cue (the column's colour, the walls beside the agent), so
only the final choice needs memory.

Not in the paper's text, memrl's choices: which column colour means which side, the blocked unsafe
side (the paper says only that the right side is rewarded), the view's size and the block colours.
Actions: 0 north, 1 east, 2 south, 3 west (the paper's four moves).
"""

from __future__ import annotations

import dataclasses
import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from memrl.envs.base import Environment, register
from memrl.envs.minecraft_view import CODE, VIEW_SHAPE, crop, picture, with_noise

NORTH, EAST, SOUTH, WEST = range(4)
LEDGE, DECIDE, NONE = 4, 5, -1  # required actions beyond the four moves
PLATFORMS = ((1, 1), (1, 4))
"""(row, col) of the first and second platforms; each faces its indicator block one row north"""
WEST_COL, CENTRE_COL, EAST_COL = 8, 9, 10  # the maze's three columns, walls at 7 and 11
ROOM_ROWS = 4
FIRST_ROOM_ROW = 1


@struct.dataclass
class MinecraftMazeParams:
    """Numeric settings: the timeout, the three rewards and MC-LSN's pixel-noise std."""

    timeout: int = 200
    step_reward: float = 0.1
    success_reward: float = 4.0
    fail_reward: float = -3.0
    noise_std: float = 0.0


class MinecraftMazeState(NamedTuple):
    """The agent's cell, the steps taken and this episode's indicators and columns."""

    row: jax.Array  # int32
    col: jax.Array  # int32
    timestep: jax.Array  # int32 steps taken
    green: jax.Array  # bool [2]: the first and second indicators are green (the second unused unless ``ordered``)
    diamond: jax.Array  # bool [num_rooms]: the room's column is diamond (safe side east), else iron (west)


def room_base(room: int) -> int:
    """The row of room ``room``'s entrance."""
    return FIRST_ROOM_ROW + ROOM_ROWS * room


def world_and_rules(num_rooms: int, ordered: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(blocks [H, 12], required action [H, 12], destination [H, 12, 2]) of a maze: the block codes
    (the indicators drawn red and the columns iron, set per episode by ``MinecraftMaze.world``),
    the one action that moves the agent on from each cell (``LEDGE``: the column's safe side,
    ``DECIDE``: the final choice, ``NONE``: off the path) and where a move from the cell lands."""
    end_row = room_base(num_rooms)
    height = end_row + 2
    world = np.full((height, 12), CODE["void"], np.int32)
    required = np.full((height, 12), NONE, np.int32)
    destination = np.zeros((height, 12, 2), np.int32)

    def path(cell, action, onto):
        required[cell] = action
        destination[cell] = onto

    world[:, 7] = world[:, 11] = CODE["wall"]
    world[0, 7:12] = world[end_row + 1, 7:12] = CODE["wall"]
    platforms = PLATFORMS if ordered else PLATFORMS[:1]
    starts = [*platforms[1:], (FIRST_ROOM_ROW, CENTRE_COL)]
    for platform, onto in zip(platforms, starts):
        world[platform] = CODE["platform"]
        world[platform[0] + 1, platform[1]] = CODE["red"]
        path(platform, EAST, onto)
    for room in range(num_rooms):
        base = room_base(room)
        world[base, [WEST_COL, EAST_COL]] = CODE["step"]
        world[base, CENTRE_COL] = world[base + 1, CENTRE_COL] = CODE["floor"]
        world[base + 1, [WEST_COL, EAST_COL]] = CODE["pillar"]
        world[base + 2, CENTRE_COL] = CODE["ledge"]
        world[base + 2, [WEST_COL, EAST_COL]] = CODE["floor"]
        world[base + 3, CENTRE_COL] = CODE["iron"]
        world[base + 3, [WEST_COL, EAST_COL]] = CODE["step"]
        path((base, CENTRE_COL), NORTH, (base + 1, CENTRE_COL))
        path((base + 1, CENTRE_COL), NORTH, (base + 2, CENTRE_COL))
        required[base + 2, CENTRE_COL] = LEDGE
        for side, toward_centre in ((WEST_COL, EAST), (EAST_COL, WEST)):
            path((base + 2, side), NORTH, (base + 3, side))
            path((base + 3, side), NORTH, (base + 4, side))
            path((base + 4, side), toward_centre, (base + 4, CENTRE_COL))
    world[end_row, [WEST_COL, EAST_COL]] = CODE["step"]
    world[end_row, CENTRE_COL] = CODE["end"]
    required[end_row, CENTRE_COL] = DECIDE
    return world, required, destination


@dataclasses.dataclass(frozen=True)
class MinecraftMaze(Environment):
    """A Minecraft maze of ``num_rooms`` rooms; ``ordered`` adds MC-LSO's second indicator."""

    num_rooms: int = 16
    ordered: bool = False
    params: MinecraftMazeParams = MinecraftMazeParams()

    def __post_init__(self):
        if not isinstance(self.num_rooms, int) or self.num_rooms < 1:
            raise ValueError(f"num_rooms must be an integer >= 1, got {self.num_rooms!r}")
        p = self.params
        if p.timeout <= self.rewarded_steps:
            raise ValueError(
                f"timeout must be > {self.rewarded_steps}, got {p.timeout}: the shortest episode of {self.num_rooms} rooms "
                f"takes {self.rewarded_steps + 1} steps ({self.rewarded_steps} moves and the choice), so none could end"
            )
        if p.noise_std < 0:
            raise ValueError(f"noise_std must be >= 0 (the pixel noise's standard deviation), got {p.noise_std}")

    @property
    def observation_shape(self):
        return VIEW_SHAPE

    @property
    def action_dims(self):
        return (4,)

    @functools.cached_property
    def _rules(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        # NumPy, not JAX, arrays are cached: one first made inside a jit trace would be a tracer
        return world_and_rules(self.num_rooms, self.ordered)

    @property
    def rules(self) -> tuple[jax.Array, jax.Array, jax.Array]:
        """``world_and_rules`` of this maze as arrays."""
        return tuple(jnp.asarray(a) for a in self._rules)

    @property
    def rewarded_steps(self) -> int:
        """Steps that earn ``step_reward`` on the way to the final choice: a platform's and six a room."""
        return (2 if self.ordered else 1) + 6 * self.num_rooms

    def goal_east(self, state: MinecraftMazeState) -> jax.Array:
        """Whether the final choice must be east: green (MC-LSO: green, then red)."""
        return state.green[0] & ~state.green[1] if self.ordered else state.green[0]

    def safe_side(self, state: MinecraftMazeState) -> jax.Array:
        """EAST or WEST: the safe side of the ledge the agent stands on (of its room's column)."""
        room = jnp.clip((state.row - FIRST_ROOM_ROW) // ROOM_ROWS, 0, self.num_rooms - 1)
        return jnp.where(state.diamond[room], EAST, WEST)

    def required_action(self, state: MinecraftMazeState) -> jax.Array:
        """The action that moves the agent on (``LEDGE`` resolved to the safe side; ``DECIDE`` at the end)."""
        required = self.rules[1][state.row, state.col]
        return jnp.where(required == LEDGE, self.safe_side(state), required)

    def world(self, state: MinecraftMazeState) -> jax.Array:
        """[H, 12] block codes with this episode's indicators and columns."""
        world = self.rules[0]
        for i, (row, col) in enumerate(PLATFORMS[: 2 if self.ordered else 1]):
            world = world.at[row + 1, col].set(jnp.where(state.green[i], CODE["green"], CODE["red"]))
        rows = jnp.asarray([room_base(room) + 3 for room in range(self.num_rooms)])
        return world.at[rows, CENTRE_COL].set(jnp.where(state.diamond, CODE["diamond"], CODE["iron"]))

    @property
    def observation_bounds(self) -> tuple[float, float]:
        return (-1.0, 1.0)  # the view's colours, noisy ones clipped

    def observe(self, key, state: MinecraftMazeState, params: MinecraftMazeParams) -> jax.Array:
        """The agent's 20×20×3 view, with ``params.noise_std`` pixel noise."""
        return with_noise(key, picture(crop(self.world(state), state.row, state.col)), params.noise_std)

    def initial_state(self, green, diamond) -> MinecraftMazeState:
        """The reset state with indicators ``green`` [2] and columns ``diamond`` [num_rooms]."""
        row, col = PLATFORMS[0]
        zero = jnp.zeros((), jnp.int32)
        return MinecraftMazeState(zero + row, zero + col, zero, jnp.asarray(green, bool), jnp.asarray(diamond, bool))

    def reset_env(self, key, params):
        green_key, column_key, noise_key = jax.random.split(key, 3)
        state = self.initial_state(
            jax.random.bernoulli(green_key, shape=(2,)), jax.random.bernoulli(column_key, shape=(self.num_rooms,))
        )
        return self.observe(noise_key, state, params), state

    def step_env(self, key, state, action, params):
        _, required, destination = self.rules
        needed = self.required_action(state)
        choice = action[0]
        deciding = (needed == DECIDE) & ((choice == EAST) | (choice == WEST))
        moves = (needed >= 0) & (needed < 4) & (choice == needed)
        ledge = required[state.row, state.col] == LEDGE
        onto = jnp.where(
            ledge,
            jnp.stack([state.row, state.col + jnp.where(needed == EAST, 1, -1)]),
            destination[state.row, state.col],
        )
        right = (choice == EAST) == self.goal_east(state)
        reward = jnp.where(moves, params.step_reward, 0.0) + jnp.where(
            deciding, jnp.where(right, params.success_reward, params.fail_reward), 0.0
        )
        state = state._replace(
            row=jnp.where(moves, onto[0], state.row),
            col=jnp.where(moves, onto[1], state.col),
            timestep=state.timestep + 1,
        )
        truncated = ~deciding & (state.timestep >= params.timeout)
        return self.observe(key, state, params), state, reward.astype(jnp.float32), deciding, truncated, {}


VARIANTS = {
    "MC-LS": (dict(ordered=False), dict(num_rooms=16)),
    "MC-LSO": (dict(ordered=True), dict(num_rooms=10)),
    "MC-LSN": (dict(ordered=False), dict(num_rooms=10, noise_std=0.05)),
}
"""name -> (what it fixes, its defaults: the number of rooms (the paper's Fig. 3 draws 3) and numeric params)"""


for _variant, (_fixed, _defaults) in VARIANTS.items():
    register(f"minecraft-maze/{_variant}", MinecraftMaze.from_settings, fixed=_fixed, defaults=_defaults)
