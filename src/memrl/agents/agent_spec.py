"""The actor-critic agent's settings around its memory core (``AgentSpec``): a plain dataclass,
importable without JAX, that run configs take as their own fields and ``ActorCritic`` takes whole."""

from __future__ import annotations

import dataclasses

from memrl.settings import Widths

ENCODERS = ("mlp", "conv", "resnet")
IMAGE_ENCODERS = ("conv", "resnet")  # an image part goes through a CNN, token parts through the language LSTM


@dataclasses.dataclass(frozen=True)
class AgentSpec:
    """The agent's layout around its memory core: the one declaration of these settings. A run's
    config (``learn.run_config.RunConfig``) takes its fields as its own (each one flag of ``memrl
    train``) and hands them to ``ActorCritic`` whole (``RunConfig.agent``)."""

    encoder_widths: Widths = (256, 256)
    """observation encoder (AMRL's FF1)"""
    head_widths: Widths = (256,)
    """ReLU layers between the core and the policy and value heads (AMRL's FF2)"""
    layer_norm: bool = False
    """normalise every encoder and head layer before its ReLU (LayerNorm: PQN's network, which learns
    without a target network)"""
    feed_prev_action: bool = False
    """also give the core the one-hot previous action (zeros at an episode start)"""
    feed_prev_reward: bool = False
    """also give the core the previous reward (zero at an episode start)"""
    encoder: str = "mlp"
    """observation encoder: "mlp" (flatten, token parts one-hot), "conv" (CNN on the image part,
    word-embedding LSTM on token parts, then the ``encoder_widths`` MLP; the HTM agent) or "resnet"
    (the same with the IMPALA ResNet on the image part)"""
    conv_channels: Widths = (16, 32, 32)
    """channels of the conv layers, or of the ResNet stacks"""
    conv_kernels: Widths = (9, 3, 3)
    """convolution kernel sizes (use 1 first for Ballet's compact ``cells`` observation)"""
    conv_strides: Widths = (9, 1, 1)
    """(kernels and strides are the "conv" encoder's; the ResNet's are fixed: 3×3, pooling stride 2)"""
    conv_coordinates: bool = False
    """tag the "conv" encoder's last feature grid with two channels of x and y positions in [-1, 1] (the RMC's BoxWorld agent)"""
    policy_init_scale: float = 0.01
    """gain of the policy layer's orthogonal initialisation (0.01: near-uniform first policies, as
    CleanRL's and most PPO agents start)"""
    separate_critic: bool = False
    """give the value its own encoder, memory core and head (as memorax, CleanRL's recurrent PPO and
    many papers do) instead of a value head on the policy's network"""

    def check_agent(self) -> None:
        """Refuse an encoder that does not exist and conv settings that disagree, naming them."""
        if self.encoder not in ENCODERS:
            raise ValueError(f"encoder must be one of {ENCODERS}, got {self.encoder!r}")
        if not len(self.conv_channels) == len(self.conv_kernels) == len(self.conv_strides):
            raise ValueError("conv_channels, conv_kernels and conv_strides need one entry per layer each")
        if self.encoder == "resnet" and (self.conv_kernels, self.conv_strides) != (
            AgentSpec.conv_kernels,
            AgentSpec.conv_strides,
        ):
            raise ValueError(
                "conv_kernels and conv_strides set the 'conv' encoder; the 'resnet' encoder uses 3×3 convolutions and stride-2 pooling"
            )
        if not self.policy_init_scale > 0:
            raise ValueError(f"policy_init_scale must be a number > 0, got {self.policy_init_scale!r}")
        if self.conv_coordinates and self.encoder != "conv":
            raise ValueError(f"conv_coordinates tags the 'conv' encoder's features; encoder is {self.encoder!r}")
