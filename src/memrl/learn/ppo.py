"""Recurrent PPO, end-to-end jitted (PureJaxRL style): rollout and update inside ``lax.scan``.

Each update collects ``rollout_len`` steps from ``num_envs`` environments, storing the core's carry
at the start of the segment. Losses unroll the core over the whole segment from that carry with
the stored reset flags (truncated BPTT); minibatches split by environment so sequences stay whole.

    trainer = PPO(config)
    runner = trainer.init(key)                      # RunnerState
    runner, metrics = trainer.run(runner, n)        # n updates, jittable, vmappable over seeds
    runner, metrics = make_train(config)(key)       # a whole run
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import optax
from flax import struct

from memrl import cores, envs
from memrl.agents import ActorCritic
from memrl.agents import distributions as dist
from memrl.learn.losses import clipped_value_loss, generalized_advantage_estimation, ppo_clipped_policy_loss
from memrl.learn.ppo_config import PPOConfig


@struct.dataclass
class RunnerState:
    """Everything a run needs to continue; a checkpoint is exactly this."""

    params: Any
    opt_state: Any
    env_state: Any
    obs: Any
    carry: Any
    prev_action: jax.Array  # [E, components]
    prev_reward: jax.Array  # [E]
    reset: jax.Array  # [E] the next step starts an episode
    episode_return: jax.Array  # [E] running return of the current episodes
    key: jax.Array
    update: jax.Array  # updates done


class Transition(NamedTuple):
    obs: Any
    prev_action: jax.Array
    prev_reward: jax.Array
    reset: jax.Array
    action: jax.Array
    logp: jax.Array
    value: jax.Array
    reward: jax.Array
    done: jax.Array


class PPO:
    """Builds the pure functions of a recurrent PPO run from a ``PPOConfig``."""

    def __init__(self, config: PPOConfig):
        self.config = config
        self.env = envs.make(config.env, **config.env_args)
        self.env_params = self.env.default_params
        self.agent = ActorCritic(
            core=cores.make(config.core, **config.core_args),
            action_dims=self.env.action_dims,
            encoder_widths=config.encoder_widths,
            head_widths=config.head_widths,
            feed_prev_action=config.feed_prev_action,
            feed_prev_reward=config.feed_prev_reward,
        )
        self.optimizer = optax.chain(
            optax.clip_by_global_norm(config.max_grad_norm), optax.adam(config.lr, eps=1e-5)
        )

    def init(self, key) -> RunnerState:
        c = self.config
        key, init_key, env_key = jax.random.split(key, 3)
        obs, env_state = jax.vmap(self.env.reset, (0, None))(jax.random.split(env_key, c.num_envs), self.env_params)
        carry = self.agent.initialize_carry((c.num_envs,))
        prev_action = jnp.zeros((c.num_envs, len(self.env.action_dims)), jnp.int32)
        prev_reward = jnp.zeros((c.num_envs,))
        reset = jnp.ones((c.num_envs,), bool)
        params = self.agent.init(init_key, carry, obs, prev_action, prev_reward, reset)
        return RunnerState(
            params=params, opt_state=self.optimizer.init(params), env_state=env_state, obs=obs, carry=carry,
            prev_action=prev_action, prev_reward=prev_reward, reset=reset,
            episode_return=jnp.zeros((c.num_envs,)), key=key, update=jnp.zeros((), jnp.int32),
        )

    def _env_step(self, runner: RunnerState, _):
        key, act_key, env_key = jax.random.split(runner.key, 3)
        carry, (logits, value) = self.agent.apply(
            runner.params, runner.carry, runner.obs, runner.prev_action, runner.prev_reward, runner.reset
        )
        action = dist.sample(act_key, logits, self.env.action_dims)
        logp = dist.log_prob(logits, action, self.env.action_dims)
        env_keys = jax.random.split(env_key, self.config.num_envs)
        obs, env_state, reward, done, _ = jax.vmap(self.env.step, (0, 0, 0, None))(
            env_keys, runner.env_state, action, self.env_params
        )
        episode_return = runner.episode_return + reward
        transition = Transition(runner.obs, runner.prev_action, runner.prev_reward, runner.reset, action, logp, value, reward, done)
        finished = (done, episode_return)
        runner = runner.replace(
            key=key, carry=carry, obs=obs, env_state=env_state, prev_action=action, prev_reward=reward,
            reset=done, episode_return=jnp.where(done, 0.0, episode_return),
        )
        return runner, (transition, finished)

    def _loss(self, params, initial_carry, batch: Transition, advantages, targets):
        c = self.config
        _, (logits, values) = self.agent.apply(
            params, initial_carry, batch.obs, batch.prev_action, batch.prev_reward, batch.reset,
            method=self.agent.unroll,
        )
        logp = dist.log_prob(logits, batch.action, self.env.action_dims)
        normalized = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
        flat = lambda x: x.reshape(-1)  # noqa: E731  (losses take one stream; [T, B] -> [T*B])
        policy_loss = ppo_clipped_policy_loss(flat(logp), flat(batch.logp), flat(normalized), c.clip_epsilon)
        value_loss = clipped_value_loss(flat(values), flat(batch.value), flat(targets), c.clip_epsilon)
        entropy = dist.entropy(logits, self.env.action_dims).mean()
        total = policy_loss + c.value_coef * value_loss - c.entropy_coef * entropy
        approx_kl = jnp.mean(batch.logp - logp)
        return total, {"policy_loss": policy_loss, "value_loss": value_loss, "entropy": entropy, "approx_kl": approx_kl}

    def update(self, runner: RunnerState, _=None):
        """One PPO update: a rollout, GAE, then epochs of minibatch SGD. Returns (runner, metrics)."""
        c = self.config
        initial_carry = runner.carry
        runner, (traj, (done, returns)) = jax.lax.scan(self._env_step, runner, None, c.rollout_len)
        _, (_, last_value) = self.agent.apply(
            runner.params, runner.carry, runner.obs, runner.prev_action, runner.prev_reward, runner.reset
        )
        discount = c.gamma * (1.0 - traj.done)
        next_values = jnp.concatenate([traj.value[1:], last_value[None]], axis=0)
        gae = jax.vmap(generalized_advantage_estimation, in_axes=(1, 1, 1, 1, None), out_axes=1)
        advantages = gae(traj.reward, discount, traj.value, next_values, c.gae_lambda)
        targets = advantages + traj.value

        def epoch(carry, _):
            params, opt_state, key = carry
            key, perm_key = jax.random.split(key)
            order = jax.random.permutation(perm_key, c.num_envs).reshape(c.num_minibatches, c.envs_per_minibatch)

            def minibatch(carry, idx):
                params, opt_state = carry
                take = lambda x: jnp.take(x, idx, axis=1)  # noqa: E731  time-major: envs on axis 1
                grads, info = jax.grad(self._loss, has_aux=True)(
                    params, jax.tree.map(lambda x: x[idx], initial_carry), jax.tree.map(take, traj),
                    take(advantages), take(targets),
                )
                updates, opt_state = self.optimizer.update(grads, opt_state, params)
                return (optax.apply_updates(params, updates), opt_state), info

            (params, opt_state), info = jax.lax.scan(minibatch, (params, opt_state), order)
            return (params, opt_state, key), info

        key, epoch_key = jax.random.split(runner.key)
        (params, opt_state, _), info = jax.lax.scan(epoch, (runner.params, runner.opt_state, epoch_key), None, c.update_epochs)
        runner = runner.replace(params=params, opt_state=opt_state, key=key, update=runner.update + 1)
        episodes = done.sum()
        metrics = {
            "env_steps": runner.update * c.steps_per_update,
            "episode_return": jnp.where(episodes > 0, jnp.sum(returns * done) / jnp.maximum(episodes, 1), jnp.nan),
            "episodes": episodes,
            **jax.tree.map(jnp.mean, info),
        }
        return runner, metrics

    def evaluate(self, params, key, num_steps: int):
        """Act with ``params`` (sampling) in fresh environments for ``num_steps`` steps.
        Returns (done [T, E], episode return at each done [T, E]); no learning."""
        runner = self.init(key).replace(params=params)
        _, (_, (done, returns)) = jax.lax.scan(self._env_step, runner, None, num_steps)
        return done, returns

    def run(self, runner: RunnerState, num_updates: int):
        """``num_updates`` updates in one ``lax.scan``; metrics are stacked over updates."""
        return jax.lax.scan(self.update, runner, None, num_updates)


def make_train(config: PPOConfig):
    """``train(key) -> (RunnerState, metrics)`` for a whole run of ``config.num_updates`` updates."""
    trainer = PPO(config)

    def train(key):
        return trainer.run(trainer.init(key), config.num_updates)

    return train
