"""Object permanence, a 2D analogue of HTM's hiding task (Lampinen et al. 2021, Sec. 3.2 and App.
B.2) in Ballet's room with Ballet's egocentric view.

The paper's task is 3D (Unity, 96×72 RGB frames, language instructions). This analogue keeps what
it tests: which of several identical boxes holds the object named at the end, remembered across a
delay after each reveal and across looking away from the boxes before the choice.

Ballet's 11×11 walled room; the agent starts at (7, 5) with every box in its view. N boxes
(default 3) stand on N distinct cells of row 3 (columns 1-9), each holding a distinct object: one
of 15 kinds (kind i is Ballet's shape i in Ballet's colour i). An episode:

1. reveal, frames 0 .. N·(12 + d) − 1, lids open, instruction "watch", the agent cannot move: the
   boxes take turns in a random order; each one's object jumps out three times (on the cell above
   its box for 2 frames, back inside for 2: 12 frames), then d frames of delay follow.
2. look backward, from frame N·(12 + d), lids closed, instruction "look backward": the agent moves
   (Ballet's 8 directions and wall rule; boxes block it). On the first frame with no box in its
   view (every box more than 5 cells away in row or column) it gets 0.3 and the choice begins.
3. choice, instruction "go to the box containing the <kind>": stepping onto a box ends the episode
   (terminated) with 1 for the box of the named object and 0 for another.
An episode not over 100 frames after the lids close is truncated.

Observations, as Ballet's: ``{"image", "language"}``, the egocentric 11×11 crop as a 99×99×3 uint8
picture (9×9 pixels a cell: walls and the agent as in Ballet, an open box, a closed box, the
objects as their shape in their colour) or, with ``observation="cells"``, [11, 11, 19] float
one-hots (wall, agent, open box, closed box, 15 object kinds); ``language`` is one int32 token:
0 "watch", 1 "look backward", 2 + kind for "go to the box containing the <kind>".

``box_layout="adjacent"`` (not the paper's) stands the boxes side by side on the columns around the
agent's start (3 boxes: columns 4, 5 and 6), so that after looking away (straight south) the choice
is one move west, north or east and then north: which box holds the object is what is remembered,
not where a box stands as well (the 2-D room's version of what made Passive Visual Match's choice
learnable by imitation, docs/results/htm.md). Only which object each box holds, the reveal order
and the named object are drawn.

Delays: the paper trains on delays of 0, 10, 20 and 30 seconds after each reveal; its agent's step
rate is not stated. memrl takes 5 steps a second, so that the longest episodes (3 boxes with 30-second
delays: 486 reveal frames and the choice) fill about the 512-step TrXL memory Table 1 gives the
task. Levels: ``object-permanence/delay{0,10,20,30}`` and ``object-permanence/mixed`` (uniform over
the four, the paper's training with varying delays).
"""

from __future__ import annotations

import dataclasses
from typing import Literal, NamedTuple

import jax
import jax.numpy as jnp

from memrl.envs import ballet_tables as tables
from memrl.envs.ballet import COLOR_RGB, SHAPE_MASKS, SHAPE_NAMES
from memrl.envs.base import Environment, register
from memrl.envs.room_view import (
    ACTION_DIMS,
    DELTAS,
    ROOM_WALLS,
    STEPS_PER_SECOND,
    blocked,
    check_observation,
    egocentric_crop,
    one_hot_cells,
    picture,
    solid,
    view_shape,
)

