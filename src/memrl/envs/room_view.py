"""Ballet's room and egocentric view (Lampinen et al. 2021, App. B.1; the official pycolab Ballet),
shared by the environments set in it: Ballet, object permanence and word learning.

The room is 11×11 cells with walls on its border; moves go in 8 directions, and a move is blocked
by a wall on the target cell or (diagonal moves) by walls on both orthogonal neighbours. The agent
sees the egocentric 11×11 crop of the board (floor outside the room) as a 99×99×3 uint8 picture of
9×9-pixel cells (``observation="image"``) or as float one-hots of cell codes (``"cells"``).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from memrl.envs import ballet_tables as tables

OBSERVATIONS = ("image", "cells")
ROOM_WALLS = jnp.asarray(np.pad(np.zeros((tables.ROOM_SIZE - 2,) * 2, bool), 1, constant_values=True))
DELTAS = jnp.asarray(tables.DIRECTION_DELTAS, jnp.int32)
ACTION_DIMS = (len(tables.DIRECTIONS),)
STEPS_PER_SECOND = 5
"""the step rate of the 2D analogues of HTM's Unity tasks set in this room (object permanence, word
learning): the paper gives their times in seconds and not its agent's step rate"""


def check_observation(observation: str) -> None:
    """Refuse an observation form other than "image" or "cells"."""
    if observation not in OBSERVATIONS:
        raise ValueError(f"observation must be 'image' or 'cells', got {observation!r}")


def view_shape(observation: str, channels: int) -> tuple[int, ...]:
    """The image part's shape: the picture, or the crop's one-hots of ``channels`` codes."""
    size = tables.CROP_SIZE
    return (
        (size * tables.CELL_PIXELS, size * tables.CELL_PIXELS, 3) if observation == "image" else (size, size, channels)
    )


def blocked(agent: jax.Array, delta: jax.Array) -> jax.Array:
    """The official move rule: blocked by a wall on the target cell, or (diagonal moves) by walls
    on both orthogonal neighbours."""
    wall = lambda cell: ROOM_WALLS[cell[0], cell[1]]
    diagonal = (delta[0] != 0) & (delta[1] != 0)
    both_sides = wall(agent + delta * jnp.array([1, 0])) & wall(agent + delta * jnp.array([0, 1]))
    return wall(agent + delta) | (diagonal & both_sides)


def step_toward(agent: jax.Array, goal: jax.Array, avoid: jax.Array, avoided: jax.Array) -> jax.Array:
    """The move (8 directions) that brings the agent closest to ``goal`` (Chebyshev distance),
    never into a wall or onto one of the cells ``avoid`` [M, 2] where ``avoided`` [M]."""
    onto = agent + DELTAS
    distance = jnp.abs(onto - goal).max(axis=-1)
    hits = (jnp.all(onto[:, None] == avoid[None], axis=-1) & avoided[None]).any(axis=-1)
    walls = jax.vmap(lambda delta: blocked(agent, delta))(DELTAS)
    return jnp.argmin(jnp.where(hits | walls, 100, distance)).astype(jnp.int32)


def egocentric_crop(board: jax.Array, agent: jax.Array, outside: int = 0) -> jax.Array:
    """The [11, 11] crop of ``board`` with ``agent`` at its centre, ``outside`` beyond the room."""
    half = tables.CROP_SIZE // 2
    padded = jnp.pad(board, half, constant_values=outside)
    return jax.lax.dynamic_slice(padded, (agent[0], agent[1]), (tables.CROP_SIZE, tables.CROP_SIZE))


def solid(rgb) -> jax.Array:
    """[1, 9, 9, 3] uint8 pixels of a cell filled with ``rgb``."""
    return jnp.broadcast_to(jnp.asarray(rgb, jnp.uint8), (1, tables.CELL_PIXELS, tables.CELL_PIXELS, 3))


def picture(appearance: jax.Array, crop: jax.Array) -> jax.Array:
    """The 99×99×3 uint8 picture of a crop of board codes, code c drawn as ``appearance[c]`` [9, 9, 3]."""
    size = tables.CROP_SIZE * tables.CELL_PIXELS
    return appearance[crop].transpose(0, 2, 1, 3, 4).reshape(size, size, 3)


def one_hot_cells(crop: jax.Array, codes) -> jax.Array:
    """[11, 11, len(codes)] float: which of ``codes`` each cell of the crop holds."""
    return (crop[..., None] == jnp.asarray(codes)).astype(jnp.float32)
