"""A memrl environment with one discrete action component as a gymnax 1.0 environment
(``AsGymnax``), so JAX code written for gymnax trains on it unchanged: scalar actions, ``step`` with
auto-reset returning (obs, state, reward, terminated, truncated, info). (The other way, a gymnax
environment as a memrl one, is ``gymnax_adapter.py``.)
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from gymnax.environments import environment, spaces

from memrl.envs.base import Environment, make


def as_memrl_action(action) -> jax.Array:
    """gymnax's scalar action as memrl's [1]-shaped int32 one."""
    return jnp.reshape(jnp.asarray(action, jnp.int32), (1,))


class AsGymnax(environment.Environment):
    """A memrl environment as a gymnax 1.0 ``Environment``, so JAX code written for gymnax's own
    environments runs on it unchanged: ``reset(key, params)`` -> (obs, state); ``step(key, state,
    action, params)`` -> (obs, state, reward, terminated, truncated, info) with a scalar action,
    the auto-reset on either, and ``info`` holding ``terminated``, ``truncated`` and
    ``final_observation`` (the observation before the reset), the key split as gymnax splits it
    (step, then reset). ``step_env`` returns gymnax's five values (terminated as its done, memrl's
    truncation in ``info``); ``is_truncated`` cannot be read from a memrl state and is refused.
    Named observation parts stay a dict, with a ``Dict`` observation space."""

    def __init__(self, env: Environment | str, **env_kwargs):
        self.env = make(env, **env_kwargs) if isinstance(env, str) else env
        if self.env.action_bounds is not None:
            raise ValueError(
                f"this view of a memrl environment gives one discrete choice; {type(self.env).__name__}'s actions are continuous"
            )
        if len(self.env.action_dims) != 1:
            raise ValueError(
                f"gymnax actions are one discrete choice; {type(self.env).__name__} has {len(self.env.action_dims)} components {self.env.action_dims}"
            )
        self._observation = jax.eval_shape(self.env.reset, jax.random.PRNGKey(0))[0]

    @property
    def default_params(self):
        return self.env.default_params

    @property
    def name(self) -> str:
        return type(self.env).__name__

    @property
    def num_actions(self) -> int:
        return self.env.action_dims[0]

    def reset(self, key, params=None):
        return self.env.reset(key, params)

    def reset_env(self, key, params):
        return self.env.reset_env(key, params)

    def step_env(self, key, state, action, params):
        obs, state, reward, terminated, truncated, info = self.env.step_env(key, state, as_memrl_action(action), params)
        return obs, state, reward, terminated, {**info, "truncated": truncated}

    def step(self, key, state, action, params=None):
        obs, state, reward, _, info = self.env.step(
            key, state, as_memrl_action(action), params
        )  # memrl's auto-reset splits the key as gymnax does
        final = info.pop("final_obs")
        return obs, state, reward, info["terminated"], info["truncated"], {**info, "final_observation": final}

    def is_truncated(self, state, params):
        raise NotImplementedError(
            "a memrl environment says truncation in step_env (info['truncated']), not from its state"
        )

    def action_space(self, params=None):
        return spaces.Discrete(self.env.action_dims[0])

    def observation_space(self, params=None):
        """A ``Box`` (bounded where the environment knows its bounds), or for named observation
        parts a ``Dict`` of them: a single token part ``Discrete`` over its vocabulary, uint8 images
        ``Box(0, 255)``."""
        bounds = self.env.observation_bounds

        def part(leaf, vocabulary, limits):
            if vocabulary is not None and leaf.shape == ():
                return spaces.Discrete(vocabulary)
            low, high = (0, 255) if leaf.dtype == jnp.uint8 else (limits or (-jnp.inf, jnp.inf))
            return spaces.Box(low, high, leaf.shape, leaf.dtype)

        if isinstance(self._observation, dict):
            return spaces.Dict(
                {
                    name: part(leaf, self.env.token_vocab.get(name), (bounds or {}).get(name))
                    for name, leaf in self._observation.items()
                }
            )
        return part(self._observation, None, bounds)
