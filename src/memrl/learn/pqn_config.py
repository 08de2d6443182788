"""Configuration of PQN runs (parallelised Q-learning). Every field is a flag of ``memrl train pqn``."""

from __future__ import annotations

import dataclasses
from typing import ClassVar, Literal

from memrl.learn.minibatch_epochs_config import MinibatchEpochsConfig
from memrl.learn.q_learning_config import QLearningConfig
from memrl.settings import Count, Fraction, Positive


@dataclasses.dataclass(frozen=True, eq=False)  # equal when recorded alike: ConfigRecord.__eq__
class PQNConfig(QLearningConfig, MinibatchEpochsConfig):
    """Parallelised Q-learning (Gallici et al. 2024, "Simplifying Deep Temporal Difference
    Learning"): no replay and no target network. Each update acts ``rollout_len`` ε-greedy steps in
    each of ``num_envs`` environments, then learns Peng's Q(λ) returns of that rollout in epochs of
    minibatches of whole environments, as PPO learns its advantages; LayerNorm in the agent's layers
    keeps the bootstrapped targets stable. The agent's policy head gives the Q-values.

    The defaults are those of the official recurrent PQN on bsuite's MemoryChain (purejaxql's
    ``pqn_rnn_memory_chain.yaml``: 32 environments × 128 steps, 4 epochs of 16 minibatches, RAdam at
    1e-3 with the gradient's norm clipped at 10, γ 0.99, λ 0.95, ε from 1 to 0.01 over the first tenth
    of the updates, LayerNorm). Its network is two LayerNorm layers of 256 before a GRU that is also
    given the previous action, and the Q-values straight from the GRU: ``--encoder-widths 256 256
    --head-widths --feed-prev-action core:gru``. Not taken from it: its 4 steps of the previous rollout
    prepended to each learnt sequence (here a sequence starts from the carry stored at the rollout's
    first step, as PPO's do)."""

    learner: ClassVar[str] = "pqn"
    lr: Positive = 1e-3
    """learning rate (the official recurrent PQN's)"""
    max_grad_norm: Positive | None = 10.0
    """clip of the global gradient norm (the official recurrent PQN's)"""
    layer_norm: bool = True
    """normalise every encoder and head layer before its ReLU (LayerNorm: PQN's network, which learns
    without a target network)"""
    rollout_len: Count = 128
    """steps per environment per update; the last step of each rollout only bootstraps (the Q(λ)
    returns need the step after)"""
    gamma: Fraction = 0.99
    num_minibatches: Count = 16
    """minibatches per epoch, split by environment so sequences stay whole"""
    optimizer: Literal["radam", "adam"] = "radam"
    """the gradient step: "radam" (rectified Adam, Liu et al. 2020: PQN's) or "adam", each with ε ``adam_eps``"""
    td_lambda: Fraction = 0.95
    """λ of the Q(λ) returns: 0 is the one-step target, 1 the return to the rollout's end"""
    epsilon_start: Fraction = 1.0
    """the probability of a random action at the first update"""
    epsilon_finish: Fraction = 0.01
    """the probability of a random action once the decay is over"""
    epsilon_decay: Fraction = 0.1
    """the fraction of the run's updates over which ε falls linearly from ``epsilon_start`` to ``epsilon_finish``"""
