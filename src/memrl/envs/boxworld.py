"""BoxWorld (Zambaldi et al. 2018, "Relational deep reinforcement learning"), with the viewport of
Santoro et al. 2018 (App. A.3): ``boxworld/viewport`` and the fully observed ``boxworld/full``.

A 14×14 grid (a one-cell black wall around 12×12 grey floor) holds loose keys (single coloured
cells), boxes (two horizontally adjacent cells: the key inside on the left, the lock on the right)
and the agent (dark grey). The agent holds at most one key; it moves up, down, left, right:

- onto a loose key: picks it up (a key it held is dropped and lost);
- onto a lock whose colour it holds: opens the box (the key is used up, the lock becomes floor and
  the agent stands there), after which the box's key is loose; onto any other lock, or onto the key
  of a box still locked: blocked; onto the wall: blocked;
- onto the white gem (the key of the last box): the level is solved.

Levels: a solution path of ``min_path``..``max_path`` boxes (uniform) from one loose key to the gem,
each box holding the key of the next; 0..``max_distractors`` distractor branches of length 1, each
a box locked with one of the path's keys and holding a key that opens nothing (20 colours in all,
each level's colours drawn without replacement). Objects are placed uniformly at random with at
least one free cell between any two (a box's two cells read as one duple); the agent starts on a
random free cell.

Rewards (the RMC paper's App. A.3, from Zambaldi et al.): +1 for opening a box of the solution
path (the gem's box included), −1 for opening a distractor box, +10 for the gem. The level ends
at the gem or at a distractor box (terminated) or after ``max_steps`` (truncated; memrl's choice,
as neither paper states a limit); no step cost. The best return of a level with a path of L boxes
is L + 10.

Observations, float32 in [0, 1]: ``viewport`` the ``viewport``×``viewport`` RGB window centred on
the agent (cells beyond the grid black) with a second RGB frame filled with the colour of the key
held (black for none), stacked on the channels: [5, 5, 6]; ``full`` the whole grid and the same
frame: [14, 14, 6].
"""

from __future__ import annotations

import colorsys
import dataclasses
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from memrl.envs.base import Environment, register

MOVES = jnp.array([(-1, 0), (1, 0), (0, -1), (0, 1)], jnp.int32)  # up, down, left, right as (row, col)
FLOOR, WALL, GEM = 0, 1, 2
NUM_KEY_COLORS = 20
FIRST_KEY = 3  # cell value of key colour 0
OBSERVATIONS = ("viewport", "full")


def _palette() -> np.ndarray:
    """RGB of each cell value: floor grey, wall black, gem white, then 20 key colours (hues evenly
    spaced, two brightnesses); the agent's dark grey is ``AGENT_RGB``."""
    keys = [colorsys.hsv_to_rgb(i / NUM_KEY_COLORS, 1.0, 1.0 if i % 2 == 0 else 0.6) for i in range(NUM_KEY_COLORS)]
    return np.array([(0.86, 0.86, 0.86), (0.0, 0.0, 0.0), (1.0, 1.0, 1.0), *keys], np.float32)


PALETTE = jnp.asarray(_palette())
AGENT_RGB = jnp.array([0.35, 0.35, 0.35], jnp.float32)


@struct.dataclass
class BoxWorldParams:
    """Numeric settings of a level and its rewards."""

    min_path: int = 1
    """fewest boxes on the solution path (RMC: 1)"""
    max_path: int = 5
    """most boxes on the solution path (RMC: 5); at most the env's ``path_capacity``"""
    max_distractors: int = 5
    """most distractor branches (RMC: 0 to 5, uniform); at most the env's ``distractor_capacity``"""
    gem_reward: float = 10.0
    box_reward: float = 1.0
    """for opening a box of the solution path"""
    distractor_reward: float = -1.0
    """for opening a distractor box (the level ends)"""
    max_steps: int = 300
    """steps before the level is truncated (memrl's choice: neither paper states one)"""


class BoxWorldState(NamedTuple):
    cells: jax.Array  # int32 [G, G]: FLOOR, WALL, GEM or FIRST_KEY + colour
    locks: jax.Array  # bool [G, G]: the cell is a lock of its colour
    distractor_locks: jax.Array  # bool [G, G]: opening this lock ends the level
    agent: jax.Array  # int32 [2]
    held: jax.Array  # int32: cell value of the key held, FLOOR for none
    step: jax.Array  # int32


