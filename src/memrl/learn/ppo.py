"""Recurrent PPO, end-to-end jitted (PureJaxRL style): rollout and update inside ``lax.scan``.

Each update collects ``rollout_len`` steps from ``num_envs`` environments, computes GAE, and runs
``update_epochs`` passes of minibatch SGD; losses unroll the core over the whole segment from its
stored initial carry (truncated BPTT), and minibatches split by environment so sequences stay whole.

    trainer = PPO(config)
    runner = trainer.init(key)                      # RunnerState
    runner, metrics = trainer.run(runner, n)        # n updates, jittable, vmappable over seeds
    runner, metrics = learners.make_train(config)(key)  # a whole run
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from memrl.learn.actor import ActorCriticLearner, RunnerState, Segment, Transition
from memrl.learn.losses import clipped_value_loss, generalized_advantage_estimation, ppo_clipped_policy_loss
from memrl.learn.minibatch_epochs import minibatch_epochs
from memrl.learn.optimizers import make_optimizer
from memrl.learn.ppo_config import PPOConfig


def standardized(x):
    """x shifted and scaled to mean 0 and standard deviation 1 (PPO's advantage normalisation)."""
    return (x - x.mean()) / (x.std() + 1e-8)


class PPO(ActorCriticLearner):
    """The pure functions of a recurrent PPO run."""

    config: PPOConfig

    config_class = PPOConfig

    def __init__(self, config: PPOConfig):
        super().__init__(config)
        self.optimizer = make_optimizer(
            config.lr,
            config.max_grad_norm,
            adam_eps=config.adam_eps,
            decay_steps=config.optimizer_steps if config.anneal_lr else 0,
        )

    def init(self, key, params=None) -> RunnerState:
        return self.new_runner(key, self.optimizer, params)

    def _loss(self, params, initial_carry, batch: Transition, advantages, targets):
        c = self.config
        logits, values, reconstruction = self.unroll(params, initial_carry, batch)
        logp = self.agent.actions.log_prob(logits, batch.action)
        if c.advantage_normalization == "minibatch":
            advantages = standardized(advantages)
        flat = lambda x: x.reshape(-1)  # losses take one stream; [T, B] -> [T*B]
        policy_loss = ppo_clipped_policy_loss(flat(logp), flat(batch.logp), flat(advantages), c.clip_epsilon)
        value_clip = jnp.inf if c.value_clip is None else c.value_clip
        value_loss = clipped_value_loss(flat(values), flat(batch.value), flat(targets), value_clip)
        entropy = self.agent.actions.entropy(logits).mean()
        reconstruction = reconstruction.mean()
        total = self.total_loss(policy_loss, value_loss, entropy, reconstruction)
        approx_kl = jnp.mean(batch.logp - logp)
        return total, {
            "policy_loss": policy_loss,
            "value_loss": value_loss,
            "entropy": entropy,
            "approx_kl": approx_kl,
            "reconstruction_loss": reconstruction,
        }

    def act(self, runner: RunnerState):
        """A rollout with ``acting_params``, and the key of the update's minibatch orders."""
        runner, segment = self.rollout(runner, self.acting_params(runner))
        key, epoch_key = jax.random.split(runner.key)
        return runner.replace(key=key), segment, epoch_key

    def learn(self, runner: RunnerState, segment: Segment, epoch_key):
        """GAE, then epochs of minibatch SGD over ``segment``. Returns (runner, metrics)."""
        c = self.config
        traj = segment.transitions
        discount = c.gamma * (1.0 - traj.done)
        next_values = jnp.concatenate([traj.value[1:], segment.bootstrap_value[None]], axis=0)
        gae = jax.vmap(generalized_advantage_estimation, in_axes=(1, 1, 1, 1, None), out_axes=1)
        advantages = gae(c.reward_scale * traj.reward, discount, traj.value, next_values, c.gae_lambda)
        targets = advantages + traj.value
        if c.advantage_normalization == "batch":
            advantages = standardized(advantages)

        params, opt_state, info = minibatch_epochs(
            c,
            self.optimizer,
            lambda params, carry, data: self._loss(params, carry, *data),
            runner.params,
            runner.opt_state,
            epoch_key,
            segment.initial_carry,
            (traj, advantages, targets),
        )
        runner = self.after_learning(runner, params, opt_state)
        return runner, {**self.episode_metrics(runner, segment), **jax.tree.map(jnp.mean, info)}
