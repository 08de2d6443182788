"""Return-conditioned behaviour cloning on offline T-maze episodes: the decision-transformer form
(Chen et al. 2021) that TLB is tested in on Atari (Didolkar et al. 2022, Sec. 3.2, Table 3), as an
analogue that memrl makes itself (the Atari DQN-replay data cannot be had here).

The offline data: ``episodes`` episodes of a behaviour policy on the T-LN maze (AMRL's: the
indicator at the first cell, a noise channel, ``maze_length`` cells, every corridor step forced
right) that walks right and guesses at the junction, UP or DOWN with equal chance: half its episodes
end with the success reward (+4), half with the failure reward (−3). A model that is asked for +4
must therefore remember the indicator across the whole corridor.

Step t's input is the decision transformer's (return-to-go, state, previous action), concatenated
into one vector instead of three tokens: the observation, the return still to come R̂_t = Σ_{t'≥t}
r_t' divided by the success reward, and the previous action one-hot (zeros at t = 0); the target is
the behaviour's action, scored at every step. ``play`` rolls a model out in the real maze from a
target return, lowering it by each reward received, as the decision transformer is evaluated.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable

import jax
import jax.numpy as jnp

from memrl import envs
from memrl.envs.tmaze import DOWN, RIGHT, UP
from memrl.settings import check_positive
from memrl.tasks.base import SequenceBatch, SequenceTask, check_split, previous_actions, register

ACTIONS = 4


@dataclasses.dataclass(frozen=True)
class TMazeReturns(SequenceTask):
    """Cloning a guessing behaviour on T-LN, conditioned on the return to come (module docstring)."""

    batch_size: int = 64
    """episodes per batch"""
    maze_length: int = 20
    """corridor cells: steps per episode (AMRL's T-LN: 100)"""
    episodes: int = 2_000
    """offline training episodes"""
    test_episodes: int = 200
    """held-out offline episodes"""
    seed: int = 0
    """seed of the offline data"""

    input_kind = "vectors"

    def __post_init__(self):
        check_positive(self, "batch_size", "episodes", "test_episodes")
        if not isinstance(self.maze_length, int) or self.maze_length < 2:
            raise ValueError(f"TMazeReturns.maze_length must be an integer >= 2, got {self.maze_length!r}")

    @property
    def env(self):
        return envs.make("tmaze/T-LN", maze_length=self.maze_length, timeout=self.maze_length + 1)

    @property
    def success_reward(self) -> float:
        return float(self.env.default_params.success_reward)

    @property
    def input_size(self) -> int:
        return self.env.observation_shape[0] + 1 + ACTIONS

    @property
    def num_outputs(self) -> int:
        return ACTIONS

    def behaviour_episode(self, key) -> dict[str, jax.Array]:
        """One episode of the guessing behaviour: observations [T, 4], actions, rewards [T]."""
        env, params = self.env, self.env.default_params
        reset_key, guess_key, key = jax.random.split(key, 3)
        obs, state = env.reset_env(reset_key, params)
        guess = jnp.where(jax.random.bernoulli(guess_key), UP, DOWN)

        def step(carry, key):
            obs, state = carry
            action = jnp.where(state.pos == params.maze_length - 1, guess, RIGHT)
            next_obs, state, reward, _, _, _ = env.step_env(key, state, action[None], params)
            return (next_obs, state), (obs, action, reward)

        _, (observations, actions, rewards) = jax.lax.scan(step, (obs, state), jax.random.split(key, self.maze_length))
        return {"observations": observations, "actions": actions, "rewards": rewards}

    @functools.cached_property
    def splits(self) -> dict[str, dict[str, jax.Array]]:
        """Per split, the offline episodes (time-major: observations [T, N, 4], actions, rewards [T, N])."""
        total = self.episodes + self.test_episodes
        data = jax.jit(jax.vmap(self.behaviour_episode, out_axes=1))(
            jax.random.split(jax.random.PRNGKey(self.seed), total)
        )
        return {
            "train": jax.tree.map(lambda a: a[:, : self.episodes], data),
            "test": jax.tree.map(lambda a: a[:, self.episodes :], data),
        }

    def step_inputs(self, observations, returns_to_go, actions_before) -> jax.Array:
        """[T, B, input_size]: observation, return to come / success reward, previous action one-hot."""
        return jnp.concatenate([observations, returns_to_go[..., None] / self.success_reward, actions_before], axis=-1)

    def sample(self, key, split: str = "train", state=None) -> SequenceBatch:
        check_split(split)
        data = self.splits[split]
        rows = jax.random.randint(key, (self.batch_size,), 0, data["actions"].shape[1])
        observations, actions, rewards = (
            data["observations"][:, rows],
            data["actions"][:, rows],
            data["rewards"][:, rows],
        )
        returns_to_go = jnp.cumsum(rewards[::-1], axis=0)[::-1]
        inputs = self.step_inputs(observations, returns_to_go, previous_actions(actions, ACTIONS))
        return SequenceBatch(inputs, actions, jnp.ones(actions.shape, bool))

    def play(
        self, logits_fn: Callable[[jax.Array], jax.Array], key, num_episodes: int, target_return: float
    ) -> jax.Array:
        """Returns [num_episodes] of the model acting greedily in fresh mazes from ``target_return``:
        at step t ``logits_fn(inputs [T, B, input_size])`` (zeros after t) gives logits [T, B, 4],
        and the return to come drops by each reward received. Pure and jittable."""
        env, params, length = self.env, self.env.default_params, self.maze_length
        keys = jax.random.split(key, num_episodes + 1)
        obs, states = jax.vmap(env.reset_env, in_axes=(0, None))(keys[1:], params)
        inputs = jnp.zeros((length, num_episodes, self.input_size))
        first_action = jnp.zeros((num_episodes, ACTIONS))

        def step(carry, t):
            obs, states, inputs, to_go, action_before, key = carry
            inputs = inputs.at[t].set(self.step_inputs(obs, to_go, action_before))
            action = jnp.argmax(logits_fn(inputs)[t], axis=-1)
            key, step_key = jax.random.split(key)
            obs, states, reward, _, _, _ = jax.vmap(env.step_env, in_axes=(0, 0, 0, None))(
                jax.random.split(step_key, num_episodes), states, action[:, None], params
            )
            return (obs, states, inputs, to_go - reward, jax.nn.one_hot(action, ACTIONS), key), reward

        init = (obs, states, inputs, jnp.full((num_episodes,), target_return), first_action, keys[0])
        _, rewards = jax.lax.scan(step, init, jnp.arange(length))
        return rewards.sum(0)


register("tmaze-returns", TMazeReturns)
