"""Both ways between gymnax and memrl.

Any discrete-action gymnax environment as a memrl environment, so memrl's learners train on it:
``memrl.envs.make("gymnax/MemoryChain-bsuite")``. Termination comes from the gymnax env's
``step_env``, truncation (``max_steps_in_episode``) from its ``is_truncated``, as gymnax's own
``step`` does. Actions are memrl's [1]-shaped int arrays.

And a memrl environment with one discrete action component and an array observation as a gymnax
1.0 environment (``AsGymnax``), so JAX code written for gymnax trains on it unchanged: scalar
actions, ``step`` with auto-reset returning (obs, state, reward, terminated, truncated, info).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
from gymnax.environments import environment, spaces

from memrl.envs.base import Environment, make, register

DISCRETE_GYMNAX_ENVS = (
    "CartPole-v1",
    "Acrobot-v1",
    "MountainCar-v0",
    "Catch-bsuite",
    "DeepSea-bsuite",
    "MemoryChain-bsuite",
    "UmbrellaChain-bsuite",
    "DiscountingChain-bsuite",
    "SimpleBandit-bsuite",
    "FourRooms-misc",
    "MetaMaze-misc",
    "BernoulliBandit-misc",
    "GaussianBandit-misc",
    "Pong-misc",
    "Asterix-MinAtar",
    "Breakout-MinAtar",
    "Freeway-MinAtar",
    "Seaquest-MinAtar",
    "SpaceInvaders-MinAtar",
)
"""every gymnax environment with discrete actions, but those of ``UNWRAPPED_GYMNAX_ENVS``"""
UNWRAPPED_GYMNAX_ENVS = {
    "MNISTBandit-bsuite": "downloads MNIST when it is made (no data is downloaded at run time here)",
    "FrozenLake-misc": "its observation is a bare state index (shape ()), not an array memrl's encoders read",
}
"""discrete-action gymnax environments memrl does not register, and why (the others have Box actions)"""


class GymnaxEnv(Environment):
    """Wraps a gymnax ``(env, params)`` pair; gymnax params stay the numeric params."""

    def __init__(self, env: Any, params: Any):
        space = env.action_space(params)
        if not hasattr(space, "n"):
            raise ValueError(
                f"{type(env).__name__} has a {type(space).__name__} action space; memrl's learners need discrete actions"
            )
        self.gymnax_env = env
        self.params = params
        self._action_dims = (int(space.n),)
        self._observation_shape = tuple(env.observation_space(params).shape)

    @property
    def default_params(self):
        return self.params

    @property
    def observation_shape(self):
        return self._observation_shape

    @property
    def action_dims(self):
        return self._action_dims

    def reset_env(self, key, params):
        return self.gymnax_env.reset_env(key, params)

    def step_env(self, key, state, action, params):
        obs, state, reward, terminated, info = self.gymnax_env.step_env(key, state, action[0], params)
        truncated = self.gymnax_env.is_truncated(
            state, params
        )  # as gymnax 1.0's step: true at the time limit even on a terminal step
        info = {k: v for k, v in info.items() if k != "discount"}
        return obs, state, jnp.asarray(reward, jnp.float32), terminated, truncated, info


def make_gymnax(name: str, **params) -> GymnaxEnv:
    import gymnax

    env, default = gymnax.make(name)
    return GymnaxEnv(env, default.replace(**params) if params else default)


for _name in DISCRETE_GYMNAX_ENVS:
    register(f"gymnax/{_name}", make_gymnax, fixed=dict(name=_name))


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
