"""Configuration of IMPALA-style V-trace actor-critic runs. Every field is a flag of ``memrl train impala``."""

from __future__ import annotations

import dataclasses
from typing import ClassVar, Literal

from memrl.learn.run_config import RunConfig
from memrl.settings import Fraction, NonNegative, NonNegativeInt, Positive


@dataclasses.dataclass(frozen=True, eq=False)  # equal when recorded alike: ConfigRecord.__eq__
class ImpalaConfig(RunConfig):
    """V-trace actor-critic (Espeholt et al. 2018) with one gradient step per batch of
    ``num_envs`` × ``rollout_len`` steps. The optimiser defaults are the EPN paper's RMSprop
    (Ritter et al. 2021: ε 1e-4, momentum 0, decay 0.99); ``max_grad_norm`` clips the gradient of
    the loss summed over the batch, as IMPALA's learner sums it (default 40)."""

    learner: ClassVar[str] = "impala"
    max_grad_norm: Positive | None = 40.0
    """clip of the global norm of the gradient of the loss summed over the batch, as IMPALA's learner
    sums it (None: no clipping)"""

    optimizer: Literal["rmsprop", "adam"] = "rmsprop"
    rmsprop_decay: Fraction = 0.99
    rmsprop_eps: Positive = 1e-4
    """added inside the square root, as TensorFlow's RMSprop does"""
    rmsprop_momentum: NonNegative = 0.0
    rmsprop_initial_scale: NonNegative = 0.0
    """the starting value of RMSprop's average of squared gradients: 0 as optax, 1 as TensorFlow 1's
    RMSPropOptimizer, which the IMPALA-trained papers used (with 0, the first updates at decay 0.99
    are about 10 times larger)"""
    rho_bar: Positive = 1.0
    """clip of the importance weights in the V-trace targets and the policy gradient"""
    c_bar: Positive = 1.0
    """clip of the trace-cutting weights"""
    teacher: str | None = None
    """a scripted policy of the environment (``envs/scripted_policy.py``: e.g. transition_planner on
    memory-planning/*) that acts for the first ``clone_updates`` updates while the agent learns its
    actions by cross-entropy through the same segmented unroll (behaviour cloning); V-trace after"""
    clone_updates: NonNegativeInt = 0
    """updates in which the agent clones ``teacher`` (its value still learns by V-trace, with the
    teacher taken as deterministic, weighted by ``clone_value_coef``)"""
    clone_value_coef: NonNegative | None = None
    """the value loss's weight while cloning (None: ``value_coef``, as after cloning); 0 lets the
    cross-entropy alone shape the memory: with the value loss at 0.5 an LSTM cloning the Minecraft
    maze's oracle stayed on the memory-less plateau on every seed tried, and with 0 it carried the
    indicator (docs/results/amrl.md)"""
    clone_decision_weight: Positive = 1.0
    """the weight, in the cloning cross-entropy, of the steps the teacher marks as its decisions
    (``ScriptedPolicy.decides``: Passive Visual Match's choice phase, object permanence's walk to a box
    after the instruction, word learning's test phase, Ballet's choice phase, the T-maze's junction),
    against 1 for every other step: where the decisions are a few steps of long episodes, the plain
    cross-entropy (1) leaves them a small share of each update, and a clone copies the walk long
    before the choice (docs/results/htm.md)"""
    agent_share: Fraction = 0.0
    """DAgger-style mixing while cloning (Ross et al. 2011): the probability that the agent's own
    action drives the environment, rising linearly from 0 at the first cloning update to this at the
    last, so that the agent meets the states its own mistakes lead to; it still learns the teacher's
    action at every step (0: the teacher always acts)"""

    def validate(self):
        super().validate()
        if (self.teacher is None) != (self.clone_updates == 0):
            raise ValueError(
                f"teacher and clone_updates go together (a teacher to clone for some updates), got teacher {self.teacher!r} "
                f"and clone_updates {self.clone_updates}"
            )
        if self.clone_value_coef is not None and self.teacher is None:
            raise ValueError(
                f"clone_value_coef ({self.clone_value_coef}) weighs the value loss while cloning: give a teacher"
            )
        if self.agent_share and self.teacher is None:
            raise ValueError(
                f"agent_share ({self.agent_share}) mixes the agent into a teacher's cloning: give a teacher"
            )
        if self.teacher is not None:
            if self.policy_lag:
                raise ValueError("a teacher acts while the agent clones it: policy_lag must be 0 with a teacher")
            from memrl.envs.scripted_policy import scripted_policy

            policy = scripted_policy(self.env_name, self.env, self.teacher)
            if self.clone_decision_weight != 1.0 and policy.decides is None:
                raise ValueError(
                    f"clone_decision_weight ({self.clone_decision_weight}) weighs the steps a teacher marks as its "
                    f"decisions; {self.env_name}'s {self.teacher!r} marks none"
                )
        elif self.clone_decision_weight != 1.0:
            raise ValueError(
                f"clone_decision_weight ({self.clone_decision_weight}) weighs a teacher's decisions while cloning: give a teacher"
            )
        return self
