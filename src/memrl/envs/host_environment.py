"""Any gymnasium environment as a memrl ``Environment`` (``env:gymnasium --env.id <id>``), stepped on the host.

The agent and the learner stay jitted; each environment step is one host callback that steps a
gymnasium vector environment holding every copy the jitted program runs (the ``num_envs`` of a
run, times its seeds: ``vmap`` hands the callback the whole batch at once). The vector environment
auto-resets in the same step (gymnasium's ``AutoresetMode.SAME_STEP``), so ``step`` returns what a
memrl environment returns: on the last step of an episode ``done``, the reward of that step, the
first observation of the next episode, and the last one in ``info["final_obs"]``.

``id`` is anything ``gymnasium.make`` takes, ``module:Id`` included (the module is imported
first: ``gymnasium/popgym:popgym-RepeatPreviousEasy-v0``); keyword settings go to
``gymnasium.make``, except ``vectorization`` ("sync", the default, or "async": one process per
copy, which pays when one step costs more than about a millisecond) and ``observed`` (the
components of a one-dimensional observation kept, the others dropped: ``observed=(0, 1)`` gives
Pendulum's cos θ and sin θ without θ', a velocity-masked task; None keeps every one).

Spaces: actions ``Discrete``, ``MultiDiscrete`` or a one-dimensional ``Box`` (continuous:
``action_bounds`` are its low and high); observations ``Box`` (kept as float32, or
uint8 when the space is uint8: an image an image encoder reads), ``Discrete`` (one-hot),
``MultiDiscrete`` (the one-hots joined), ``MultiBinary`` (float32), and ``Dict`` / ``Tuple`` of
these (parts named by key / position). Others are refused by name.

What the host cannot do as a JAX environment does: its state is not in the checkpoint. The JAX
state is the id of the vector environment that holds the episodes; a run resumed in a new
process finds no such vector, starts fresh episodes, and marks the step where it did so as
``done`` (truncated, reward 0), so a resumed run truncates its open episodes instead of
continuing them. The same happens to an evaluation's episodes after ``MAX_LIVE_VECTORS`` newer
resets have closed its vector. An environment that itself runs JAX is better trained natively:
JAX called from within the step callback can stall (jax-ml/jax#24255), at the least while it
compiles.
"""

from __future__ import annotations

import secrets
import time
from collections import OrderedDict

import gymnasium
import jax
import jax.numpy as jnp
import numpy as np

from memrl.envs.base import Environment, observed_shape, register

MAX_LIVE_VECTORS = 8  # vector environments kept open at once (each reset opens one; the oldest is closed)
VECTORIZATION = ("sync", "async")


def action_dims(space: gymnasium.Space, env_id: str) -> tuple[int, ...]:
    """The choices of each discrete component; () for a (one-dimensional) Box of continuous actions."""
    if isinstance(space, gymnasium.spaces.Discrete):
        return (int(space.n),)
    if isinstance(space, gymnasium.spaces.MultiDiscrete) and space.nvec.ndim == 1:
        return tuple(int(n) for n in space.nvec)
    if isinstance(space, gymnasium.spaces.Box) and len(space.shape) == 1:
        return ()
    raise ValueError(
        f"{env_id}: memrl's agents take Discrete, (one-dimensional) MultiDiscrete or (one-dimensional) Box actions; "
        f"its action space is {space}"
    )


def observation_structure(space: gymnasium.Space, env_id: str):
    """The ``jax.ShapeDtypeStruct`` (tree) of one observation of ``space`` as memrl sees it."""
    if isinstance(space, gymnasium.spaces.Box):
        return jax.ShapeDtypeStruct(space.shape, np.uint8 if space.dtype == np.uint8 else np.float32)
    if isinstance(space, gymnasium.spaces.Discrete):
        return jax.ShapeDtypeStruct((int(space.n),), np.float32)
    if isinstance(space, gymnasium.spaces.MultiDiscrete):
        return jax.ShapeDtypeStruct((int(space.nvec.sum()),), np.float32)
    if isinstance(space, gymnasium.spaces.MultiBinary):
        return jax.ShapeDtypeStruct(tuple(np.atleast_1d(space.n)), np.float32)
    if isinstance(space, gymnasium.spaces.Dict):
        return {name: observation_structure(part, env_id) for name, part in space.spaces.items()}
    if isinstance(space, gymnasium.spaces.Tuple):
        return {str(i): observation_structure(part, env_id) for i, part in enumerate(space.spaces)}
    raise ValueError(
        f"{env_id}: observation space {space} is not one memrl reads (Box, Discrete, MultiDiscrete, MultiBinary, Dict, Tuple)"
    )