DELAYS_SECONDS = (0, 10, 20, 30)
JUMPS, JUMP_FRAMES = 3, 2  # out for 2 frames, in for 2, three times
REVEAL_FRAMES = 2 * JUMP_FRAMES * JUMPS
CHOICE_FRAMES = 100  # frames after the lids close before the episode is truncated
LOOK_REWARD = 0.3
BOX_ROW, OBJECT_ROW = 3, 2
AGENT_START = (7, 5)
BOX_COLUMNS = tuple(range(1, tables.ROOM_SIZE - 1))
NUM_KINDS = len(SHAPE_NAMES)
MAX_BOXES = len(BOX_COLUMNS)
BOX_LAYOUTS = ("random", "adjacent")
VIEW = tables.CROP_SIZE // 2  # a cell is in view within this many cells in row and column
WATCH, LOOK_BACK = 0, 1  # language tokens; kind k is named by 2 + k
FLOOR, WALL, AGENT, OPEN_BOX, CLOSED_BOX, FIRST_OBJECT = range(6)  # board codes; object kind k is FIRST_OBJECT + k
CELL_CHANNELS = 4 + NUM_KINDS
BOX_RGB = (150, 100, 50)
OPEN_BOX_MASK = jnp.asarray(
    [
        [c == "#" for c in row]
        for row in (
            "#.......#",
            "#.......#",
            "#.......#",
            "#.......#",
            "#.......#",
            "#.......#",
            "#.......#",
            "#########",
            "#########",
        )
    ],
    jnp.uint8,
)
CLOSED_BOX_MASK = jnp.asarray(
    [
        [c == "#" for c in row]
        for row in (
            "#########",
            "#########",
            "#.......#",
            "#########",
            "#########",
            "#########",
            "#########",
            "#########",
            "#########",
        )
    ],
    jnp.uint8,
)


class ObjectPermanenceState(NamedTuple):
    """One episode's layout (rows beyond ``num_boxes`` unused) and progress."""

    box_cols: jax.Array  # int32 [9]: each box's column on BOX_ROW
    kinds: jax.Array  # int32 [9]: the kind of object each box holds
    order: jax.Array  # int32 [9]: order[j] is the box revealed j-th
    target: jax.Array  # int32: the box whose object the choice instruction names
    num_boxes: jax.Array  # int32
    delay: jax.Array  # int32: frames of delay after each reveal
    agent: jax.Array  # int32 [2]
    frame: jax.Array  # int32: observations since the reset one (frame 0)
    choosing: jax.Array  # bool: the agent has looked away, the choice instruction is on


