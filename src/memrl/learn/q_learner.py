"""What the Q-learners (R2D2, PQN) share: the agent's policy head gives Q-values, and the actor acts
ε-greedily on them, each environment with its own ε (``exploration``)."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from memrl.learn.actor import ActorCriticLearner, RunnerState
from memrl.learn.q_learning_config import QLearningConfig


class QLearner(ActorCriticLearner):
    """An ``ActorCriticLearner`` whose agent's policy outputs are Q-values over one discrete action."""

    config: QLearningConfig

    def __init__(self, config: QLearningConfig):
        super().__init__(config)
        (self.num_actions,) = self.env.action_dims

    def exploration(self, runner: RunnerState) -> jax.Array:
        """ε of every environment [num_envs] at this point of the run."""
        raise NotImplementedError

    def explore(self, runner, action, logp, q, key):
        """``env_step``'s hook: environment i's action at random with probability ε_i, else greedy."""
        greedy = self.agent.actions.greedy(q)
        random = jax.random.randint(key, greedy.shape, 0, self.num_actions)
        exploring = jax.random.uniform(jax.random.fold_in(key, 1), (self.config.num_envs,)) < self.exploration(runner)
        return runner, jnp.where(exploring[:, None], random, greedy), logp, None, None
