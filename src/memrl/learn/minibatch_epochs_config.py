"""What the configs of the learners that pass over each update's rollout in epochs of minibatches
share (PPO, PQN): the minibatches split by environment, the epochs, the learning rate's schedule."""

from __future__ import annotations

import dataclasses

from memrl.learn.run_config import RunConfig
from memrl.settings import Count


@dataclasses.dataclass(frozen=True, eq=False)  # equal when recorded alike: ConfigRecord.__eq__
class MinibatchEpochsConfig(RunConfig):
    """A run that learns from each rollout in ``update_epochs`` passes of ``num_minibatches`` gradient
    steps, each on the whole sequences of ``num_envs / num_minibatches`` environments."""

    num_minibatches: Count = 4
    """minibatches per epoch, split by environment so sequences stay whole"""
    update_epochs: Count = 4
    """passes over each batch"""
    anneal_lr: bool = False
    """decay the learning rate linearly to 0 over the run's optimiser steps (updates × epochs ×
    minibatches), as CleanRL's, PureJaxRL's and XLand-MiniGrid's PPO do; False: constant"""

    def validate(self):
        """As ``RunConfig.validate``, and minibatches of whole environments."""
        super().validate()
        if self.num_envs % self.num_minibatches:
            raise ValueError(
                f"num_envs ({self.num_envs}) must be divisible by num_minibatches ({self.num_minibatches})"
            )
        return self

    @property
    def optimizer_steps(self) -> int:
        """The optimiser's steps in the whole run: one per minibatch of every epoch of every update."""
        return self.num_updates * self.update_epochs * self.num_minibatches

    @property
    def envs_per_minibatch(self) -> int:
        """Environments per minibatch (``num_envs / num_minibatches``)."""
        return self.num_envs // self.num_minibatches

    @property
    def minibatch_steps(self) -> int:
        """Environment steps per minibatch (whole environment sequences)."""
        return self.envs_per_minibatch * self.rollout_len
