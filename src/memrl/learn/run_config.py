"""Settings every learner shares; each learner's config subclasses ``RunConfig``. Every field is a
command-line flag of ``memrl train``."""

from __future__ import annotations

import dataclasses
import json
from typing import ClassVar

from memrl.settings import check_positive


class ConfigRecord:
    """Seeds, the metrics a learner names, and the JSON record of a frozen config dataclass (every
    learner's config). ``step_metric`` counts the steps (environment steps, sequences),
    ``score_metric`` is drawn in the curves and the progress bar, ``final_metric`` summarises a run
    (mean over its last updates); the labels name them in tables and figures."""

    seed: int
    seeds: int
    step_metric: ClassVar[str] = "env_steps"
    step_label: ClassVar[str] = "environment steps"
    score_metric: ClassVar[str] = "episode_return"
    score_label: ClassVar[str] = "episode return"
    final_metric: ClassVar[str] = "episode_return"
    final_label: ClassVar[str] = "final return"
    POSITIVE_INTS: ClassVar[tuple[str, ...]] = ()
    UNIT_INTERVAL: ClassVar[tuple[str, ...]] = ()
    POSITIVE: ClassVar[tuple[str, ...]] = ()
    NON_NEGATIVE: ClassVar[tuple[str, ...]] = ()

    def check_ranges(self) -> None:
        """Refuse fields outside the ranges the class lists, naming the field and the range."""
        check_positive(self, *self.POSITIVE_INTS)
        for name in self.UNIT_INTERVAL:
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name} must lie in [0.0, 1.0], got {getattr(self, name)}")
        for name in self.POSITIVE:
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be > 0, got {getattr(self, name)}")
        for name in self.NON_NEGATIVE:
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")

    def seed_list(self) -> list[int]:
        """The seeds of the run."""
        return [self.seed + i for i in range(self.seeds)]

    def to_json(self) -> str:
        """The config as sorted, indented JSON."""
        return json.dumps(dataclasses.asdict(self), indent=2, sort_keys=True)

    @classmethod
    def from_dict(cls, data: dict):
        """The config from a JSON record; unknown fields are refused, lists become tuples."""
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown {cls.__name__} fields {sorted(unknown)}")
        data = dict(data)
        for f in dataclasses.fields(cls):
            if f.name in data and isinstance(data[f.name], list):
                data[f.name] = tuple(data[f.name])
        return cls(**data)


@dataclasses.dataclass(frozen=True)
class RunConfig(ConfigRecord):
    """One environment, one memory core, one actor-critic agent, several seeds."""

    learner: ClassVar[str]

    env: str = "tmaze/T-LN"
    """registered environment name (see ``memrl list``)"""
    core: str = "amrl-max"
    """registered memory core name (see ``memrl list``)"""
    core_args: dict[str, int | float | bool | str] = dataclasses.field(default_factory=dict)
    """core hyperparameters, e.g. ``hidden 128 straight_through False``"""
    env_args: dict[str, int | float | bool | str] = dataclasses.field(default_factory=dict)
    """environment settings, e.g. ``maze_length 200`` or (Ballet) ``observation cells``"""
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
    lr: float = 5e-4
    gamma: float = 0.98
    policy_coef: float = 1.0
    """weight of the policy-gradient loss (HTM's "V-trace loss weight")"""
    value_coef: float = 0.5
    """weight of the value (baseline) loss ½ mean (target − v)²"""
    entropy_coef: float = 0.01
    max_grad_norm: float = 0.5
    encoder_widths: tuple[int, ...] = (256, 256)
    """observation encoder (AMRL's FF1)"""
    head_widths: tuple[int, ...] = (256,)
    """layers between the core and the policy/value outputs (AMRL's FF2)"""
    feed_prev_action: bool = False
    feed_prev_reward: bool = False
    encoder: str = "mlp"
    """observation encoder: "mlp" (flatten, token parts one-hot), "conv" (CNN on the image part,
    word-embedding LSTM on token parts, then the ``encoder_widths`` MLP; the HTM agent) or "resnet"
    (the same with the IMPALA ResNet on the image part)"""
    conv_channels: tuple[int, ...] = (16, 32, 32)
    """channels of the conv layers, or of the ResNet stacks"""
    conv_kernels: tuple[int, ...] = (9, 3, 3)
    """convolution kernel sizes (use 1 first for Ballet's compact ``cells`` observation)"""
    conv_strides: tuple[int, ...] = (9, 1, 1)
    """(kernels and strides are the "conv" encoder's; the ResNet's are fixed: 3×3, pooling stride 2)"""
    conv_coordinates: bool = False
    """tag the "conv" encoder's last feature grid with two channels of x and y positions in [-1, 1] (the RMC's BoxWorld agent)"""
    reconstruction_coef: float = 0.0
    """weight of the self-supervised loss of decoding the current image and tokens from the memory"""
    updates_per_chunk: int = 10
    """updates per compiled chunk; metrics, progress and checkpoints happen between chunks"""

    POSITIVE_INTS: ClassVar[tuple[str, ...]] = ("seeds", "total_steps", "num_envs", "rollout_len", "updates_per_chunk")
    UNIT_INTERVAL: ClassVar[tuple[str, ...]] = ("gamma",)
    POSITIVE: ClassVar[tuple[str, ...]] = ("lr", "max_grad_norm")
    NON_NEGATIVE: ClassVar[tuple[str, ...]] = ("policy_coef", "value_coef", "entropy_coef", "reconstruction_coef")

    def __post_init__(self):
        from memrl import cores, envs
        from memrl.settings import check_settings

        if self.env not in envs.names():
            raise ValueError(f"unknown env {self.env!r}; known: {', '.join(envs.names())}")
        if self.core not in cores.names():
            raise ValueError(f"unknown core {self.core!r}; known: {', '.join(cores.names())}")
        check_settings(envs.ENVS, self.env, self.env_args, "--env-args")
        check_settings(cores.CORES, self.core, self.core_args, "--core-args")
        try:
            envs.make(self.env, **self.env_args)
            cores.make(self.core, **self.core_args)
        except TypeError as err:
            raise ValueError(str(err)) from None
        from memrl.agents.actor_critic import ENCODERS

        if self.encoder not in ENCODERS:
            raise ValueError(f"encoder must be one of {ENCODERS}, got {self.encoder!r}")
        if not len(self.conv_channels) == len(self.conv_kernels) == len(self.conv_strides):
            raise ValueError("conv_channels, conv_kernels and conv_strides need one entry per layer each")
        if self.encoder == "resnet" and (self.conv_kernels, self.conv_strides) != (RunConfig.conv_kernels, RunConfig.conv_strides):
            raise ValueError("conv_kernels and conv_strides set the 'conv' encoder; the 'resnet' encoder uses 3×3 convolutions and stride-2 pooling")
        if self.conv_coordinates and self.encoder != "conv":
            raise ValueError(f"conv_coordinates tags the 'conv' encoder's features; encoder is {self.encoder!r}")
        self.check_ranges()
        if self.total_steps < self.steps_per_update:
            raise ValueError(f"total_steps ({self.total_steps}) is less than one update (num_envs * rollout_len = {self.steps_per_update})")

    @property
    def steps_per_update(self) -> int:
        """Environment steps collected per update."""
        return self.num_envs * self.rollout_len

    @property
    def num_updates(self) -> int:
        """Updates in a run of ``total_steps``."""
        return self.total_steps // self.steps_per_update
