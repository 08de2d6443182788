"""Ballet (Lampinen et al. 2021, "Towards mental time travel", Sec. 3.1), exactly as the official
pycolab environment (``hierarchical_transformer_memory/pycolab_ballet``; its recorded episodes,
with their provenance and quirks, are in ``tests/data/ballet``).

An 11×11 walled room with the agent at its centre and N dancers on N of 8 fixed slots, each with
its own shape, colour and dance (all distinct). Dancer i performs its 16 moves on frames
i·(15+delay) … i·(15+delay)+15 (the first move is already in the reset observation; the gap
between dances is delay−1 idle frames); meanwhile the instruction is "watch" and the agent cannot
move. From frame N·(15+delay) the instruction names the target's dance and the agent moves (8
directions; a diagonal move is blocked by a wall on the diagonal cell or on both orthogonal
neighbours; dancers are not obstacles). Stepping onto a dancer ends the episode with reward 1 for
the target, 0 otherwise (terminated, discount 0); reaching ``max_steps`` frames ends it with
reward 0 (truncated). On the final board the dancer is drawn over the agent.

Observations: ``{"image", "language"}``. The image is the egocentric 11×11 crop (outside the room
is floor-black), either as the official 99×99×3 picture (uint8, = 255 × the official floats:
walls and the agent fill their 9×9 cell, a dancer is its shape mask in its colour) or, with
``observation="cells"``, as a compact [11, 11, 36] float one-hot per cell (wall, agent, 15
shapes, 19 colours) carrying the same information at a fraction of the cost. ``language`` is one
int32 token: 0 for "watch", 1 + d for dance d of ``DANCE_NAMES``.

Levels: ``ballet/{N}_delay{d}`` for N in 2, 4, 6, 8 and d in 16, 48 (``max_steps`` 320 for delay 16
and 1024 for delay 48, as the official ``simple_builder``), ``ballet/mixed`` (the paper's
training distribution: uniform over {2, 4, 8} dancers × {16, 48}) and ``ballet/2-6_mixed`` (the
generalisation training set, {2, 4, 6} × {16, 48}; test on ``ballet/8_delay*``).
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from memrl.envs import ballet_tables as tables
from memrl.envs.base import Environment, register
from memrl.envs.room_view import (
    ACTION_DIMS,
    DELTAS,
    ROOM_WALLS,
    blocked,
    check_observation,
    egocentric_crop,
    picture,
    solid,
    view_shape,
)

NUM_MOVES = 16
MAX_DANCERS = len(tables.DANCER_SLOTS)
SHAPE_NAMES = tuple(tables.SHAPES)
COLOR_NAMES = tuple(tables.COLORS)
DANCE_NAMES = tuple(tables.DANCES)
WATCH = 0  # language token; dance d is token 1 + d
MAX_STEPS = {16: 320, 48: 1024}  # the official simple_builder's time limits per delay
FLOOR, WALL, AGENT, FIRST_DANCER = 0, 1, 2, 3  # board codes; dancer i is FIRST_DANCER + i
CELL_CHANNELS = 2 + len(SHAPE_NAMES) + len(COLOR_NAMES)

# DANCE_OFFSETS[d, j + 1]: a dancer's displacement from its slot after moves 0..j of dance d (j = -1: none).
DANCE_OFFSETS = jnp.asarray(
    np.concatenate(
        [
            np.zeros((len(DANCE_NAMES), 1, 2), np.int32),
            np.cumsum(
                np.asarray(tables.DIRECTION_DELTAS, np.int32)[
                    [[tables.DIRECTIONS.index(m) for m in moves.split()] for moves in tables.DANCES.values()]
                ],
                axis=1,
            ),
        ],
        axis=1,
    )
)
SHAPE_MASKS = jnp.asarray([[[c == "#" for c in row] for row in mask] for mask in tables.SHAPES.values()], jnp.uint8)
COLOR_RGB = jnp.asarray(list(tables.COLORS.values()), jnp.uint8)


class BalletState(NamedTuple):
    """One episode's layout (dancer rows beyond ``num_dancers`` are unused) and its progress."""

    slots: jax.Array  # int32 [8, 2]: each dancer's home cell (row, col)
    dances: jax.Array  # int32 [8]: index into DANCE_NAMES
    shapes: jax.Array  # int32 [8]
    colors: jax.Array  # int32 [8]
    target: jax.Array  # int32: the dancer whose dance the instruction names
    num_dancers: jax.Array  # int32
    delay: jax.Array  # int32
    max_steps: jax.Array  # int32
    agent: jax.Array  # int32 [2]
    frame: jax.Array  # int32: observations since the reset one (frame 0)


