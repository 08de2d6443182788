"""The blocks and the egocentric view of memrl's 2D analogues of AMRL's Minecraft tasks (Beck et
al. 2020, Sec. 4.2 and App. A.1.4-A.1.6, A.2.3): the mazes (``minecraft_maze``) and Chicken
(``minecraft_chicken``).

The originals are first-person Minecraft frames (Project Malmo), which cannot run here. The
analogue draws a top-down grid of blocks: the agent always faces north and sees the 5×5 cells from
one row behind it to three rows ahead and two columns to each side (``VIEW_BEHIND``,
``VIEW_AHEAD``, ``VIEW_SIDE``), each cell a solid square of ``CELL_PIXELS``×``CELL_PIXELS`` pixels
in its block's colour: a 20×20×3 float32 picture with pixels in [-1, 1], the range in which
MC-LSN's Gaussian noise is clipped (App. A.1.6). The agent's own cell is drawn as the block it
stands on. Row 0 of a world map is its southern edge; the picture has north up.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

VIEW_BEHIND, VIEW_AHEAD, VIEW_SIDE = 1, 3, 2
VIEW_ROWS, VIEW_COLS = VIEW_BEHIND + 1 + VIEW_AHEAD, 2 * VIEW_SIDE + 1
CELL_PIXELS = 4
VIEW_SHAPE = (VIEW_ROWS * CELL_PIXELS, VIEW_COLS * CELL_PIXELS, 3)

BLOCK_RGB = {
    "void": (0, 0, 0),
    "wall": (90, 90, 90),  # stone
    "floor": (130, 100, 60),  # dirt
    "step": (200, 170, 110),  # the raised walkway (sandstone)
    "ledge": (160, 80, 40),
    "pillar": (60, 60, 130),  # the room's side columns
    "iron": (215, 215, 215),  # a silver column: the safe side is west
    "diamond": (90, 220, 230),  # a blue column: the safe side is east
    "green": (40, 200, 40),
    "red": (210, 40, 40),
    "platform": (110, 70, 40),
    "end": (150, 50, 200),  # purple
    "grey": (150, 150, 150),
    "chicken": (255, 255, 255),
}
BLOCKS = tuple(BLOCK_RGB)
CODE = {name: i for i, name in enumerate(BLOCKS)}
"""block name -> the int code that world maps hold"""
COLOURS = jnp.asarray(np.array([BLOCK_RGB[name] for name in BLOCKS], np.float32) / 127.5 - 1.0)
"""[blocks, 3] each block's colour with channels in [-1, 1]"""


def crop(world: jax.Array, row: jax.Array, col: jax.Array) -> jax.Array:
    """The [5, 5] block codes the agent at (``row``, ``col``) of ``world`` [H, W] sees, north up
    (void beyond the map)."""
    pad = max(VIEW_AHEAD, VIEW_BEHIND, VIEW_SIDE)
    padded = jnp.pad(world, pad, constant_values=CODE["void"])
    window = jax.lax.dynamic_slice(padded, (row + pad - VIEW_BEHIND, col + pad - VIEW_SIDE), (VIEW_ROWS, VIEW_COLS))
    return window[::-1]


def picture(codes: jax.Array) -> jax.Array:
    """The 20×20×3 float32 picture of a [5, 5] crop of block codes."""
    cells = COLOURS[codes]  # [5, 5, 3]
    return jnp.repeat(jnp.repeat(cells, CELL_PIXELS, axis=0), CELL_PIXELS, axis=1)


def with_noise(key, image: jax.Array, std) -> jax.Array:
    """``image`` plus 0-mean Gaussian noise of standard deviation ``std`` on every pixel and
    channel, clipped back to [-1, 1] (MC-LSN, App. A.1.6); ``std`` 0 leaves it unchanged."""
    return jnp.clip(image + std * jax.random.normal(key, image.shape), -1.0, 1.0)
