"""Configuration of recurrent PPO runs. Every field is a command-line flag of ``memrl train ppo``."""

from __future__ import annotations

import dataclasses
from typing import ClassVar

from memrl.learn.minibatch_epochs_config import MinibatchEpochsConfig
from memrl.settings import Fraction, Positive, flag_of


@dataclasses.dataclass(frozen=True, eq=False)  # equal when recorded alike: ConfigRecord.__eq__
class PPOConfig(MinibatchEpochsConfig):
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

    gae_lambda: Fraction = 0.95
    clip_epsilon: Positive = 0.2
    """clip of the probability ratio in the policy loss"""
    value_clip: Positive | None = 0.2
    """clip of the value's change from the rollout's estimate in the value loss (PPO2's value
    clipping; None: unclipped; RLlib's ``vf_clip_param``, 10.0 in AMRL's runs)"""
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
        return self


def amrl_reference(**overrides) -> PPOConfig:
    """AMRL's PPO settings in env-parallel form: 4000-step batches (20 envs x 200 steps),
    minibatches of 200 steps (one whole environment sequence), 30 SGD iterations, γ = 0.98."""
    settings = dict(num_envs=20, rollout_len=200, num_minibatches=20, update_epochs=30, gamma=0.98, lr=5e-4)
    settings.update(overrides)
    return PPOConfig(**settings)
