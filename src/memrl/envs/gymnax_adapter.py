"""Both ways between gymnax and memrl.

Any discrete-action gymnax environment as a memrl environment, so memrl's learners train on it:
``memrl.envs.make("gymnax/MemoryChain-bsuite")``. Termination comes from the gymnax env's
``step_env``, truncation (``max_steps_in_episode``) from its ``is_truncated``, as gymnax's own
``step`` does. Actions are memrl's [1]-shaped int arrays.

And a memrl environment with one discrete action component and an array observation as a gymnax
environment (``AsGymnax``), so JAX libraries written for gymnax (memorax, ``benchmarks/peers``)
train on it: scalar actions, ``step`` with auto-reset returning (obs, state, reward, done, info).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from memrl.envs.base import Environment, make, register

DISCRETE_GYMNAX_ENVS = (
    "CartPole-v1", "Acrobot-v1", "MountainCar-v0", "Catch-bsuite", "DeepSea-bsuite", "MemoryChain-bsuite",
    "UmbrellaChain-bsuite", "DiscountingChain-bsuite", "SimpleBandit-bsuite", "FourRooms-misc", "MetaMaze-misc",
    "BernoulliBandit-misc", "GaussianBandit-misc", "Pong-misc",
    "Asterix-MinAtar", "Breakout-MinAtar", "Freeway-MinAtar", "Seaquest-MinAtar", "SpaceInvaders-MinAtar",
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
            raise ValueError(f"{type(env).__name__} has a {type(space).__name__} action space; memrl's learners need discrete actions")
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
        truncated = self.gymnax_env.is_truncated(state, params) & ~terminated
        info = {k: v for k, v in info.items() if k != "discount"}
        return obs, state, jnp.asarray(reward, jnp.float32), terminated, truncated, info


def make_gymnax(name: str, **params) -> GymnaxEnv:
    import gymnax

    env, default = gymnax.make(name)
    return GymnaxEnv(env, default.replace(**params) if params else default)


for _name in DISCRETE_GYMNAX_ENVS:
    register(f"gymnax/{_name}", lambda _n=_name, **kw: make_gymnax(_n, **kw))


class AsGymnax:
    """A memrl environment behind gymnax's interface (``reset``, ``step``, ``action_space``,
    ``observation_space``, ``default_params``); ``info`` keeps memrl's ``terminated`` and ``truncated``."""

    def __init__(self, env: Environment | str, **env_kwargs):
        self.env = make(env, **env_kwargs) if isinstance(env, str) else env
        if len(self.env.action_dims) != 1:
            raise ValueError(f"gymnax actions are one discrete choice; {type(self.env).__name__} has {len(self.env.action_dims)} components {self.env.action_dims}")
        self._observation = jax.eval_shape(self.env.reset, jax.random.PRNGKey(0))[0]
        if not isinstance(self._observation, jax.ShapeDtypeStruct):
            raise ValueError(f"{type(self.env).__name__} has named observation parts; gymnax observations are one array")

    @property
    def default_params(self):
        return self.env.default_params

    def reset(self, key, params=None):
        return self.env.reset(key, params)

    def step(self, key, state, action, params=None):
        obs, state, reward, done, info = self.env.step(key, state, jnp.reshape(action, (1,)), params)
        return obs, state, reward, done, {"terminated": info["terminated"], "truncated": info["truncated"]}

    def action_space(self, params=None):
        from gymnax.environments import spaces

        return spaces.Discrete(self.env.action_dims[0])

    def observation_space(self, params=None):
        from gymnax.environments import spaces

        return spaces.Box(-jnp.inf, jnp.inf, self._observation.shape, self._observation.dtype)
