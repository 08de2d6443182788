"""Brax's continuous-control environments (MuJoCo models simulated in JAX) as memrl environments:
``memrl.envs.make("brax/inverted_pendulum")``, with the extra ``brax``.

Termination is the Brax environment's ``done``; truncation is memrl's, after ``episode_length``
steps (1,000 by default, as Brax's training wrapper truncates; Brax's own environments never end an
episode on time). Actions are float32 arrays of the environment's ``action_size`` within [-1, 1],
which every Brax environment scales to its actuators' range itself. ``backend`` is Brax's physics
pipeline: "generalized" (Brax's default), "positional", "spring" (the fastest on a CPU) or "mjx".
``observed`` keeps some observation components only: ``brax/inverted_pendulum/positions`` keeps the
cart's position and the pole's angle without their velocities, so that a memory must infer them.
Brax is imported when an environment is made. On a CPU a Brax step costs milliseconds (the physics
substeps), so these environments are for an accelerator; the tests step them only briefly.
"""

from __future__ import annotations

import dataclasses
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
from flax import struct

from memrl.envs.base import Environment, HeldSpaces, extra_module, observed_shape, register

BRAX_ENVS = (
    "ant",
    "halfcheetah",
    "hopper",
    "humanoid",
    "humanoidstandup",
    "inverted_pendulum",
    "inverted_double_pendulum",
    "pusher",
    "reacher",
    "swimmer",
    "walker2d",
)
"""every environment Brax registers but its test environment ``fast``"""
POSITIONS_ONLY = {"inverted_pendulum": (0, 1)}
"""the partially observable variant ``brax/<name>/positions``: the cart's position and the pole's
angle (qpos) kept, their velocities (qvel) dropped"""
BACKENDS = ("generalized", "positional", "spring", "mjx")


@struct.dataclass
class BraxParams:
    episode_length: int = 1000
    """steps before an episode is cut (truncated)"""


class BraxState(NamedTuple):
    env_state: Any  # Brax's State (a pytree)
    steps: jax.Array  # int32 steps taken in this episode


@dataclasses.dataclass(frozen=True)
class BraxEnv(HeldSpaces, Environment):
    """A Brax environment by its name."""

    name: str
    """Brax's name of the environment (each registered name fixes it)"""
    backend: str = "generalized"
    """Brax's physics pipeline: generalized, positional, spring or mjx"""
    observed: tuple[int, ...] | None = None
    """the observation components kept, the others dropped; None keeps every one"""
    params: BraxParams = BraxParams()

    def __post_init__(self):
        if self.backend not in BACKENDS:
            raise ValueError(f"backend must be one of {BACKENDS}, got {self.backend!r}")
        if self.params.episode_length < 1:
            raise ValueError(f"episode_length must be a positive integer, got {self.params.episode_length}")
        env = extra_module("brax.envs", "brax", "Brax").get_environment(self.name, backend=self.backend)
        shape = observed_shape(self.observed, (int(env.observation_size),), f"brax/{self.name}")
        bounds = ((-1.0,) * env.action_size, (1.0,) * env.action_size)
        object.__setattr__(self, "brax_env", env)
        self.hold_spaces(shape, (), bounds)

    def _observe(self, obs):
        return obs if self.observed is None else obs[jnp.asarray(self.observed)]

    def reset_env(self, key, params):
        env_state = self.brax_env.reset(key)
        return self._observe(env_state.obs), BraxState(env_state, jnp.int32(0))

    def step_env(self, key, state, action, params):
        env_state = self.brax_env.step(state.env_state, action)
        steps = state.steps + 1
        terminated = env_state.done > 0.5
        truncated = steps >= params.episode_length  # as gymnax's: true at the limit even on a terminal step
        reward = jnp.asarray(env_state.reward, jnp.float32)
        return self._observe(env_state.obs), BraxState(env_state, steps), reward, terminated, truncated, {}


for _name in BRAX_ENVS:
    register(f"brax/{_name}", BraxEnv.from_settings, fixed=dict(name=_name))
for _name, _observed in POSITIONS_ONLY.items():
    register(f"brax/{_name}/positions", BraxEnv.from_settings, fixed=dict(name=_name, observed=_observed))
