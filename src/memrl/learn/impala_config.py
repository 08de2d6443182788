"""Configuration of IMPALA-style V-trace actor-critic runs. Every field is a flag of ``memrl train impala``."""

from __future__ import annotations

import dataclasses
from typing import ClassVar, Literal

from memrl.learn.run_config import RunConfig


@dataclasses.dataclass(frozen=True)
class ImpalaConfig(RunConfig):
    """V-trace actor-critic (Espeholt et al. 2018) with one gradient step per batch of
    ``num_envs`` × ``rollout_len`` steps. The optimiser defaults are the EPN paper's RMSprop
    (Ritter et al. 2021: ε 1e-4, momentum 0, decay 0.99); ``max_grad_norm`` clips the gradient of
    the loss summed over the batch, as IMPALA's learner sums it (default 40)."""

    learner: ClassVar[str] = "impala"
    DEFAULTS: ClassVar[dict] = dict(max_grad_norm=40.0)

    optimizer: Literal["rmsprop", "adam"] = "rmsprop"
    rmsprop_decay: float = 0.99
    rmsprop_eps: float = 1e-4
    """added inside the square root, as TensorFlow's RMSprop does"""
    rmsprop_momentum: float = 0.0
    rmsprop_initial_scale: float = 0.0
    """the starting value of RMSprop's average of squared gradients: 0 as optax, 1 as TensorFlow 1's
    RMSPropOptimizer, which the IMPALA-trained papers used (with 0, the first updates at decay 0.99
    are about 10 times larger)"""
    rho_bar: float = 1.0
    """clip of the importance weights in the V-trace targets and the policy gradient"""
    c_bar: float = 1.0
    """clip of the trace-cutting weights"""
    policy_lag: int = 0
    """act with the parameters of this many updates ago (a distributed IMPALA's actor lag)"""

    UNIT_INTERVAL: ClassVar[tuple[str, ...]] = RunConfig.UNIT_INTERVAL + ("rmsprop_decay",)
    POSITIVE: ClassVar[tuple[str, ...]] = RunConfig.POSITIVE + ("rmsprop_eps", "rho_bar", "c_bar")
    NON_NEGATIVE: ClassVar[tuple[str, ...]] = RunConfig.NON_NEGATIVE + ("rmsprop_momentum", "rmsprop_initial_scale")

    def validate(self):
        super().validate()
        if self.policy_lag < 0:  # its type and the optimizer's name: check_types
            raise ValueError(f"policy_lag must be a non-negative integer, got {self.policy_lag!r}")
        return self