def as_memrl_observation(space: gymnasium.Space, batch):
    """A batch of observations [n, ...] of ``space`` (a vector environment's) as ``observation_structure`` says."""
    if isinstance(space, gymnasium.spaces.Box):
        return np.asarray(batch, np.uint8 if space.dtype == np.uint8 else np.float32)
    if isinstance(space, gymnasium.spaces.Discrete):
        return np.eye(int(space.n), dtype=np.float32)[np.asarray(batch) - space.start]
    if isinstance(space, gymnasium.spaces.MultiDiscrete):
        values = np.asarray(batch).reshape(len(batch), -1) - space.start.reshape(-1)
        return np.concatenate(
            [np.eye(int(n), dtype=np.float32)[values[:, i]] for i, n in enumerate(space.nvec.reshape(-1))], axis=-1
        )
    if isinstance(space, gymnasium.spaces.MultiBinary):
        return np.asarray(batch, np.float32)
    if isinstance(space, gymnasium.spaces.Dict):
        return {name: as_memrl_observation(part, batch[name]) for name, part in space.spaces.items()}
    return {str(i): as_memrl_observation(part, batch[i]) for i, part in enumerate(space.spaces)}


def raw_key(key: jax.Array) -> jax.Array:
    """The uint32 words of a PRNG key (typed or raw): what a host callback can read."""
    return jax.random.key_data(key) if jnp.issubdtype(key.dtype, jax.dtypes.prng_key) else key


def seeds_of(keys: np.ndarray) -> list[int]:
    """A gymnasium seed for each raw PRNG key [n, 2] (uint32 words)."""
    words = np.asarray(keys, np.uint64).reshape(len(keys), -1)
    return [int(w[0] * np.uint64(2**32) + w[-1]) % 2**63 for w in words]


EXTRAS = {"popgym": "popgym", "minigrid": "babyai"}
"""modules of environments that one of memrl's extras installs, with the extra's name"""


