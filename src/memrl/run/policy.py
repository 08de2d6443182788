"""A trained agent from Python: ``memrl.load_policy(run_folder, seed=0)`` acts one step at a time in
a loop of your own (a gymnasium loop, for example), as stable-baselines3's ``predict`` does::

    policy = memrl.load_policy("runs/tln-max")
    state = policy.initial_state(batch_size=1)
    obs, _ = env.reset(seed=0)                      # env = memrl.envs.gymnasium_adapter.GymnasiumEnv("tmaze/T-LN")
    start, reward = np.ones(1, bool), np.zeros(1)
    while True:
        action, state = policy.act(obs[None], state, start, reward=reward)
        obs, r, terminated, truncated, _ = env.step(action[0])
        start, reward = np.array([terminated or truncated]), np.array([r])
        ...

The state holds the memory core's carry and the previous action; ``episode_start`` clears the
memory where an episode begins, as the learners' reset flags do, and ``reward`` is the reward of the
previous step (what agents with ``feed_prev_reward`` read)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from memrl.agents.distributions import Categorical
from memrl.run.final_agents import TrainedSeed, trained_seed


@struct.dataclass
class PolicyState:
    """What a policy carries between steps, per environment of the batch."""

    carry: Any
    """the memory core's state"""
    prev_action: jax.Array
    """[B, action components] int32: the last action (zeros before the first)"""


def per_environment(name: str, value, dtype, batch: int) -> np.ndarray:
    """``value`` (one for all, or one per environment) as [batch] of ``dtype``; refused with its
    shape otherwise."""
    value = np.asarray(value, dtype)
    if value.shape not in ((), (batch,)):
        raise ValueError(f"{name} must be one value or one per environment, shape ({batch},); got shape {value.shape}")
    return np.broadcast_to(value, (batch,))


