"""PQN: parallelised Q-learning without replay or target network (Gallici et al. 2024), recurrent,
for any registered core, end-to-end jitted as PPO is.

Each update acts ε-greedily for ``rollout_len`` steps in every environment (ε the same in all,
falling linearly from ``epsilon_start`` to ``epsilon_finish`` over the first ``epsilon_decay`` of the
updates), then runs ``update_epochs`` passes of minibatch gradient steps over the rollout, split by
environment. For a minibatch, the online network unrolls from the carry stored at the rollout's
start, giving Q [T, B, A]; with its values held fixed as targets,

    G_t = r_t + γ (1 − done_t) [(1 − λ) max_a Q(s_{t+1}, a) + λ G_{t+1}],   G_{T−1} = max_a Q(s_{T−1}, a)
    L = mean_{t<T−1, b} ½ (Q(s_t, a_t) − G_t)²

(Peng's Q(λ), ``losses.q_lambda_returns``). Evaluation acts greedily (``PQNConfig.GREEDY_ONLY``).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from memrl.learn.actor import RunnerState, Segment, Transition
from memrl.learn.losses import q_lambda_returns
from memrl.learn.minibatch_epochs import minibatch_epochs
from memrl.learn.optimizers import make_optimizer
from memrl.learn.pqn_config import PQNConfig
from memrl.learn.q_learner import QLearner


class PQN(QLearner):
    """The pure functions of a PQN run."""

    config: PQNConfig

    config_class = PQNConfig

    def __init__(self, config: PQNConfig):
        super().__init__(config)
        self.optimizer = make_optimizer(
            config.lr,
            config.max_grad_norm,
            kind=config.optimizer,
            adam_eps=config.adam_eps,
            decay_steps=config.optimizer_steps if config.anneal_lr else 0,
        )

    def exploration(self, runner: RunnerState) -> jax.Array:
        """ε of this update, the same in every environment: linear from ``epsilon_start`` to
        ``epsilon_finish`` over the first ``epsilon_decay`` of the updates, then constant."""
        c = self.config
        progress = jnp.minimum(runner.update / max(c.epsilon_decay * c.num_updates, 1.0), 1.0)
        return jnp.full((c.num_envs,), c.epsilon_start + (c.epsilon_finish - c.epsilon_start) * progress)

    def init(self, key, params=None) -> RunnerState:
        """Fresh environments, zero carries, new parameters (or ``params``): PQN keeps nothing else."""
        return self.new_runner(key, self.optimizer, params)

    def act(self, runner: RunnerState):
        """An ε-greedy rollout, and the key of the update's minibatch orders."""
        runner, segment = self.rollout(runner, runner.params, teach=self.explore)
        key, epoch_key = jax.random.split(runner.key)
        return runner.replace(key=key), segment, epoch_key

    def _loss(self, params, initial_carry, batch: Transition):
        c = self.config
        q, _, reconstruction = self.unroll(params, initial_carry, batch)
        returns = jax.vmap(q_lambda_returns, in_axes=(1, 1, 1, None, None), out_axes=1)(
            c.reward_scale * batch.reward,
            batch.done.astype(jnp.float32),
            jax.lax.stop_gradient(q),
            c.gamma,
            c.td_lambda,
        )
        taken = jnp.take_along_axis(q, batch.action, axis=-1)[..., 0]
        q_loss = 0.5 * jnp.mean(jnp.square(taken[:-1] - returns))
        reconstruction = reconstruction.mean()
        total = q_loss + c.reconstruction_coef * reconstruction
        return total, {"q_loss": q_loss, "mean_q": taken.mean(), "reconstruction_loss": reconstruction}

    def learn(self, runner: RunnerState, segment: Segment, epoch_key):
        """Epochs of minibatch steps on the Q(λ) loss of ``segment``. Returns (runner, metrics)."""
        epsilon = self.exploration(runner)[0]
        params, opt_state, info = minibatch_epochs(
            self.config,
            self.optimizer,
            self._loss,
            runner.params,
            runner.opt_state,
            epoch_key,
            segment.initial_carry,
            segment.transitions,
        )
        runner = self.after_learning(runner, params, opt_state)
        return runner, {**self.episode_metrics(runner, segment), **jax.tree.map(jnp.mean, info), "epsilon": epsilon}
