"""Configuration of recurrent PPO runs. Every field is a command-line flag of ``memrl train ppo``."""

from __future__ import annotations

import dataclasses
from typing import ClassVar

from memrl.learn.run_config import RunConfig
from memrl.settings import Count, Fraction, Positive, flag_of


@dataclasses.dataclass(frozen=True, eq=False)  # equal when recorded alike: ConfigRecord.__eq__
class PPOConfig(RunConfig):
    """Recurrent PPO on one environment with one memory core.

    The defaults are the env-parallel form of AMRL's PPO settings (γ = 0.98, lr 5e-4), scaled to
    batches a 2-core CPU handles quickly; ``amrl_reference()`` gives the paper's batch sizes. Adam's
    ε defaults to 1e-5, as in CleanRL's and Stable-Baselines3's PPO (and every PPO record so far);
    a core with tiny gradients at init (S6) needs 1e-8 (``--adam-eps``).
    """

    learner: ClassVar[str] = "ppo"
    adam_eps: Positive = 1e-5
    """Adam's ε: 1e-5, CleanRL's and Stable-Baselines3's for PPO (a core whose gradients start far
    below it, S6's, needs 1e-8: ``ConfigRecord.adam_eps``)"""

    num_minibatches: Count = 4
    """minibatches per epoch, split by environment so sequences stay whole"""
    update_epochs: Count = 4
    """passes over each batch"""
    gae_lambda: Fraction = 0.95
    clip_epsilon: Positive = 0.2
    """clip of the probability ratio in the policy loss"""
    value_clip: Positive | None = 0.2
    """clip of the value's change from the rollout's estimate in the value loss (PPO2's value
    clipping; None: unclipped; RLlib's ``vf_clip_param``, 10.0 in AMRL's runs)"""
    anneal_lr: bool = False
    """decay the learning rate linearly to 0 over the run's optimiser steps (updates × epochs ×
    minibatches), as CleanRL's, PureJaxRL's and XLand-MiniGrid's PPO do; False: constant"""
    advantage_normalization: str = "minibatch"
    """where advantages are standardised to mean 0, std 1: "minibatch" (each SGD minibatch, as
    CleanRL and PureJaxRL do) or "batch" (the whole update's batch once, as RLlib's PPO does)"""

    ADVANTAGE_NORMALIZATIONS: ClassVar[tuple[str, ...]] = ("minibatch", "batch")

    def validate(self):
        super().validate()
        if self.advantage_normalization not in self.ADVANTAGE_NORMALIZATIONS:
            raise ValueError(
                f"advantage_normalization must be one of {self.ADVANTAGE_NORMALIZATIONS}, "
                f"got {self.advantage_normalization!r} ({flag_of('advantage_normalization')})"
            )
        if self.num_envs % self.num_minibatches:
            raise ValueError(
                f"num_envs ({self.num_envs}) must be divisible by num_minibatches ({self.num_minibatches})"
            )
        return self

    @property
    def optimizer_steps(self) -> int:
        """Adam's steps in the whole run: one per minibatch of every epoch of every update."""
        return self.num_updates * self.update_epochs * self.num_minibatches

    @property
    def envs_per_minibatch(self) -> int:
        return self.num_envs // self.num_minibatches

    @property
    def minibatch_steps(self) -> int:
        """Environment steps per minibatch (whole environment sequences)."""
        return self.envs_per_minibatch * self.rollout_len


def amrl_reference(**overrides) -> PPOConfig:
    """AMRL's PPO settings in env-parallel form: 4000-step batches (20 envs x 200 steps),
    minibatches of 200 steps (one whole environment sequence), 30 SGD iterations, γ = 0.98."""
    settings = dict(num_envs=20, rollout_len=200, num_minibatches=20, update_epochs=30, gamma=0.98, lr=5e-4)
    settings.update(overrides)
    return PPOConfig(**settings)