@dataclasses.dataclass(frozen=True)
class ObjectPermanence(Environment):
    """Object permanence with ``num_boxes`` boxes and ``observation`` "image" or "cells"."""

    num_boxes: int = 3
    observation: str = "image"
    delays_seconds: tuple[int, ...] = (0,)
    """the delays after each reveal, in seconds, an episode draws from uniformly (each level fixes them)"""
    box_layout: Literal["random", "adjacent"] = "random"
    """where the boxes stand in their row: on random distinct columns ("random"), or side by side on
    the columns around the agent's start column, the same every episode ("adjacent")"""

    def __post_init__(self):
        check_observation(self.observation)
        if not 1 <= self.num_boxes <= MAX_BOXES:
            raise ValueError(f"num_boxes must be in 1..{MAX_BOXES} (the cells of row {BOX_ROW}), got {self.num_boxes}")
        if self.box_layout not in BOX_LAYOUTS:
            raise ValueError(f"box_layout must be one of {BOX_LAYOUTS}, got {self.box_layout!r}")
        if not self.delays_seconds or any(d < 0 for d in self.delays_seconds):
            raise ValueError(f"delays_seconds must be one or more delays >= 0 seconds, got {self.delays_seconds}")

    @property
    def delays(self) -> jax.Array:
        """[delays] int32: ``delays_seconds`` in steps."""
        return jnp.array([d * STEPS_PER_SECOND for d in self.delays_seconds], jnp.int32)

    @property
    def observation_shape(self):
        return {"image": view_shape(self.observation, CELL_CHANNELS), "language": ()}

    @property
    def action_dims(self):
        return ACTION_DIMS

    @property
    def token_vocab(self):
        return {"language": 2 + NUM_KINDS}

    # ----- the world ------------------------------------------------------------------------
    @staticmethod
    def lids_close(state: ObjectPermanenceState) -> jax.Array:
        """The first frame after the reveal, N·(12 + d)."""
        return state.num_boxes * (REVEAL_FRAMES + state.delay)

    @staticmethod
    def box_cells(state: ObjectPermanenceState) -> jax.Array:
        """[9, 2] (row, col) of the boxes (rows beyond ``num_boxes`` off the board)."""
        rows = jnp.where(jnp.arange(MAX_BOXES) < state.num_boxes, BOX_ROW, tables.ROOM_SIZE)
        return jnp.stack([rows, state.box_cols], axis=-1)

    def jumping_box(self, state: ObjectPermanenceState) -> jax.Array:
        """The box whose object is out at ``state.frame`` (−1 if none)."""
        turn, within = jnp.divmod(state.frame, REVEAL_FRAMES + state.delay)
        out = (
            (state.frame < self.lids_close(state))
            & (within < REVEAL_FRAMES)
            & (within % (2 * JUMP_FRAMES) < JUMP_FRAMES)
        )
        return jnp.where(out, state.order[jnp.clip(turn, 0, MAX_BOXES - 1)], -1)

    def board(self, state: ObjectPermanenceState) -> jax.Array:
        """[11, 11] board codes: walls, the boxes (open during the reveal), the object that is out, the agent."""
        box = jnp.where(state.frame < self.lids_close(state), OPEN_BOX, CLOSED_BOX)
        cells = self.box_cells(state)
        board = jnp.where(ROOM_WALLS, WALL, FLOOR).at[cells[:, 0], cells[:, 1]].set(box, mode="drop")
        jumping = self.jumping_box(state)
        row = jnp.where(jumping >= 0, OBJECT_ROW, tables.ROOM_SIZE)
        board = board.at[row, state.box_cols[jnp.maximum(jumping, 0)]].set(
            FIRST_OBJECT + state.kinds[jnp.maximum(jumping, 0)], mode="drop"
        )
        return board.at[state.agent[0], state.agent[1]].set(AGENT)

    def boxes_in_view(self, state: ObjectPermanenceState) -> jax.Array:
        """Whether any box is within the agent's 11×11 view."""
        distance = jnp.abs(self.box_cells(state) - state.agent).max(axis=-1)
        return jnp.any((distance <= VIEW) & (jnp.arange(MAX_BOXES) < state.num_boxes))

    def observe(self, state: ObjectPermanenceState) -> dict:
        crop = egocentric_crop(self.board(state), state.agent, FLOOR)
        named = (2 + state.kinds[state.target]).astype(jnp.int32)
        language = jnp.where(
            state.choosing, named, jnp.where(state.frame < self.lids_close(state), WATCH, LOOK_BACK)
        ).astype(jnp.int32)
        image = render_image(crop) if self.observation == "image" else render_cells(crop)
        return {"image": image, "language": language}

    # ----- episodes -------------------------------------------------------------------------
    def initial_state(self, box_cols, kinds, order, target, delay) -> ObjectPermanenceState:
        """The reset state of a given layout (``num_boxes`` rows each)."""

        def pad(rows):
            rows = jnp.asarray(rows, jnp.int32)
            return jnp.zeros(MAX_BOXES, jnp.int32).at[: len(rows)].set(rows)

        return ObjectPermanenceState(
            pad(box_cols),
            pad(kinds),
            pad(order),
            jnp.int32(target),
            jnp.int32(self.num_boxes),
            jnp.int32(delay),
            jnp.array(AGENT_START, jnp.int32),
            jnp.int32(0),
            jnp.bool_(False),
        )

    def box_columns(self, key) -> jax.Array:
        """[9] int32: the columns of an episode's boxes (the first ``num_boxes`` are used) by ``box_layout``."""
        if self.box_layout == "adjacent":
            first = AGENT_START[1] - (self.num_boxes - 1) // 2
            return jnp.asarray(BOX_COLUMNS, jnp.int32)[(jnp.arange(MAX_BOXES) + first - BOX_COLUMNS[0]) % MAX_BOXES]
        return jnp.asarray(BOX_COLUMNS, jnp.int32)[jax.random.permutation(key, MAX_BOXES)]

    def reset_env(self, key, params):
        delay_key, col_key, kind_key, order_key, target_key = jax.random.split(key, 5)
        state = ObjectPermanenceState(
            box_cols=self.box_columns(col_key),
            kinds=jax.random.permutation(kind_key, NUM_KINDS)[:MAX_BOXES],
            order=_first_permuted(order_key, self.num_boxes),
            target=jax.random.randint(target_key, (), 0, self.num_boxes),
            num_boxes=jnp.int32(self.num_boxes),
            delay=jax.random.choice(delay_key, self.delays),
            agent=jnp.array(AGENT_START, jnp.int32),
            frame=jnp.int32(0),
            choosing=jnp.bool_(False),
        )
        return self.observe(state), state

    def step_env(self, key, state, action, params):
        moving = (state.frame >= self.lids_close(state)) & (action[0] >= 0) & (action[0] < len(tables.DIRECTIONS))
        delta = jnp.where(moving, DELTAS[jnp.clip(action[0], 0, len(DELTAS) - 1)], 0)
        onto = state.agent + delta
        on_box = jnp.all(self.box_cells(state) == onto, axis=-1)  # [9]
        stopped = blocked(state.agent, delta) | (on_box.any() & ~state.choosing)
        agent = jnp.where(stopped, state.agent, onto)
        chose = state.choosing & on_box.any() & ~stopped
        moved = state._replace(agent=agent, frame=state.frame + 1)
        looked_away = ~state.choosing & (moved.frame > self.lids_close(state)) & ~self.boxes_in_view(moved)
        state = moved._replace(choosing=state.choosing | looked_away)
        reward = jnp.where(looked_away, LOOK_REWARD, 0.0) + jnp.where(chose & on_box[state.target], 1.0, 0.0)
        truncated = ~chose & (state.frame >= self.lids_close(state) + CHOICE_FRAMES)
        return self.observe(state), state, reward.astype(jnp.float32), chose, truncated, {}


