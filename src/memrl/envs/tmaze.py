"""AMRL's T-maze family (Beck et al. 2020, Sec. 5; official ``experiments/t_maze.py``).

A corridor of ``maze_length`` cells. The indicator (UP or DOWN, observed +1 / −1) is shown at cell
``indicator_pos``; at the last cell the agent chooses UP or DOWN: ``success_reward`` if it matches
the goal, ``fail_reward`` otherwise, and the episode ends. Observation:
``[start_flag, indicator, end_flag]`` plus, with ``noise``, a ±1 value redrawn every step.

Variants (the official YAML configs; see ``VARIANTS``):
- T-L: indicator at cell 1; every corridor action is forced to RIGHT and, at the end, LEFT->UP and
  RIGHT->DOWN (``force_right`` and ``force_final_decision``), so every episode takes 100 steps.
- T-LN: T-L with the noise channel and the indicator at cell 0 (visible in the reset obs).
- T-LS: the noise value is a check; a second action component answers it (0 = "up" for +1,
  1 = "down" for −1). The agent advances one cell, with ``check_reward``, only on a correct answer;
  the main action does nothing in the corridor. Oracle return 99 * 0.1 + 4 = 13.9.
- T-LO / T-LSO: a second indicator at cell 98 (T-LO) or 2 (T-LSO); the goal is UP only for the
  pattern (first, second) = (UP, DOWN).
A step taken when ``timestep >= timeout`` ends the episode (truncated) with ``timeout_reward`` and
moves nothing, so a timed-out episode has ``timeout + 1`` transitions.

Not pinned by the golden data: without ``force_final_decision`` (T-LS, T-LSO), LEFT or RIGHT at the
last cell does nothing here (no move, no reward, the episode goes on); the official oracle always
answers UP or DOWN there and the other recorded policies never reach the end.
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import jax
import jax.numpy as jnp
from flax import struct

from memrl.envs.base import Environment, register

LEFT, RIGHT, UP, DOWN = 0, 1, 2, 3


@struct.dataclass
class TMazeParams:
    maze_length: int = 100
    """cells of the corridor, the junction last"""
    timeout: int = 150
    """steps before an episode is cut (truncated); at least maze_length"""
    indicator_pos: int = 1
    """the cell that shows the indicator (UP +1, DOWN -1)"""
    second_indicator_pos: int = 98
    """the cell of the second indicator (T-LO, T-LSO)"""
    success_reward: float = 4.0
    """the reward for the turn the indicator asks for"""
    fail_reward: float = -3.0
    """the reward for the other turn"""
    check_reward: float = 0.1
    """the reward for a check answered right (T-LS, T-LSO)"""
    timeout_reward: float = 0.0
    """the reward of the step that cuts an episode at the timeout"""


class TMazeState(NamedTuple):
    pos: jax.Array  # int32 cell, 0 .. maze_length - 1
    timestep: jax.Array  # int32 steps taken
    indicator_up: jax.Array  # bool
    second_up: jax.Array  # bool (used only when ``ordered``)
    noise: jax.Array  # float32 ±1: the noise / check value in the current observation


@dataclasses.dataclass(frozen=True)
class TMaze(Environment):
    """A T-maze variant. Constructor arguments decide shapes and rules; numbers are params."""

    noise: bool = False
    checks: bool = False
    force_right: bool = True
    force_final_decision: bool = True
    ordered: bool = False
    params: TMazeParams = TMazeParams()

    def __post_init__(self):
        if self.checks and not self.noise:
            raise ValueError("checks=True needs noise=True: the check value is the noise channel")
        p = self.params
        if p.maze_length < 2:
            raise ValueError(f"maze_length must be >= 2 (a start cell and the junction), got {p.maze_length}")
        if not 0 <= p.indicator_pos < p.maze_length - 1:
            raise ValueError(
                f"indicator_pos must lie in 0..maze_length - 2 = {p.maze_length - 2} (before the junction), got {p.indicator_pos}"
            )
        if self.ordered and not 0 <= p.second_indicator_pos < p.maze_length - 1:
            raise ValueError(
                f"second_indicator_pos must lie in 0..maze_length - 2 = {p.maze_length - 2} (before the junction), got {p.second_indicator_pos}"
            )
        if p.timeout < 1:
            raise ValueError(f"timeout must be >= 1 (steps before an episode is cut), got {p.timeout}")
        if p.timeout < p.maze_length:
            raise ValueError(
                f"timeout ({p.timeout}) must be >= maze_length ({p.maze_length}): the shortest episode takes "
                f"{p.maze_length} steps ({p.maze_length - 1} to the junction and the turn), so none could end"
            )

    @property
    def observation_shape(self):
        return (4 if self.noise else 3,)

    @property
    def action_dims(self):
        return (4, 2) if self.checks else (4,)

    @property
    def observation_bounds(self) -> tuple[float, float]:
        return (-1.0, 1.0)  # flags, indicators (the two of T-LO sit in different cells) and noise

    def observe(self, state: TMazeState, params: TMazeParams) -> jax.Array:
        indicator = jnp.where(state.indicator_up, 1.0, -1.0) * (state.pos == params.indicator_pos)
        if self.ordered:
            second = jnp.where(state.second_up, 1.0, -1.0) * (state.pos == params.second_indicator_pos)
            indicator = indicator + second
        obs = [
            (state.pos == 0).astype(jnp.float32),
            indicator,
            (state.pos == params.maze_length - 1).astype(jnp.float32),
        ]
        if self.noise:
            obs.append(state.noise)
        return jnp.stack(obs).astype(jnp.float32)

    def goal_up(self, state: TMazeState) -> jax.Array:
        if self.ordered:
            return state.indicator_up & ~state.second_up
        return state.indicator_up

    def initial_state(self, indicator_up, second_up, noise) -> TMazeState:
        zero = jnp.zeros((), jnp.int32)
        return TMazeState(
            zero, zero, jnp.asarray(indicator_up), jnp.asarray(second_up), jnp.asarray(noise, jnp.float32)
        )

    def reset_env(self, key, params):
        k1, k2, k3 = jax.random.split(key, 3)
        state = self.initial_state(
            jax.random.bernoulli(k1), jax.random.bernoulli(k2), jnp.where(jax.random.bernoulli(k3), 1.0, -1.0)
        )
        return self.observe(state, params), state

    def transition(self, state: TMazeState, action, params: TMazeParams, next_noise):
        """The deterministic part of a step, given the next noise value. Returns
        (state, reward, terminated, truncated)."""
        timed_out = state.timestep >= params.timeout
        at_end = state.pos == params.maze_length - 1
        main = action[0]
        if self.force_right:
            main = jnp.where(at_end, main, RIGHT)
        if self.force_final_decision:
            main = jnp.where(at_end & (main == LEFT), UP, jnp.where(at_end & (main == RIGHT), DOWN, main))
        if self.checks:
            correct = action[1] == jnp.where(state.noise > 0, 0, 1)
            move = ~at_end & correct
        else:
            move = ~at_end & (main == RIGHT)
        decision = at_end & ((main == UP) | (main == DOWN))
        success = (main == UP) == self.goal_up(state)
        reward = jnp.where(decision, jnp.where(success, params.success_reward, params.fail_reward), 0.0)
        if self.checks:
            reward = reward + jnp.where(move, params.check_reward, 0.0)
        moved = TMazeState(state.pos + move, state.timestep + 1, state.indicator_up, state.second_up, next_noise)
        stopped = state._replace(noise=next_noise)
        new_state = jax.tree.map(lambda a, b: jnp.where(timed_out, a, b), stopped, moved)
        reward = jnp.where(timed_out, params.timeout_reward, reward).astype(jnp.float32)
        return new_state, reward, decision & ~timed_out, timed_out

    def step_env(self, key, state, action, params):
        next_noise = jnp.where(jax.random.bernoulli(key), 1.0, -1.0) if self.noise else state.noise
        state, reward, terminated, truncated = self.transition(state, action, params, next_noise)
        return self.observe(state, params), state, reward, terminated, truncated, {}


STRICT = dict(noise=True, checks=True, force_right=False, force_final_decision=False)
VARIANTS = {
    "T-L": (dict(), dict(indicator_pos=1)),
    "T-LN": (dict(noise=True), dict(indicator_pos=0)),
    "T-LS": (STRICT, dict(indicator_pos=0)),
    "T-LO": (dict(ordered=True), dict(indicator_pos=1, second_indicator_pos=98)),
    "T-LSO": (dict(**STRICT, ordered=True), dict(indicator_pos=1, second_indicator_pos=2)),
}
"""name -> (the rules it sets beside ``TMaze``'s defaults, its params' defaults)"""


for _variant, (_rules, _defaults) in VARIANTS.items():
    register(
        f"tmaze/{_variant}",
        TMaze.from_settings,
        # every rule: the name sets them
        fixed={f.name: _rules.get(f.name, f.default) for f in dataclasses.fields(TMaze) if f.name != "params"},
        defaults=_defaults,
    )
