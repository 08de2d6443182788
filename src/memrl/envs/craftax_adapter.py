"""Craftax (Matthews et al. 2024: Crafter's open-ended survival game, and its larger successor, in
JAX) as memrl environments: ``memrl.envs.make("craftax/Craftax-Classic-Symbolic-v1")``, with the
extra ``craftax``.

The agent sees a local window of the world (and its inventory), so what lies outside it and what it
did before must be remembered: a partially observable suite stepped in JAX at vectorised speed.
Craftax's ``done`` joins death (or lava) with the time limit; here they are apart: truncated when
the episode reaches ``max_timesteps``, terminated otherwise. Observations are Craftax's: a flat
float32 vector (Symbolic) or a float32 picture in [0, 1] (Pixels). Craftax's params are the numeric
settings (``max_timesteps``, ``day_length``, ...). Craftax is imported when one is made; the first
Pixels environment of a machine spends about a minute caching its textures.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax.numpy as jnp

from memrl.envs.base import Environment, HeldSpaces, extra_module, register

CRAFTAX_ENVS = (
    "Craftax-Classic-Symbolic-v1",
    "Craftax-Classic-Pixels-v1",
    "Craftax-Symbolic-v1",
    "Craftax-Pixels-v1",
)
"""every Craftax environment (each without Craftax's own auto-reset: memrl's resets)"""


@dataclasses.dataclass(frozen=True)
class CraftaxEnv(HeldSpaces, Environment):
    """A Craftax environment by its name; Craftax's params stay the numeric params."""

    name: str
    """Craftax's name of the environment (each registered name fixes it)"""
    resets: int = 0
    """fresh worlds made per step of the batch, shared by the copies that end in it (``batch_step``'s
    optimistic resets; Craftax's wrapper makes one per 16 copies); 0: one for every copy at every
    step, as exact as a single copy, though a world costs about 17 steps"""
    params: Any = None
    """Craftax's params (its defaults where None)"""

    def __post_init__(self):
        if not isinstance(self.resets, int) or self.resets < 0:
            raise ValueError(f"resets must be an integer >= 0, got {self.resets!r}")
        craftax = extra_module("craftax.craftax_env", "craftax", "Craftax")
        env = craftax.make_craftax_env_from_name(self.name, auto_reset=False)
        if self.params is None:
            object.__setattr__(self, "params", env.default_params)
        shape = tuple(env.observation_space(self.params).shape)
        object.__setattr__(self, "craftax_env", env)
        self.hold_spaces(shape, (int(env.action_space(self.params).n),))

    @property
    def resets_per_step(self):
        return self.resets or None

    @property
    def observation_bounds(self):
        return (0.0, 1.0) if len(self._observation_shape) == 3 else None

    def reset_env(self, key, params):
        return self.craftax_env.reset_env(key, params)

    def step_env(self, key, state, action, params):
        obs, state, reward, done, _ = self.craftax_env.step_env(key, state, action[0], params)
        truncated = state.timestep >= params.max_timesteps
        return obs, state, jnp.asarray(reward, jnp.float32), done & ~truncated, truncated, {}


def make_craftax(name: str, resets: int = 0, **params) -> CraftaxEnv:
    """Craftax's ``name`` making ``resets`` fresh worlds a step (0: one a copy), with its params
    ``params`` over Craftax's defaults."""
    env = CraftaxEnv(name, resets)
    return env if not params else CraftaxEnv(name, resets, env.params.replace(**params))


for _name in CRAFTAX_ENVS:
    register(f"craftax/{_name}", make_craftax, fixed=dict(name=_name))
