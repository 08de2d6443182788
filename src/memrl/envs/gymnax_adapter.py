"""Any discrete-action gymnax environment as a memrl environment, so memrl's learners train on it:
``memrl.envs.make("gymnax/MemoryChain-bsuite")``. Termination comes from the gymnax env's
``step_env``, truncation (``max_steps_in_episode``) from its ``is_truncated``, as gymnax's own
``step`` does. Actions are memrl's [1]-shaped int arrays. gymnax is imported when one is made (the
other way, a memrl environment as a gymnax one, is ``as_gymnax.py``).
"""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp

from memrl.envs.base import Environment, register

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