@dataclasses.dataclass(frozen=True)
class BoxWorld(Environment):
    """A ``grid_size``² BoxWorld (walls included) seen through a ``viewport`` window or in full."""

    observation: str = "viewport"
    """viewport (the RMC paper's) or full (Zambaldi et al.'s); fixed by the env's name"""
    grid_size: int = 14
    viewport: int = 5
    path_capacity: int = 5
    """solution boxes a level can hold (fixes the shapes; ``max_path`` may not exceed it)"""
    distractor_capacity: int = 5
    params: BoxWorldParams = BoxWorldParams()

    def __post_init__(self):
        if self.observation not in OBSERVATIONS:
            raise ValueError(f"observation must be one of {OBSERVATIONS}, got {self.observation!r}")
        if self.grid_size < 6:
            raise ValueError(f"grid_size must be >= 6 (a 4x4 floor at least), got {self.grid_size}")
        if self.viewport < 1 or self.viewport % 2 == 0:
            raise ValueError(f"viewport must be an odd number >= 1 (centred on the agent), got {self.viewport}")
        if self.path_capacity < 1 or self.distractor_capacity < 0:
            raise ValueError(
                f"path_capacity must be >= 1 and distractor_capacity >= 0, got {self.path_capacity} and {self.distractor_capacity}"
            )
        if self.path_capacity + self.distractor_capacity > NUM_KEY_COLORS:
            raise ValueError(f"path_capacity + distractor_capacity must be <= {NUM_KEY_COLORS} (one colour per key)")
        p = self.params
        if not 1 <= p.min_path <= p.max_path <= self.path_capacity:
            raise ValueError(
                f"need 1 <= min_path <= max_path <= path_capacity ({self.path_capacity}), got min_path {p.min_path}, max_path {p.max_path}"
            )
        if not 0 <= p.max_distractors <= self.distractor_capacity:
            raise ValueError(
                f"max_distractors must lie in 0..distractor_capacity ({self.distractor_capacity}), got {p.max_distractors}"
            )
        if p.max_steps < 2 * p.min_path + 1:
            raise ValueError(
                f"max_steps must be >= 2 * min_path + 1 = {2 * p.min_path + 1}, got {p.max_steps}: no level could be solved "
                f"(the first key, then each of min_path boxes takes a step to open and one onto the key it held)"
            )

    @property
    def observation_shape(self):
        side = self.viewport if self.observation == "viewport" else self.grid_size
        return (side, side, 6)

    @property
    def action_dims(self):
        return (len(MOVES),)

    # ----- levels ------------------------------------------------------------------------------
    def reset_env(self, key, params):
        path_key, distractor_key, color_key, branch_key, place_key = jax.random.split(key, 5)
        path_length = jax.random.randint(path_key, (), params.min_path, params.max_path + 1)
        distractors = jax.random.randint(distractor_key, (), 0, params.max_distractors + 1)
        colors = FIRST_KEY + jax.random.permutation(color_key, NUM_KEY_COLORS)
        path_keys = colors[: self.path_capacity]  # path_keys[i] opens solution box i
        box = jnp.arange(self.path_capacity)
        solution_locks = path_keys
        solution_contents = jnp.where(box == path_length - 1, GEM, jnp.roll(path_keys, -1))
        branch = jax.random.randint(branch_key, (self.distractor_capacity,), 0, path_length)
        distractor_locks = path_keys[branch]
        distractor_contents = colors[self.path_capacity : self.path_capacity + self.distractor_capacity]
        locks = jnp.concatenate([solution_locks, distractor_locks])
        contents = jnp.concatenate([solution_contents, distractor_contents])
        active = jnp.concatenate([box < path_length, jnp.arange(self.distractor_capacity) < distractors])
        is_distractor = jnp.arange(len(locks)) >= self.path_capacity

        def place(key):
            return self.level(key, locks, contents, active, is_distractor, path_keys[0])

        def draw(carry):
            key, draw_key, _ = carry
            key, next_draw_key = jax.random.split(key)
            return key, next_draw_key, place(draw_key)

        # Greedy placement can (very rarely) leave no clear cell for an object: draw the layout again
        # (first with place_key, then with split(place_key)[1], ...; the loop holds the only copy of
        # ``place``, which keeps the program small).
        unplaced = jax.tree.map(lambda leaf: jnp.zeros(leaf.shape, leaf.dtype), jax.eval_shape(place, place_key))
        _, _, (state, _) = jax.lax.while_loop(lambda carry: ~carry[2][1], draw, (place_key, place_key, unplaced))
        return self.observe(state), state

    def level(self, key, locks, contents, active, is_distractor, loose_key) -> tuple[BoxWorldState, jax.Array]:
        """Place the active boxes (lock colours ``locks``, keys ``contents``), then the loose key,
        then the agent, each on a random cell clear of the objects placed before; and whether every
        object found a place."""
        g = self.grid_size
        cells = jnp.full((g, g), WALL, jnp.int32).at[1:-1, 1:-1].set(FLOOR)
        lock_grid = jnp.zeros((g, g), bool)
        distractor_grid = jnp.zeros((g, g), bool)
        occupied = jnp.zeros((g, g), bool)
        keys = jax.random.split(key, len(locks) + 2)

        def place_box(carry, box):  # a scan, not a Python loop: one box's program, compiled once
            cells, lock_grid, distractor_grid, occupied, placed = carry
            box_key, place, content, lock, distractor = box
            allowed = _clear_cells(occupied, width=2)
            r, c = _random_cell(box_key, allowed)
            placed = placed & (allowed.any() | ~place)
            cells = jnp.where(place, cells.at[r, c].set(content).at[r, c + 1].set(lock), cells)
            lock_grid = jnp.where(place, lock_grid.at[r, c + 1].set(True), lock_grid)
            distractor_grid = jnp.where(place, distractor_grid.at[r, c + 1].set(distractor), distractor_grid)
            occupied = jnp.where(place, occupied.at[r, c].set(True).at[r, c + 1].set(True), occupied)
            return (cells, lock_grid, distractor_grid, occupied, placed), None

        boxes = (keys[: len(locks)], active, contents, locks, is_distractor)
        (cells, lock_grid, distractor_grid, occupied, placed), _ = jax.lax.scan(
            place_box, (cells, lock_grid, distractor_grid, occupied, jnp.bool_(True)), boxes
        )
        allowed = _clear_cells(occupied, width=1)
        r, c = _random_cell(keys[-2], allowed)
        cells = cells.at[r, c].set(loose_key)
        agent = jnp.stack(_random_cell(keys[-1], (cells == FLOOR)))
        state = BoxWorldState(cells, lock_grid, distractor_grid, agent, jnp.int32(FLOOR), jnp.int32(0))
        return state, placed & allowed.any()

    # ----- dynamics ----------------------------------------------------------------------------
    def step_env(self, key, state, action, params):
        target = state.agent + MOVES[action[0]]
        value = state.cells[target[0], target[1]]
        is_lock = state.locks[target[0], target[1]]
        right = jnp.minimum(target[1] + 1, self.grid_size - 1)
        boxed = state.locks[target[0], right] & (right != target[1])  # the key of a box still locked
        is_key = (value >= FIRST_KEY) & ~is_lock & ~boxed
        opens = is_lock & (state.held == value)
        gem = (value == GEM) & ~boxed
        moves = (value == FLOOR) | is_key | opens | gem
        distractor = opens & state.distractor_locks[target[0], target[1]]
        agent = jnp.where(moves, target, state.agent)
        held = jnp.where(is_key, value, jnp.where(opens, FLOOR, state.held))
        cleared = is_key | opens | gem
        cells = jnp.where(cleared, state.cells.at[target[0], target[1]].set(FLOOR), state.cells)
        locks = jnp.where(opens, state.locks.at[target[0], target[1]].set(False), state.locks)
        reward = (
            jnp.where(opens & ~distractor, params.box_reward, 0.0)
            + jnp.where(distractor, params.distractor_reward, 0.0)
            + jnp.where(gem, params.gem_reward, 0.0)
        )
        state = state._replace(cells=cells, locks=locks, agent=agent, held=held, step=state.step + 1)
        terminated = gem | distractor
        truncated = ~terminated & (state.step >= params.max_steps)
        return self.observe(state), state, reward.astype(jnp.float32), terminated, truncated, {"solved": gem}

    def observe(self, state: BoxWorldState) -> jax.Array:
        image = PALETTE[state.cells].at[state.agent[0], state.agent[1]].set(AGENT_RGB)
        if self.observation == "viewport":
            half = self.viewport // 2
            padded = jnp.pad(image, ((half, half), (half, half), (0, 0)))  # beyond the grid: black
            image = jax.lax.dynamic_slice(
                padded, (state.agent[0], state.agent[1], 0), (self.viewport, self.viewport, 3)
            )
        held = jnp.where(state.held == FLOOR, 0.0, PALETTE[state.held])
        return jnp.concatenate([image, jnp.broadcast_to(held, image.shape)], axis=-1)