@dataclasses.dataclass(frozen=True)
class Ballet(Environment):
    """Ballet with ``observation`` "image" (99×99×3 uint8) or "cells" ([11, 11, 36] one-hots)."""

    observation: str = "image"
    levels: tuple[tuple[int, int], ...] = ((2, 16),)
    """the (dancers, delay) levels an episode is drawn from, uniformly (each registered name fixes them)"""

    def __post_init__(self):
        check_observation(self.observation)
        if not self.levels:
            raise ValueError("levels must name at least one (dancers, delay) level")
        for dancers, delay in self.levels:
            if not 1 <= dancers <= MAX_DANCERS:
                raise ValueError(f"a ballet level has 1..{MAX_DANCERS} dancers, got {dancers}")
            if delay not in MAX_STEPS:
                raise ValueError(
                    f"ballet delays are {sorted(MAX_STEPS)} (each has the official time limit), got {delay}"
                )

    @property
    def level_table(self) -> jax.Array:
        """[levels, 3] int32: each level's (dancers, delay, max_steps), its time limit the official one."""
        return jnp.array([(dancers, delay, MAX_STEPS[delay]) for dancers, delay in self.levels], jnp.int32)

    @property
    def observation_shape(self):
        return {"image": view_shape(self.observation, CELL_CHANNELS), "language": ()}

    @property
    def action_dims(self):
        return ACTION_DIMS

    @property
    def token_vocab(self):
        return {"language": 1 + len(DANCE_NAMES)}

    # ----- the world ------------------------------------------------------------------------
    @staticmethod
    def choice_frame(state: BalletState) -> jax.Array:
        """The first frame of the choice phase, N·(15 + delay)."""
        return state.num_dancers * (NUM_MOVES - 1 + state.delay)

    @staticmethod
    def dancer_positions(state: BalletState) -> jax.Array:
        """[8, 2] cells of the dancers at ``state.frame``."""
        move = state.frame - jnp.arange(MAX_DANCERS) * (NUM_MOVES - 1 + state.delay)
        return state.slots + DANCE_OFFSETS[state.dances, jnp.clip(move, -1, NUM_MOVES - 1) + 1]

    def board(self, state: BalletState) -> jax.Array:
        """[11, 11] board codes (FLOOR, WALL, AGENT, FIRST_DANCER + i); dancers over the agent."""
        board = jnp.where(ROOM_WALLS, WALL, FLOOR).at[state.agent[0], state.agent[1]].set(AGENT)
        positions = self.dancer_positions(state)
        active = jnp.arange(MAX_DANCERS) < state.num_dancers
        rows = jnp.where(active, positions[:, 0], tables.ROOM_SIZE)  # out of range: dropped
        return board.at[rows, positions[:, 1]].set(FIRST_DANCER + jnp.arange(MAX_DANCERS), mode="drop")

    def crop(self, state: BalletState) -> jax.Array:
        """The egocentric [11, 11] crop of the board, agent at the centre, floor outside the room."""
        return egocentric_crop(self.board(state), state.agent, FLOOR)

    def observe(self, state: BalletState) -> dict:
        crop = self.crop(state)
        in_choice = state.frame >= self.choice_frame(state)
        language = jnp.where(in_choice, 1 + state.dances[state.target], WATCH).astype(jnp.int32)
        image = render_image(crop, state) if self.observation == "image" else render_cells(crop, state)
        return {"image": image, "language": language}

    # ----- episodes -------------------------------------------------------------------------
    def initial_state(self, slots, dances, shapes, colors, target, num_dancers, delay, max_steps) -> BalletState:
        """The reset state of a given layout (rows beyond ``num_dancers`` are padded with zeros)."""

        def pad(rows):
            rows = jnp.asarray(rows, jnp.int32)
            return jnp.zeros((MAX_DANCERS,) + rows.shape[1:], jnp.int32).at[: len(rows)].set(rows)

        as_int = lambda v: jnp.asarray(v, jnp.int32)
        return BalletState(
            pad(slots),
            pad(dances),
            pad(shapes),
            pad(colors),
            as_int(target),
            as_int(num_dancers),
            as_int(delay),
            as_int(max_steps),
            jnp.array(tables.AGENT_START, jnp.int32),
            jnp.int32(0),
        )

    def reset_env(self, key, params):
        level_key, slot_key, dance_key, shape_key, color_key, target_key = jax.random.split(key, 6)
        num_dancers, delay, max_steps = jax.random.choice(level_key, self.level_table)
        draw = lambda k, n: jax.random.permutation(k, n)[:MAX_DANCERS]  # distinct per episode
        state = BalletState(
            slots=jnp.array(tables.DANCER_SLOTS, jnp.int32)[draw(slot_key, MAX_DANCERS)],
            dances=draw(dance_key, len(DANCE_NAMES)),
            shapes=draw(shape_key, len(SHAPE_NAMES)),
            colors=draw(color_key, len(COLOR_NAMES)),
            target=jax.random.randint(target_key, (), 0, num_dancers),
            num_dancers=num_dancers,
            delay=delay,
            max_steps=max_steps,
            agent=jnp.array(tables.AGENT_START, jnp.int32),
            frame=jnp.int32(0),
        )
        return self.observe(state), state

    def step_env(self, key, state, action, params):
        moving = (state.frame >= self.choice_frame(state)) & (action[0] >= 0) & (action[0] < len(DELTAS))
        delta = jnp.where(moving, DELTAS[jnp.clip(action[0], 0, len(DELTAS) - 1)], 0)
        agent = jnp.where(blocked(state.agent, delta), state.agent, state.agent + delta)
        state = state._replace(agent=agent, frame=state.frame + 1)
        on_dancer = jnp.all(self.dancer_positions(state) == agent, axis=-1) & (
            jnp.arange(MAX_DANCERS) < state.num_dancers
        )
        terminated = on_dancer.any()
        reward = jnp.where(on_dancer[state.target], 1.0, 0.0).astype(jnp.float32)
        truncated = ~terminated & (state.frame >= state.max_steps)
        return self.observe(state), state, reward, terminated, truncated, {}


