"""Configuration of R2D2 runs (recurrent replay distributed DQN). Every field is a flag of ``memrl train r2d2``."""

from __future__ import annotations

import dataclasses
from typing import ClassVar

from memrl.learn.q_learning_config import QLearningConfig
from memrl.settings import Count, Fraction, NonNegative, NonNegativeInt, Positive


@dataclasses.dataclass(frozen=True, eq=False)  # equal when recorded alike: ConfigRecord.__eq__
class R2D2Config(QLearningConfig):
    """Recurrent Q-learning from replayed sequences with stored states and burn-in (Kapturowski et
    al. 2019). Each update acts ``rollout_len`` ε-greedy steps in each of ``num_envs`` environments and
    stores one sequence per environment, ``burn_in`` + ``rollout_len`` steps long (the previous
    update's last ``burn_in`` steps first: consecutive sequences overlap by ``burn_in``), with the
    core's carry at its first step; then ``learn_steps`` gradient steps, each on ``batch_size``
    sequences drawn by priority. The agent's policy head gives the Q-values.

    The defaults are the paper's (Table 2: Adam at 1e-4 with ε 1e-3, n = 5, γ = 0.997, sequences of
    80 with a burn-in of 40, priority exponent 0.9 with η = 0.9, importance exponent 0.6, target
    network every 2,500 gradient steps, value rescaling ε 1e-3, Ape-X's per-actor ε with base 0.4 and
    α = 7) but for the replay's size and the batch, which are sized for one machine."""

    learner: ClassVar[str] = "r2d2"
    lr: Positive = 1e-4
    """learning rate (R2D2's Table 2)"""
    adam_eps: Positive = 1e-3
    """Adam's ε (R2D2's Table 2)"""
    max_grad_norm: Positive | None = None
    """clip of the global gradient norm (None: no clipping; R2D2's Table 2 gives none)"""

    num_envs: Count = 16
    """parallel environments per seed (the paper's actors)"""
    rollout_len: Count = 40
    """steps per environment per update: the steps of each stored sequence after its burn-in"""
    gamma: Fraction = 0.997
    burn_in: NonNegativeInt = 40
    """steps at the start of each stored sequence that only refresh the core's carry (no loss)"""
    stored_state: bool = True
    """start each replayed sequence from the carry stored with it (R2D2); False: from a zero carry
    (the paper's zero-state baseline)"""
    replay_size: Count = 4096
    """sequences the replay holds (the oldest is overwritten first)"""
    learn_start: Count = 256
    """sequences in the replay before the first gradient step"""
    batch_size: Count = 32
    """sequences per gradient step"""
    learn_steps: Count = 1
    """gradient steps per update; the replay ratio is learn_steps × batch_size / num_envs
    (sequences replayed per sequence stored)"""
    n_step: Count = 5
    """steps of reward before the bootstrap in the Q-learning target"""
    target_period: Count = 2500
    """gradient steps between copies of the online network into the target network"""
    priority_exponent: Fraction = 0.9
    """α: a sequence is drawn with probability ∝ priority^α"""
    importance_exponent: Fraction = 0.6
    """β: each drawn sequence's loss is weighted by (N · P(i))^−β, over the batch's largest"""
    priority_eta: Fraction = 0.9
    """η: a sequence's priority is η max_t |δ_t| + (1 − η) mean_t |δ_t|"""
    value_rescaling: bool = True
    """learn h(Q) with h(x) = sign(x)(sqrt(|x| + 1) − 1) + εx instead of Q (R2D2's targets)"""
    value_rescaling_eps: Positive = 1e-3
    """ε of the value rescaling"""
    epsilon: Fraction = 0.4
    """base of the per-environment exploration: environment i acts at random with probability
    ε^(1 + α i / (num_envs − 1)) (Ape-X)"""
    epsilon_alpha: NonNegative = 7.0
    """α of the per-environment exploration"""

    def validate(self):
        super().validate()
        if self.burn_in > self.rollout_len:
            raise ValueError(
                f"burn_in ({self.burn_in}) must be at most rollout_len ({self.rollout_len}): the burn-in is the previous "
                "update's last steps"
            )
        if self.replay_size < max(self.num_envs, self.learn_start):
            raise ValueError(
                f"replay_size ({self.replay_size}) must hold at least num_envs ({self.num_envs}) and learn_start "
                f"({self.learn_start}) sequences"
            )
        if self.batch_size > self.learn_start:
            raise ValueError(f"batch_size ({self.batch_size}) must be at most learn_start ({self.learn_start})")
        return self

    @property
    def sequence_length(self) -> int:
        """Steps of a stored sequence: the burn-in, then the steps learnt from."""
        return self.burn_in + self.rollout_len
