"""The environment API (gymnax-style, pure and jittable) and the environment registry.

    obs, state = env.reset(key, params)
    obs, state, reward, done, info = env.step(key, state, action, params)

``step`` auto-resets: when ``done``, the returned obs and state are those of a fresh episode and
``info["final_obs"]`` holds the last observation of the finished one. ``info["terminated"]`` and
``info["truncated"]`` are kept apart (done = terminated | truncated). Actions are int32 arrays of
shape [len(action_dims)], one entry per discrete action component. Shape-deciding settings are
constructor arguments; numeric settings live in the ``params`` dataclass.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp

from memrl.registry import Registry

ENVS: Registry = Registry("environment")


register = ENVS.register  # register(name, factory); refuses duplicates
make = ENVS.make  # make("tmaze/T-LN", **params) -> Environment; unknown names list the known ones
names = ENVS.names


def replace_params(defaults, kind: str, **overrides):
    """``defaults`` (a params dataclass) with ``overrides``; unknown names raise a TypeError that
    lists the allowed ones."""
    allowed = {f.name for f in dataclasses.fields(defaults)}
    unknown = set(overrides) - allowed
    if unknown:
        raise TypeError(f"unknown {kind} params {sorted(unknown)}; allowed: {sorted(allowed)}")
    return defaults.replace(**overrides)


def random_other(key, index: jax.Array, count) -> jax.Array:
    """An integer drawn uniformly from 0 .. count − 1 except ``index``."""
    return (index + jax.random.randint(key, (), 1, count)) % count


def select(flag: jax.Array, on_true, on_false):
    """Tree-wise ``where`` with a scalar flag."""
    return jax.tree.map(lambda a, b: jnp.where(flag, a, b), on_true, on_false)


class Environment:
    """Base class: subclasses implement ``reset_env``, ``step_env``, ``default_params``,
    ``observation_shape`` and ``action_dims``."""

    @property
    def default_params(self) -> Any:
        raise NotImplementedError

    @property
    def observation_shape(self) -> tuple[int, ...]:
        raise NotImplementedError

    @property
    def action_dims(self) -> tuple[int, ...]:
        """Number of choices of each discrete action component."""
        raise NotImplementedError

    @property
    def token_vocab(self) -> dict[str, int]:
        """Observation parts that are int tokens (language), with their vocabulary sizes."""
        return {}

    def reset_env(self, key, params):
        raise NotImplementedError

    def step_env(self, key, state, action, params):
        """One transition without auto-reset: (obs, state, reward, terminated, truncated, info)."""
        raise NotImplementedError

    @property
    def observation_bounds(self) -> dict[str, tuple[float, float]] | tuple[float, float] | None:
        """The least and greatest value of the float observations (per named part where there are
        parts), where the environment knows them; None where it does not (the adapters then
        declare an unbounded ``Box``)."""
        return None

    def checked_action(self, action) -> jax.Array:
        """``action`` as int32 [len(action_dims)] (one number for one component, as gymnax takes it),
        or a ValueError that says the shape expected."""
        action = jnp.asarray(action, jnp.int32)
        if action.shape == () and len(self.action_dims) == 1:
            action = action[None]
        if action.shape != (len(self.action_dims),):
            raise ValueError(
                f"{type(self).__name__} takes actions of shape ({len(self.action_dims)},) "
                f"(components with {self.action_dims} choices), got {action.shape}"
            )
        return action

    def reset(self, key, params=None):
        return self.reset_env(key, self.default_params if params is None else params)

    def step(self, key, state, action, params=None):
        params = self.default_params if params is None else params
        action = self.checked_action(action)
        step_key, reset_key = jax.random.split(key)
        obs, state, reward, terminated, truncated, info = self.step_env(step_key, state, action, params)
        done = terminated | truncated
        reset_obs, reset_state = self.reset_env(reset_key, params)
        info = {**info, "terminated": terminated, "truncated": truncated, "final_obs": obs}
        return select(done, reset_obs, obs), select(done, reset_state, state), reward, done, info
