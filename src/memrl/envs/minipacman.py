"""Mini Pacman (Weber et al. 2017, I2A; DeepMind's ``PillEater``), the RMC paper's task with a 5×5
viewport (Santoro et al. 2018, Sec. 4.2 and 5.3): ``minipacman/viewport`` and ``minipacman/full``.

Rules as DeepMind's PillEater in its "regular" mode (written here in JAX from its semantics):

- The 15×19 standard maze; food on every floor cell at the start of a level, 2 power pills and
  the agent on random floor cells, 1 + ⌊(level − 1)/2⌋ ghosts on random floor cells outside the
  10×10 square around the agent. Ghosts move with probability 0.5 + 0.1 (level − 1) per step
  (halved while the agent is powered).
- Actions: stay, right, up, left, down (walls block). Each step: the power counter drops by one;
  the agent moves and eats the food (+1) and a pill (+2; power for 20 steps) where it lands; when
  the last food is eaten the next level starts at once (new food, pills, positions, more and
  faster ghosts). Then each ghost in turn: if it stands on the agent, the agent dies (the episode
  ends, reward 0) unless powered, when the ghost is eaten (+5) and no further ghost moves this
  step; else it may move, and the same check follows the move.
- A ghost keeps its direction in corridors, turns where the corridor turns, and at junctions
  (never reversing) goes towards the agent (the largest cosine with the direction to it; 5% of
  the time a random way), or away from it while the agent is powered.
- Episodes end when the agent dies (terminated) or after 1000 steps (truncated, I2A's frame cap).

Observations, float32 in [0, 1]: the PillEater's RGB (agent green, ghost [1 − e + e, e, 0] with
edibility e = power / 20, pill cyan, food blue, wall white, empty black); ``viewport``: the 5×5
window centred on the agent (beyond the maze black) [5, 5, 3]; ``full``: [15, 19, 3].

Differences from PillEater: ghosts start facing one of the four ways at random (PillEater draws
0-3 in a 2-5 direction code, which only changes a new ghost's first move); at most
``max_ghosts`` ghosts (levels past 2·max_ghosts − 1 keep that many; 1000 steps rarely pass level 7).
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from memrl.envs.base import Environment, register

STANDARD_MAZE = np.array(
    [
        [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1],
        [1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1],
        [1, 0, 1, 0, 1, 0, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0, 1, 0, 1],
        [1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1],
        [1, 0, 1, 0, 1, 0, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0, 1, 0, 1],
        [1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1],
        [1, 0, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 0, 1],
        [1, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 1],
        [1, 0, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 0, 1],
        [1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1],
        [1, 0, 1, 0, 1, 0, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0, 1, 0, 1],
        [1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1],
        [1, 0, 1, 0, 1, 0, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0, 1, 0, 1],
        [1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1],
        [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1],
    ],
    bool,
)
"""PillEater's STANDARD_MAP (1 = wall)"""
MOVES = jnp.array([(0, 0), (0, 1), (-1, 0), (0, -1), (1, 0)], jnp.int32)
"""stay, right, up, left, down as (row, col); ghosts use 1-4"""
REVERSE = jnp.array([0, 3, 4, 1, 2], jnp.int32)
OBSERVATIONS = ("viewport", "full")
NUM_PILLS = 2


@struct.dataclass
class MiniPacmanParams:
    """PillEater's "regular" settings."""

    food_reward: float = 1.0
    pill_reward: float = 2.0
    ghost_reward: float = 5.0
    """for eating a ghost while powered"""
    death_reward: float = 0.0
    step_reward: float = 0.0
    pill_duration: int = 20
    ghost_speed: float = 0.5
    """probability that a ghost moves in a step of level 1"""
    ghost_speed_increase: float = 0.1
    """added per level"""
    stochasticity: float = 0.05
    """probability that a chasing ghost takes a random way at a junction"""
    safe_distance: int = 5
    """ghosts start outside the square of this half-width around the agent"""
    max_steps: int = 1000
    """I2A's frame cap"""


class MiniPacmanState(NamedTuple):
    food: jax.Array  # bool [H, W]
    pills: jax.Array  # int32 [NUM_PILLS, 2]
    pills_left: jax.Array  # bool [NUM_PILLS]
    agent: jax.Array  # int32 [2]
    ghosts: jax.Array  # int32 [max_ghosts, 2]
    ghost_dirs: jax.Array  # int32 [max_ghosts]: 1-4 (right, up, left, down)
    ghosts_left: jax.Array  # bool [max_ghosts]
    power: jax.Array  # int32
    level: jax.Array  # int32
    step: jax.Array  # int32


