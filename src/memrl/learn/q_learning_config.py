"""What the configs of the Q-learners (R2D2, PQN) share: the agent's policy head gives Q-values,
evaluation acts greedily on them, the actor-critic's loss weights are 0, one discrete action a step."""

from __future__ import annotations

import dataclasses
from typing import ClassVar

from memrl.learn.run_config import RunConfig
from memrl.settings import NonNegative, flag_of


@dataclasses.dataclass(frozen=True, eq=False)  # equal when recorded alike: ConfigRecord.__eq__
class QLearningConfig(RunConfig):
    """A run whose agent learns Q-values (its policy head's outputs) and acts on them."""

    GREEDY_ONLY: ClassVar[bool] = True
    policy_coef: NonNegative = 0.0
    """the actor-critic's policy-gradient weight: 0 (a Q-learner has no policy loss)"""
    value_coef: NonNegative = 0.0
    """the actor-critic's value-loss weight: 0 (the Q loss has weight 1)"""
    entropy_coef: NonNegative = 0.0
    """the actor-critic's entropy weight: 0"""

    def validate(self):
        """As ``RunConfig.validate``, and refuse the actor-critic's loss weights, a policy lag and
        actions other than one discrete choice a step."""
        super().validate()
        title = self.learner.upper()
        actor_critic = [name for name in ("policy_coef", "value_coef", "entropy_coef") if getattr(self, name) != 0]
        if actor_critic:
            raise ValueError(
                f"{title} learns Q-values alone: {', '.join(actor_critic)} weigh the actor-critic's losses and must be 0 "
                f"({', '.join(flag_of(name) for name in actor_critic)})"
            )
        if self.policy_lag:
            raise ValueError(
                f"policy_lag is the actor-critic learners' ({flag_of('policy_lag')}); {title} acts with its current network"
            )
        if self.env.action_bounds is not None or len(self.env.action_dims) != 1:
            raise ValueError(
                f"{title} takes one discrete action per step; {self.env_name} acts with "
                + (
                    "continuous actions"
                    if self.env.action_bounds is not None
                    else f"{len(self.env.action_dims)} components"
                )
            )
        return self