class Policy:
    """The actor of a trained run of an environment learner (PPO, IMPALA, R2D2, PQN): ``initial_state`` and ``act``."""

    def __init__(self, trained: TrainedSeed):
        self.config, self.learner, self.params = trained.config, trained.learner, trained.params
        self.actions = self.learner.agent.actions
        self._act = jax.jit(self._step, static_argnames="greedy")
        self._key = jax.random.PRNGKey(0)  # predict's sampling key sequence
        self._state_shapes: dict[int, Any] = {}

    def initial_state(self, batch_size: int) -> PolicyState:
        """The state before the first step of ``batch_size`` environments."""
        return PolicyState(
            self.learner.agent.initialize_carry((batch_size,)),
            jnp.zeros((batch_size, *self.actions.action_shape), self.actions.dtype),
        )

    def act(self, obs, state: PolicyState, episode_start, greedy: bool = True, key=None, reward=None):
        """One step for a batch of B environments: ``obs`` the batched observation, ``episode_start``
        [B] bool (true at an episode's first step: its memory starts empty), ``reward`` [B] the
        reward of the previous step (needed where the agent reads it). Returns (action, state):
        action [B] int for environments with one discrete action ([B, components] otherwise; [B, n]
        float32 for continuous ones), the most probable one if ``greedy`` (a Gaussian's mean,
        squashed into the bounds), else sampled with ``key``."""
        batch = self.check_inputs(obs, state, episode_start, reward)
        if not greedy and key is None:
            raise ValueError("act(greedy=False) samples its actions: give it a key (jax.random.PRNGKey)")
        if not greedy and self.config.GREEDY_ONLY:
            raise ValueError(
                f"an {self.config.learner} agent's outputs are Q-values, not a distribution to sample: act greedily (act(greedy=True), predict(deterministic=True))"
            )
        if reward is None:
            if self.config.feed_prev_reward:
                raise ValueError(
                    "this agent reads the previous reward (feed_prev_reward): pass reward= the last step's rewards"
                )
            reward = np.zeros(batch, np.float32)
        key = jax.random.PRNGKey(0) if key is None else key
        action, state = self._act(
            self.params,
            obs,
            state,
            jnp.asarray(episode_start, bool),
            jnp.asarray(reward, jnp.float32),
            key,
            greedy=greedy,
        )
        one_choice = isinstance(self.actions, Categorical) and len(self.actions.dims) == 1
        return (action[:, 0] if one_choice else action), state

    def predict(
        self,
        observation,
        state: PolicyState | None = None,
        episode_start=None,
        deterministic: bool = False,
        reward=None,
    ):
        """stable-baselines3's ``predict``: (action, state) for one observation or a batch of them.
        ``state`` None starts fresh (every environment at an episode start); ``episode_start`` [B]
        or one bool (default: True with a fresh state, else False); sampled actions draw from the
        policy's own key sequence unless ``deterministic``. One unbatched observation gives one
        action (an int for one discrete action) and a state of batch size 1."""
        single = self.is_single(observation)
        first_given, first_expected = self.first_part_shapes(observation)
        if not single and len(first_given) != len(first_expected) + 1:
            raise ValueError(
                f"observation has shape {first_given}; this policy's environment gives one observation of shape "
                f"{first_expected}, a batch of them [B, {', '.join(map(str, first_expected))}]"
            )
        batched = jax.tree.map(lambda x: np.asarray(x)[None], observation) if single else observation
        batch = 1 if single else len(jax.tree.leaves(batched)[0])
        if state is None:
            state, default_start = self.initial_state(batch), True
        else:
            default_start = False
        start = per_environment("episode_start", default_start if episode_start is None else episode_start, bool, batch)
        reward = None if reward is None else per_environment("reward", reward, np.float32, batch)
        key = None
        if not deterministic:
            self._key, key = jax.random.split(self._key)
        action, state = self.act(batched, state, start, greedy=deterministic, key=key, reward=reward)
        return (np.asarray(action)[0] if single else np.asarray(action)), state

    def is_single(self, observation) -> bool:
        """Whether ``observation`` is one environment's (no batch axis): its first part has exactly
        the environment's observation shape."""
        given, expected = self.first_part_shapes(observation)
        return given == expected

    def first_part_shapes(self, observation) -> tuple[tuple, tuple]:
        """(the shape of ``observation``'s first part, the environment's shape of that part)."""
        expected = self.learner.env.observation_shape
        first_expected = next(iter(expected.values())) if isinstance(expected, dict) else expected
        first_given = next(iter(observation.values())) if isinstance(observation, dict) else observation
        return np.shape(first_given), tuple(first_expected)

    def check_inputs(self, obs, state: PolicyState, episode_start, reward) -> int:
        """The batch size B of one step's inputs, refusing inputs of other shapes than the run's
        environment gives (named with the shape expected), a state of another batch size or of
        another policy, and observations that are not finite."""
        start = np.shape(episode_start)
        if len(start) != 1:
            raise ValueError(f"episode_start must have shape [B] (one flag per environment), got shape {start}")
        batch = start[0]
        shapes = lambda tree: jax.tree.map(lambda x: tuple(np.shape(x)), tree)
        if batch not in self._state_shapes:  # traced once per batch size
            self._state_shapes[batch] = shapes(jax.eval_shape(lambda: self.initial_state(batch)))
        if not isinstance(state, PolicyState) or shapes(state) != self._state_shapes[batch]:
            held = np.shape(state.prev_action)[0] if isinstance(state, PolicyState) else None
            why = (
                f"it holds {held} environments, episode_start {batch}"
                if held not in (None, batch)
                else "it is another policy's or core's"
            )
            raise ValueError(
                f"state does not fit this step: {why}; make it with this policy's initial_state(batch_size={batch})"
            )
        expected = self.learner.env.observation_shape
        parts = expected.items() if isinstance(expected, dict) else [(None, expected)]
        given = obs if isinstance(expected, dict) else {None: obs}
        if isinstance(expected, dict) and (not isinstance(obs, dict) or set(obs) != set(expected)):
            raise ValueError(
                f"obs must be a dict of the parts {sorted(expected)}, got {sorted(obs) if isinstance(obs, dict) else type(obs).__name__}"
            )
        for name, shape in parts:
            part = np.asarray(given[name])
            where = "obs" if name is None else f"obs[{name!r}]"
            if part.shape != (batch, *shape):
                raise ValueError(
                    f"{where} must have shape {(batch, *shape)} ([B, *observation shape] for B = {batch} environments), got "
                    f"{part.shape}"
                    + ("; add a batch axis (obs[None]) for one environment" if part.shape == tuple(shape) else "")
                )
            if np.issubdtype(part.dtype, np.floating) and not np.isfinite(part).all():
                raise ValueError(f"{where} holds NaN or infinite values: the agent cannot act on them")
        if reward is not None and np.shape(reward) != (batch,):
            raise ValueError(
                f"reward must have shape [B] = ({batch},) (the previous step's reward per environment), got {np.shape(reward)}"
            )
        return batch

    def _step(self, params, obs, state: PolicyState, episode_start, reward, key, greedy: bool):
        carry, (logits, _) = self.learner.agent.apply(
            params, state.carry, obs, state.prev_action, reward, episode_start
        )
        action = self.actions.greedy(logits) if greedy else self.actions.sample(key, logits)
        return self.actions.to_env(action), PolicyState(carry, action)


def load_policy(run_folder: str | Path, seed: int = 0) -> Policy:
    """The actor of seed ``seed`` of the actor-critic run in ``run_folder``, from its last checkpoint."""
    return Policy(trained_seed(run_folder, seed, "load_policy"))