class HostEnvironment(Environment):
    """A gymnasium environment stepped on the host (module docstring)."""

    def __init__(self, env_id: str, vectorization: str = "sync", observed=None, **make_kwargs):
        if vectorization not in VECTORIZATION:
            raise ValueError(f"vectorization must be one of {VECTORIZATION}, got {vectorization!r}")
        self.env_id, self.vectorization, self.make_kwargs = env_id, vectorization, make_kwargs
        self.observed = None if observed is None else tuple(int(i) for i in observed)
        try:
            probe = gymnasium.make(env_id, **make_kwargs)
        except (gymnasium.error.Error, ImportError) as err:
            module = env_id.split(":", 1)[0].split(".")[0] if ":" in env_id else getattr(err, "name", None) or ""
            extra = EXTRAS.get(module) if isinstance(err, ImportError) else None
            install = f' (install it: pip install "memrl[{extra}]")' if extra else ""
            raise ValueError(f"gymnasium cannot make {env_id!r}: {err}{install}") from None
        except Exception as err:  # the environment's own module or constructor failed
            raise ValueError(f"gymnasium cannot make {env_id!r}: it raised {type(err).__name__}: {err}") from None
        self.observation_space, self.action_space = probe.observation_space, probe.action_space
        probe.close()
        self._action_dims = action_dims(self.action_space, env_id)
        self._observation = observation_structure(self.observation_space, env_id)
        if self.observed is not None:
            shape = getattr(self._observation, "shape", ())  # a Dict or Tuple observation has none
            self._observation = jax.ShapeDtypeStruct(
                observed_shape(self.observed, shape, env_id), self._observation.dtype
            )
        self._vectors: OrderedDict[int, gymnasium.vector.VectorEnv] = OrderedDict()
        self.host_seconds = 0.0
        """wall time spent in the host's resets and steps so far (``memrl bench host`` reads its share)"""

    @property
    def settings(self) -> dict:
        """Its id, then the settings given: ``vectorization`` and ``observed`` where not their
        defaults, and ``gymnasium.make``'s keywords."""
        given = {"vectorization": self.vectorization} if self.vectorization != "sync" else {}
        given |= {"observed": self.observed} if self.observed is not None else {}
        return {"id": self.env_id, **given, **self.make_kwargs}

    @property
    def default_params(self):
        return ()

    @property
    def observation_shape(self):
        return jax.tree.map(lambda s: s.shape, self._observation)

    @property
    def action_dims(self):
        return self._action_dims

    @property
    def action_bounds(self):
        if not isinstance(self.action_space, gymnasium.spaces.Box):
            return None
        return tuple(map(float, self.action_space.low)), tuple(map(float, self.action_space.high))

    # the host side: batches of any leading shape, flattened to the vector environment's copies

    def _as_observation(self, batch):
        """A batch of the vector environment's observations as memrl sees them, only the ``observed``
        components where some are chosen."""
        obs = as_memrl_observation(self.observation_space, batch)
        return obs if self.observed is None else obs[:, list(self.observed)]

    def _open_vector(self, count: int, keys) -> tuple[int, object]:
        env_fns = [lambda: gymnasium.make(self.env_id, **self.make_kwargs)] * count
        kind = gymnasium.vector.AsyncVectorEnv if self.vectorization == "async" else gymnasium.vector.SyncVectorEnv
        vector = kind(env_fns, autoreset_mode=gymnasium.vector.AutoresetMode.SAME_STEP)
        obs, _ = vector.reset(seed=seeds_of(keys))
        vector_id = secrets.randbits(31)
        self._vectors[vector_id] = vector
        while len(self._vectors) > MAX_LIVE_VECTORS:
            self._vectors.popitem(last=False)[1].close()
        return vector_id, self._as_observation(obs)

    def _host_reset(self, keys):
        start = time.perf_counter()
        keys = np.asarray(keys)
        batch = keys.shape[:-1]
        vector_id, obs = self._open_vector(int(np.prod(batch)), keys.reshape(-1, keys.shape[-1]))
        reshaped = jax.tree.map(lambda x: x.reshape(batch + x.shape[1:]), obs), np.full(batch, vector_id, np.int32)
        self.host_seconds += time.perf_counter() - start
        return reshaped

    def _host_step(self, keys, vector_ids, actions):
        start = time.perf_counter()
        keys, vector_ids, actions = np.asarray(keys), np.asarray(vector_ids), np.asarray(actions)
        batch = vector_ids.shape
        count = int(np.prod(batch))
        vector = self._vectors.get(int(vector_ids.reshape(-1)[0]))
        if vector is None or vector.num_envs != count:  # a vector of another process (a resumed run) or a closed one
            vector_id, obs = self._open_vector(count, keys.reshape(count, -1))
            reward, terminated, truncated = np.zeros(count, np.float32), np.zeros(count, bool), np.ones(count, bool)
            final = obs
        else:
            vector_id = int(vector_ids.reshape(-1)[0])
            flat_actions = actions.reshape(count, -1)
            if isinstance(self.action_space, gymnasium.spaces.Discrete):
                step_actions = flat_actions[:, 0]
            else:  # MultiDiscrete's components, or a Box's in its own dtype
                step_actions = flat_actions.astype(self.action_space.dtype)
            raw, reward, terminated, truncated, info = vector.step(step_actions)
            obs = self._as_observation(raw)
            final = self._last_observations(obs, np.logical_or(terminated, truncated), info)
        shaped = lambda x: np.asarray(x).reshape(batch + np.shape(x)[1:])
        stepped = (
            jax.tree.map(shaped, obs),
            np.full(batch, vector_id, np.int32),
            shaped(np.asarray(reward, np.float32)),
            shaped(np.asarray(terminated, bool)),
            shaped(np.asarray(truncated, bool)),
            jax.tree.map(shaped, final),
        )
        self.host_seconds += time.perf_counter() - start
        return stepped

    def _last_observations(self, obs, ended, info):
        """``obs`` with, where an episode ended (its row is then the next episode's first), the
        ended episode's last observation from ``info["final_obs"]``."""
        if not ended.any():
            return obs
        final = jax.tree.map(np.copy, obs)
        for i in np.flatnonzero(ended):
            last = self._as_observation(jax.tree.map(lambda x: np.asarray(x)[None], info["final_obs"][i]))
            for row, value in zip(jax.tree.leaves(final), jax.tree.leaves(last)):
                row[i] = value[0]
        return final

    # the JAX side: one environment's reset and step (``vmap`` batches the callbacks)

    def reset_env(self, key, params):
        result = (self._observation, jax.ShapeDtypeStruct((), jnp.int32))
        return jax.pure_callback(self._host_reset, result, raw_key(key), vmap_method="broadcast_all")

    def step_env(self, key, state, action, params):
        raise NotImplementedError(f"{self.env_id} resets on the host: step it with step(), which auto-resets")

    def step(self, key, state, action, params=None):
        action = self.checked_action(action)
        scalar = lambda dtype: jax.ShapeDtypeStruct((), dtype)
        result = (
            self._observation,
            scalar(jnp.int32),
            scalar(jnp.float32),
            scalar(bool),
            scalar(bool),
            self._observation,
        )
        obs, state, reward, terminated, truncated, final_obs = jax.pure_callback(
            self._host_step, result, raw_key(key), state, action, vmap_method="broadcast_all"
        )
        info = {"terminated": terminated, "truncated": truncated, "final_obs": final_obs}
        return obs, state, reward, terminated | truncated, info


register("gymnasium/", HostEnvironment)