def cell_appearance(state: BalletState) -> jax.Array:
    """[3 + 8, 9, 9, 3] uint8 pixels of each board code: floor, wall, agent, dancers."""
    dancers = SHAPE_MASKS[state.shapes][..., None] * COLOR_RGB[state.colors][:, None, None, :]
    return jnp.concatenate([solid((0, 0, 0)), solid(tables.WALL_RGB), solid(tables.AGENT_RGB), dancers])


def render_image(crop: jax.Array, state: BalletState) -> jax.Array:
    """The official 99×99×3 observation (uint8) of a crop of board codes."""
    return picture(cell_appearance(state), crop)


def render_cells(crop: jax.Array, state: BalletState) -> jax.Array:
    """[11, 11, 36] float one-hots per cell: wall, agent, dancer shape (15), dancer colour (19)."""
    dancer = jnp.clip(crop - FIRST_DANCER, 0, MAX_DANCERS - 1)
    is_dancer = (crop >= FIRST_DANCER)[..., None]
    return jnp.concatenate(
        [
            (crop == WALL)[..., None],
            (crop == AGENT)[..., None],
            is_dancer & jax.nn.one_hot(state.shapes[dancer], len(SHAPE_NAMES), dtype=bool),
            is_dancer & jax.nn.one_hot(state.colors[dancer], len(COLOR_NAMES), dtype=bool),
        ],
        axis=-1,
    ).astype(jnp.float32)


LEVEL_SETS = {
    **{f"{n}_delay{d}": ((n, d),) for n in (2, 4, 6, 8) for d in (16, 48)},
    "mixed": tuple((n, d) for n in (2, 4, 8) for d in (16, 48)),
    "2-6_mixed": tuple((n, d) for n in (2, 4, 6) for d in (16, 48)),
}
for _name, _levels in LEVEL_SETS.items():
    register(f"ballet/{_name}", Ballet, fixed=dict(levels=_levels))