@dataclasses.dataclass(frozen=True)
class MiniPacman(Environment):
    """Mini Pacman seen through a ``viewport`` or in full (module docstring)."""

    observation: str = "viewport"
    """viewport (the RMC paper's 5x5) or full; fixed by the env's name"""
    viewport: int = 5
    max_ghosts: int = 5
    params: MiniPacmanParams = MiniPacmanParams()

    def __post_init__(self):
        if self.observation not in OBSERVATIONS:
            raise ValueError(f"observation must be one of {OBSERVATIONS}, got {self.observation!r}")
        if self.viewport < 1 or self.viewport % 2 == 0:
            raise ValueError(f"viewport must be an odd number >= 1 (centred on the agent), got {self.viewport}")
        if self.max_ghosts < 1:
            raise ValueError(f"max_ghosts must be >= 1, got {self.max_ghosts}")
        p = self.params
        if p.pill_duration < 1 or p.max_steps < 1 or p.safe_distance < 0:
            raise ValueError(
                f"pill_duration and max_steps must be >= 1 and safe_distance >= 0, got {p.pill_duration}, {p.max_steps}, {p.safe_distance}"
            )
        for name in ("ghost_speed", "stochasticity"):
            if not 0.0 <= getattr(p, name) <= 1.0:
                raise ValueError(f"{name} must lie in [0, 1], got {getattr(p, name)}")

    @property
    def observation_shape(self):
        return (self.viewport, self.viewport, 3) if self.observation == "viewport" else (*STANDARD_MAZE.shape, 3)

    @property
    def action_dims(self):
        return (len(MOVES),)

    # ----- levels ------------------------------------------------------------------------------
    def new_level(self, key, level, params) -> MiniPacmanState:
        walls = jnp.asarray(STANDARD_MAZE)
        agent_key, pill_key, ghost_key, dir_key = jax.random.split(key, 4)
        agent = _random_cells(agent_key, ~walls, 1)[0]
        rows, cols = jnp.arange(walls.shape[0])[:, None], jnp.arange(walls.shape[1])[None]
        d = params.safe_distance
        near = (rows >= agent[0] - d) & (rows < agent[0] + d) & (cols >= agent[1] - d) & (cols < agent[1] + d)
        count = jnp.minimum(1 + (level - 1) // 2, self.max_ghosts)
        return MiniPacmanState(
            food=~walls,
            pills=_random_cells(pill_key, ~walls, NUM_PILLS),
            pills_left=jnp.ones(NUM_PILLS, bool),
            agent=agent,
            ghosts=_random_cells(ghost_key, ~walls & ~near, self.max_ghosts),
            ghost_dirs=jax.random.randint(dir_key, (self.max_ghosts,), 1, 5),
            ghosts_left=jnp.arange(self.max_ghosts) < count,
            power=jnp.int32(0),
            level=jnp.asarray(level, jnp.int32),
            step=jnp.int32(0),
        )

    def reset_env(self, key, params):
        state = self.new_level(key, 1, params)
        return self.observe(state, params), state

    # ----- dynamics ----------------------------------------------------------------------------
    def step_env(self, key, state, action, params):
        level_key, ghost_key = jax.random.split(key)
        power = jnp.maximum(state.power - 1, 0)
        agent = _moved(state.agent, action[0])
        ate_food = state.food[agent[0], agent[1]]
        food = state.food.at[agent[0], agent[1]].set(False)
        reward = params.step_reward + jnp.where(ate_food, params.food_reward, 0.0)
        state = state._replace(food=food, agent=agent, power=power, step=state.step + 1)
        cleared = ate_food & ~food.any()
        next_level = self.new_level(level_key, state.level + 1, params)._replace(step=state.step)
        state = jax.tree.map(lambda a, b: jnp.where(cleared, a, b), next_level, state)
        on_pill = state.pills_left & jnp.all(state.pills == state.agent, axis=-1)
        first_pill = on_pill & (jnp.cumsum(on_pill) == 1)  # one pill per step, as PillEater's loop breaks
        reward = reward + jnp.where(first_pill.any(), params.pill_reward, 0.0)
        state = state._replace(
            pills_left=state.pills_left & ~first_pill,
            power=jnp.where(first_pill.any(), params.pill_duration, state.power),
        )
        state, ghost_reward, died = self._move_ghosts(ghost_key, state, params)
        reward = reward + ghost_reward + jnp.where(died, params.death_reward, 0.0)
        truncated = ~died & (state.step >= params.max_steps)
        return self.observe(state, params), state, reward.astype(jnp.float32), died, truncated, {"level": state.level}

    def _move_ghosts(self, key, state: MiniPacmanState, params):
        """Each ghost in turn: meet the agent, else maybe move and meet it (module docstring)."""
        speed = (params.ghost_speed + params.ghost_speed_increase * (state.level - 1).astype(jnp.float32)) * jnp.where(
            state.power > 0, 0.5, 1.0
        )
        keys = jax.random.split(key, self.max_ghosts)

        def ghost(i, carry):
            state, reward, died, stopped = carry
            move_key, choice_key = jax.random.split(keys[i])
            active = state.ghosts_left[i] & ~stopped
            powered = state.power > 0

            def meet(state, reward, died, stopped, position):
                met = active & jnp.all(position == state.agent)
                eaten = met & powered
                state = state._replace(ghosts_left=state.ghosts_left.at[i].set(state.ghosts_left[i] & ~eaten))
                return (
                    state,
                    reward + jnp.where(eaten, params.ghost_reward, 0.0),
                    died | (met & ~powered),
                    stopped | eaten,
                )

            state, reward, died, stopped = meet(state, reward, died, stopped, state.ghosts[i])
            moves = active & ~stopped & (jax.random.uniform(move_key) < speed)
            direction = ghost_direction(
                choice_key, state.ghosts[i], state.ghost_dirs[i], state.agent, powered, params.stochasticity
            )
            position = jnp.where(moves, _moved(state.ghosts[i], direction), state.ghosts[i])
            state = state._replace(
                ghosts=state.ghosts.at[i].set(position),
                ghost_dirs=state.ghost_dirs.at[i].set(jnp.where(moves, direction, state.ghost_dirs[i])),
            )
            return jax.lax.cond(
                moves, lambda: meet(state, reward, died, stopped, position), lambda: (state, reward, died, stopped)
            )

        state, reward, died, _ = jax.lax.fori_loop(
            0, self.max_ghosts, ghost, (state, jnp.float32(0.0), jnp.bool_(False), jnp.bool_(False))
        )
        return state, reward, died

    def observe(self, state: MiniPacmanState, params) -> jax.Array:
        walls = jnp.asarray(STANDARD_MAZE)
        image = jnp.zeros((*walls.shape, 3))
        image = jnp.where(walls[..., None], 1.0, image)
        image = jnp.where(state.food[..., None], jnp.array([0.0, 0.0, 1.0]), image)
        pills = jnp.zeros(walls.shape, bool).at[state.pills[:, 0], state.pills[:, 1]].max(state.pills_left)
        image = jnp.where(pills[..., None], jnp.array([0.0, 1.0, 1.0]), image)
        edibility = state.power.astype(jnp.float32) / params.pill_duration
        ghost_rgb = jnp.array([1.0, 0.0, 0.0]) * (1.0 - edibility) + jnp.array([1.0, 1.0, 0.0]) * edibility
        ghosts = jnp.zeros(walls.shape, bool).at[state.ghosts[:, 0], state.ghosts[:, 1]].max(state.ghosts_left)
        image = jnp.where(ghosts[..., None], ghost_rgb, image)
        image = image.at[state.agent[0], state.agent[1]].set(jnp.array([0.0, 1.0, 0.0]))
        if self.observation == "full":
            return image
        half = self.viewport // 2
        padded = jnp.pad(image, ((half, half), (half, half), (0, 0)))
        return jax.lax.dynamic_slice(padded, (state.agent[0], state.agent[1], 0), (self.viewport, self.viewport, 3))


def _moved(position: jax.Array, action: jax.Array) -> jax.Array:
    """The cell ``action`` leads to from ``position``; a wall keeps it in place."""
    target = position + MOVES[action]
    return jnp.where(jnp.asarray(STANDARD_MAZE)[target[0], target[1]], position, target)


def ghost_direction(key, position, direction, agent, powered, stochasticity) -> jax.Array:
    """PillEater's ghost: the only way out; in a corridor, on (or round the turn, not back); at a
    junction, not back, towards the agent (largest cosine; ties to the first of right, up, left,
    down), a random way with probability ``stochasticity``, away from it (smallest) when powered."""
    ways = jnp.arange(1, 5)
    open_ = jax.vmap(lambda a: jnp.any(_moved(position, a) != position))(ways)
    count = open_.sum()
    not_back = open_ & (ways != REVERSE[direction])
    corridor = jnp.where(open_[direction - 1], direction, ways[jnp.argmax(not_back)])
    offset = (agent - position).astype(jnp.float32)
    norm = jnp.linalg.norm(offset)
    cosines = MOVES[ways].astype(jnp.float32) @ (offset / jnp.maximum(norm, 1e-12))
    random_key, choice_key = jax.random.split(key)
    towards = ways[jnp.argmax(jnp.where(not_back, cosines, -jnp.inf))]
    away = ways[jnp.argmin(jnp.where(not_back, cosines, jnp.inf))]
    candidates = jnp.where(not_back.any(), not_back, open_)  # a dead end has only the way back (and takes it above)
    random_way = ways[jax.random.choice(choice_key, 4, p=candidates / candidates.sum())]
    chase = jnp.where(jax.random.uniform(random_key) < stochasticity, random_way, towards)
    junction = jnp.where(norm > 0, jnp.where(powered, away, chase), direction)
    return jnp.where(count == 1, ways[jnp.argmax(open_)], jnp.where(count == 2, corridor, junction))


def _random_cells(key, allowed: jax.Array, count: int) -> jax.Array:
    """``count`` cells drawn uniformly (independently) among the ``allowed`` ones, [count, 2]."""
    flat = jax.random.choice(key, allowed.size, (count,), p=allowed.ravel() / allowed.sum())
    return jnp.stack([flat // allowed.shape[1], flat % allowed.shape[1]], -1).astype(jnp.int32)


for _observation in OBSERVATIONS:
    register(f"minipacman/{_observation}", MiniPacman.from_settings, fixed=dict(observation=_observation))
