"""Any memrl environment as a ``gymnasium.Env`` (and a gymnasium vector env), for other libraries.

The adapter keeps the JAX state and a PRNG key, and calls the jitted ``reset_env``/``step_env``
(gymnasium does its own resets). One action component gives ``Discrete``, several ``MultiDiscrete``;
dict observations (named parts, e.g. position and goal) give a ``Dict``. Parts keep their dtypes:
uint8 images are ``Box(0, 255)``, single tokens ``Discrete(vocabulary)``, the rest float32 ``Box``.
"""

from __future__ import annotations

import gymnasium
import jax
import numpy as np

from memrl.envs.base import Environment, make


def part_space(
    leaf: jax.ShapeDtypeStruct, vocabulary: int | None, bounds: tuple[float, float] | None
) -> gymnasium.spaces.Space:
    if vocabulary is not None and leaf.shape == ():
        return gymnasium.spaces.Discrete(vocabulary)
    if leaf.dtype == np.uint8:
        return gymnasium.spaces.Box(0, 255, leaf.shape, np.uint8)
    low, high = bounds or (-np.inf, np.inf)
    return gymnasium.spaces.Box(low, high, leaf.shape, np.float32)


def observation_space(env: Environment) -> gymnasium.spaces.Space:
    """The space of ``env``'s observations, from the shapes and dtypes its reset returns, bounded
    where the environment knows its bounds (``observation_bounds``)."""
    obs, _ = jax.eval_shape(env.reset_env, jax.random.PRNGKey(0), env.default_params)
    bounds = env.observation_bounds
    if isinstance(obs, dict):
        return gymnasium.spaces.Dict(
            {name: part_space(part, env.token_vocab.get(name), (bounds or {}).get(name)) for name, part in obs.items()}
        )
    return part_space(obs, None, bounds)


def as_numpy(obs):
    """Host values: integer parts keep their dtype (a single token becomes an np.int64, as
    ``Discrete`` expects), the rest become float32."""

    def convert(leaf):
        if not np.issubdtype(leaf.dtype, np.integer):
            return np.asarray(leaf, np.float32)
        return np.int64(leaf) if leaf.shape == () else np.asarray(leaf)

    return jax.tree.map(convert, obs)


class GymnasiumEnv(gymnasium.Env):
    metadata = {"render_modes": []}

    def __init__(self, env: Environment | str, **env_kwargs):
        self.env = make(env, **env_kwargs) if isinstance(env, str) else env
        self.params = self.env.default_params
        dims, bounds = self.env.action_dims, self.env.action_bounds
        if bounds is not None:
            low, high = (np.asarray(bound, np.float32) for bound in bounds)
            self.action_space = gymnasium.spaces.Box(low, high, dtype=np.float32)
        elif len(dims) == 1:
            self.action_space = gymnasium.spaces.Discrete(dims[0])
        else:
            self.action_space = gymnasium.spaces.MultiDiscrete(dims)
        self._action_dtype = np.int32 if bounds is None else np.float32
        self.observation_space = observation_space(self.env)
        self._reset = jax.jit(self.env.reset_env)
        self._step = jax.jit(self.env.step_env)
        self._key = jax.random.PRNGKey(0)
        self._state = None

    def reset(self, *, seed: int | None = None, options=None):
        super().reset(seed=seed)
        if seed is not None:
            self._key = jax.random.PRNGKey(seed)
        self._key, key = jax.random.split(self._key)
        obs, self._state = self._reset(key, self.params)
        return as_numpy(obs), {}

    def step(self, action):
        if self._state is None:
            raise RuntimeError("call reset() before step()")
        action = np.atleast_1d(np.asarray(action, self._action_dtype))
        self._key, key = jax.random.split(self._key)
        obs, self._state, reward, terminated, truncated, _ = self._step(key, self._state, action, self.params)
        return as_numpy(obs), float(reward), bool(terminated), bool(truncated), {}


def make_vector(env: str, num_envs: int, **env_kwargs) -> gymnasium.vector.SyncVectorEnv:
    """``num_envs`` copies of a memrl environment as a gymnasium vector env."""
    return gymnasium.vector.SyncVectorEnv([lambda: GymnasiumEnv(env, **env_kwargs) for _ in range(num_envs)])