def within(cells: jax.Array, radius: int) -> jax.Array:
    """[G, G] the cells within ``radius`` (in both directions) of any of ``cells`` [G, G]: a square dilation."""
    g = cells.shape[0]
    padded = jnp.pad(cells, radius)
    near = jnp.zeros_like(cells)
    for dr in range(2 * radius + 1):
        for dc in range(2 * radius + 1):
            near = near | padded[dr : dr + g, dc : dc + g]
    return near


def _clear_cells(occupied: jax.Array, width: int) -> jax.Array:
    """Floor cells where an object ``width`` cells wide may start: its cells and their 8
    neighbours hold no object, and it lies inside the wall."""
    g = occupied.shape[0]
    near = within(occupied, 1)
    inside = jnp.zeros((g, g), bool).at[1:-1, 1 : g - width].set(True)
    clear = inside & ~near
    for offset in range(1, width):
        clear = clear & jnp.roll(~near, -offset, axis=1)
    return clear


def _random_cell(key, allowed: jax.Array) -> tuple[jax.Array, jax.Array]:
    """A cell drawn uniformly among the ``allowed`` ones (row, column)."""
    scores = jnp.where(allowed, jax.random.uniform(key, allowed.shape), -1.0)
    flat = jnp.argmax(scores)
    return flat // allowed.shape[1], flat % allowed.shape[1]


for _observation in OBSERVATIONS:
    register(f"boxworld/{_observation}", BoxWorld.from_settings, fixed=dict(observation=_observation))