def _first_permuted(key, count: int) -> jax.Array:
    """A random order of boxes 0 .. count − 1, padded to MAX_BOXES."""
    return jnp.zeros(MAX_BOXES, jnp.int32).at[:count].set(jax.random.permutation(key, count).astype(jnp.int32))


def cell_appearance() -> jax.Array:
    """[5 + 15, 9, 9, 3] uint8 pixels of each board code."""
    box = lambda mask: (mask[..., None] * jnp.asarray(BOX_RGB, jnp.uint8))[None]
    objects = SHAPE_MASKS[..., None] * COLOR_RGB[:NUM_KINDS, None, None, :]
    return jnp.concatenate(
        [
            solid((0, 0, 0)),
            solid(tables.WALL_RGB),
            solid(tables.AGENT_RGB),
            box(OPEN_BOX_MASK),
            box(CLOSED_BOX_MASK),
            objects,
        ]
    )


def render_image(crop: jax.Array) -> jax.Array:
    """The 99×99×3 uint8 picture of a crop of board codes."""
    return picture(cell_appearance(), crop)


def render_cells(crop: jax.Array) -> jax.Array:
    """[11, 11, 19] float one-hots per cell: wall, agent, open box, closed box, object kind (15)."""
    return one_hot_cells(crop, [WALL, AGENT, OPEN_BOX, CLOSED_BOX] + [FIRST_OBJECT + k for k in range(NUM_KINDS)])


LEVEL_SETS = {**{f"delay{d}": (d,) for d in DELAYS_SECONDS}, "mixed": DELAYS_SECONDS}
for _name, _delays in LEVEL_SETS.items():
    register(f"object-permanence/{_name}", ObjectPermanence, fixed=dict(delays_seconds=_delays))
