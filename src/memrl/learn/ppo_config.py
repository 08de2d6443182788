"""Configuration of recurrent PPO runs. Every field is a command-line flag of ``memrl train``."""

from __future__ import annotations

import dataclasses
import json
from typing import Any


@dataclasses.dataclass(frozen=True)
class PPOConfig:
    """Recurrent PPO on one environment with one memory core.

    The defaults are the env-parallel form of AMRL's PPO settings (γ = 0.98, lr 5e-4), scaled to
    batches a 2-core CPU handles quickly; ``amrl_reference()`` gives the paper's batch sizes.
    """

    env: str = "tmaze/T-LN"
    """registered environment name (see ``memrl list``)"""
    core: str = "amrl-max"
    """registered memory core name (see ``memrl list``)"""
    core_args: dict[str, int | float | bool | str] = dataclasses.field(default_factory=dict)
    """core hyperparameters, e.g. ``hidden 128 straight_through False``"""
    env_args: dict[str, int | float | bool | str] = dataclasses.field(default_factory=dict)
    """numeric environment params, e.g. ``maze_length 200``"""
    seed: int = 0
    """seed of the first run; the others use seed + 1, seed + 2, ..."""
    seeds: int = 1
    """number of independent seeds"""
    total_steps: int = 400_000
    """environment steps per seed"""
    num_envs: int = 32
    """parallel environments per seed"""
    rollout_len: int = 100
    """steps per environment per update (truncated-BPTT length)"""
    num_minibatches: int = 4
    """minibatches per epoch, split by environment so sequences stay whole"""
    update_epochs: int = 4
    """passes over each batch"""
    lr: float = 5e-4
    gamma: float = 0.98
    gae_lambda: float = 0.95
    clip_epsilon: float = 0.2
    value_coef: float = 0.5
    entropy_coef: float = 0.01
    max_grad_norm: float = 0.5
    encoder_widths: tuple[int, ...] = (256, 256)
    """observation encoder (AMRL's FF1)"""
    head_widths: tuple[int, ...] = (256,)
    """layers between the core and the policy/value outputs (AMRL's FF2)"""
    feed_prev_action: bool = False
    feed_prev_reward: bool = False
    updates_per_chunk: int = 10
    """updates per compiled chunk; metrics, progress and checkpoints happen between chunks"""

    def __post_init__(self):
        from memrl import cores, envs

        if self.env not in envs.names():
            raise ValueError(f"unknown env {self.env!r}; known: {', '.join(envs.names())}")
        if self.core not in cores.names():
            raise ValueError(f"unknown core {self.core!r}; known: {', '.join(cores.names())}")
        try:
            envs.make(self.env, **self.env_args)
            cores.make(self.core, **self.core_args)
        except TypeError as err:
            raise ValueError(str(err)) from None
        for name in ("seeds", "total_steps", "num_envs", "rollout_len", "num_minibatches", "update_epochs", "updates_per_chunk"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if self.num_envs % self.num_minibatches:
            raise ValueError(f"num_envs ({self.num_envs}) must be divisible by num_minibatches ({self.num_minibatches})")
        if self.total_steps < self.steps_per_update:
            raise ValueError(f"total_steps ({self.total_steps}) is less than one update (num_envs * rollout_len = {self.steps_per_update})")
        for name, low, high in (("gamma", 0.0, 1.0), ("gae_lambda", 0.0, 1.0)):
            if not low <= getattr(self, name) <= high:
                raise ValueError(f"{name} must lie in [{low}, {high}], got {getattr(self, name)}")
        for name in ("lr", "clip_epsilon", "max_grad_norm"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be > 0, got {getattr(self, name)}")
        for name in ("value_coef", "entropy_coef"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")

    @property
    def steps_per_update(self) -> int:
        return self.num_envs * self.rollout_len

    @property
    def num_updates(self) -> int:
        return self.total_steps // self.steps_per_update

    @property
    def envs_per_minibatch(self) -> int:
        return self.num_envs // self.num_minibatches

    def seed_list(self) -> list[int]:
        return [self.seed + i for i in range(self.seeds)]

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), indent=2, sort_keys=True)

    @classmethod
    def from_dict(cls, data: dict) -> "PPOConfig":
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown PPOConfig fields {sorted(unknown)}")
        data = dict(data)
        for name in ("encoder_widths", "head_widths"):
            if name in data:
                data[name] = tuple(data[name])
        return cls(**data)


def amrl_reference(**overrides) -> PPOConfig:
    """AMRL's PPO settings in env-parallel form: 4000-step batches (20 envs x 200 steps),
    minibatches of 200 steps (one whole environment sequence), 30 SGD iterations, γ = 0.98."""
    settings = dict(num_envs=20, rollout_len=200, num_minibatches=20, update_epochs=30, gamma=0.98, lr=5e-4)
    settings.update(overrides)
    return PPOConfig(**settings)
