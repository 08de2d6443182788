"""Recurrent actor-critic: encoder (FF1) -> memory core -> head (FF2) -> policy outputs and value.

The policy head parametrises the environment's action distribution (``distributions.for_env``): a
categorical's logits per discrete component, or a Gaussian's means and log standard deviations for
continuous actions. With ``feed_prev_action`` / ``feed_prev_reward`` the core input also holds the
previous action (one-hot per discrete component; continuous ones scaled to [-1, 1] where bounded)
and the previous reward (zeros at an episode start, so nothing leaks across episodes).
Observations may be pytrees. With ``encoder="mlp"`` their leaves are flattened (token parts
one-hot) and joined; with ``encoder="conv"`` or ``"resnet"`` (the HTM agent) the image parts
(those with three trailing axes: height, width, channels) go through one shared CNN and token parts
through a word-embedding LSTM (``agents/encoders.py``) before the MLP. With ``reconstruct``,
``unroll`` also returns the self-supervised loss of decoding, from the memory output, every part of
the current observation that the encoders read as an image (whatever its name) or as tokens
(HTM App. A.1, D.4).

With ``separate_critic`` the value comes from a network of its own (encoder, core and head of the
same sizes, reading the same inputs; its carry beside the policy's: {"actor", "critic"}) and the
policy's network has no value head: the two-network agent of memorax, CleanRL's recurrent PPO and
many papers.

A core with ``named_inputs`` (EPN) embeds its inputs itself: it gets
``{"observation", "goal", "prev_action"}`` from a dict observation with a ``"goal"`` part, flattened,
or, with an image encoder, with image parts through the shared CNN; the MLP encoder is not used.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import flax.linen as nn
import jax
import jax.numpy as jnp

from memrl.agents.agent_spec import IMAGE_ENCODERS, AgentSpec
from memrl.agents.distributions import Distribution
from memrl.agents.encoders import (
    ConvEncoder,
    ImageDecoder,
    LanguageDecoder,
    LanguageEncoder,
    ResNetDecoder,
    ResNetEncoder,
    as_token_sequence,
    image_reconstruction_loss,
    language_reconstruction_loss,
)
from memrl.cores.base import MemoryCore


class MLP(nn.Module):
    """ReLU layers of the given widths (an empty tuple is the identity); with ``layer_norm`` each
    layer is ReLU(LN(Wx + b)), as PQN's network (Gallici et al. 2024)."""

    widths: Sequence[int]
    layer_norm: bool = False

    @nn.compact
    def __call__(self, x):
        for i, width in enumerate(self.widths):
            x = nn.Dense(width, name=f"dense_{i}")(x)
            if self.layer_norm:
                x = nn.LayerNorm(name=f"norm_{i}")(x)
            x = nn.relu(x)
        return x


def split_observation(obs, batch_ndim: int, encoder: str, token_vocab: dict[str, int]) -> tuple[dict, dict, dict]:
    """({image part: image}, {token part: tokens}, the other parts) of an observation (a dict, or one
    array: the part "observation"); parts are images when ``encoder`` is an image encoder and they
    have three trailing axes (height, width, channels) after ``batch_ndim`` batch axes."""
    parts = obs if isinstance(obs, dict) else {"observation": obs}
    tokens = {k: v for k, v in parts.items() if k in token_vocab}
    images = {
        k: v
        for k, v in parts.items()
        if k not in token_vocab and encoder in IMAGE_ENCODERS and v.ndim == batch_ndim + 3
    }
    rest = {k: v for k, v in parts.items() if k not in token_vocab and k not in images}
    return images, tokens, rest


def flatten_observation(obs, batch_ndim: int) -> jax.Array:
    leaves = jax.tree.leaves(obs)
    return jnp.concatenate([leaf.reshape(leaf.shape[:batch_ndim] + (-1,)).astype(jnp.float32) for leaf in leaves], -1)


class ActorCritic(nn.Module):
    core: MemoryCore
    actions: Distribution
    """the distribution of the environment's actions (``distributions.for_env``): the policy head's size"""
    spec: AgentSpec = AgentSpec()
    token_vocab: tuple[tuple[str, int], ...] = ()  # (observation part, vocabulary size) of token parts
    reconstruct: bool = False
    critic_only: bool = False
    """(the separate critic itself: a value head and no policy head)"""

    def initialize_carry(self, batch_shape):
        carry = self.core.initialize_carry(jax.random.PRNGKey(0), batch_shape)
        return {"actor": carry, "critic": carry} if self.spec.separate_critic else carry

    def _critic(self) -> ActorCritic:
        """The separate critic: this agent's sizes, its own parameters (``critic``), no decoder."""
        return self.clone(
            parent=self,
            core=self.core.clone(),
            spec=dataclasses.replace(self.spec, separate_critic=False),
            critic_only=True,
            reconstruct=False,
            name="critic",
        )

    def _core_input(self, obs, prev_action, prev_reward, reset, batch_ndim):
        starts = reset[..., None]
        prev_action_features = jnp.where(starts, 0.0, self.actions.features(prev_action))
        if getattr(self.core, "named_inputs", False):
            if not isinstance(obs, dict) or "goal" not in obs:
                raise ValueError(f"core {type(self.core).__name__} needs dict observations with a 'goal' part")
            rest = {k: v for k, v in obs.items() if k != "goal"}
            if self.spec.encoder in IMAGE_ENCODERS:
                image_encoder = self._image_encoder()
                observation = self._encode(rest, batch_ndim, image_encoder)
                goal = self._encode({"goal": obs["goal"]}, batch_ndim, image_encoder)
            else:
                observation, goal = flatten_observation(rest, batch_ndim), flatten_observation(obs["goal"], batch_ndim)
            return {"observation": observation, "goal": goal, "prev_action": prev_action_features}
        image_encoder = self._image_encoder() if self.spec.encoder in IMAGE_ENCODERS else None
        parts = [
            MLP(self.spec.encoder_widths, self.spec.layer_norm, name="encoder")(
                self._encode(obs, batch_ndim, image_encoder)
            )
        ]
        if self.spec.feed_prev_action:
            parts.append(prev_action_features)
        if self.spec.feed_prev_reward:
            parts.append(jnp.where(starts, 0.0, prev_reward[..., None]))
        return jnp.concatenate(parts, axis=-1)

    def _split(self, obs, batch_ndim):
        return split_observation(obs, batch_ndim, self.spec.encoder, dict(self.token_vocab))

    def _image_encoder(self) -> nn.Module:
        """The CNN shared by every image part."""
        if self.spec.encoder == "resnet":
            return ResNetEncoder(self.spec.conv_channels, name="image_encoder")
        return ConvEncoder(
            self.spec.conv_channels,
            self.spec.conv_kernels,
            self.spec.conv_strides,
            self.spec.conv_coordinates,
            name="image_encoder",
        )

    def _encode(self, obs, batch_ndim, image_encoder):
        self.spec.check_agent()  # an agent built without a run config is checked too
        vocab = dict(self.token_vocab)
        images, tokens, rest = self._split(obs, batch_ndim)
        if self.spec.encoder in IMAGE_ENCODERS and not images:
            parts = list(obs) if isinstance(obs, dict) else ["observation"]
            raise ValueError(
                f"encoder {self.spec.encoder!r} needs an image part ([height, width, channels]) in the observation; its parts are {parts}"
            )
        features = [flatten_observation(rest, batch_ndim)] if rest else []
        features += [image_encoder(image) for _, image in sorted(images.items())]
        for name, words in sorted(tokens.items()):
            words = as_token_sequence(words, batch_ndim)
            if self.spec.encoder in IMAGE_ENCODERS:
                features.append(LanguageEncoder(vocab[name], name=f"{name}_encoder")(words))
            else:
                features.append(flatten_observation(jax.nn.one_hot(words, vocab[name]), batch_ndim))
        return jnp.concatenate(features, axis=-1)

    def _reconstruction_loss(self, ys, obs, batch_ndim):
        """Per-step loss of decoding the current image parts and tokens from the memory output ``ys``
        (a decoder per part, ``<part>_decoder``)."""
        images, tokens, _ = self._split(obs, batch_ndim)
        loss = jnp.zeros(ys.shape[:-1])
        for name, image in sorted(images.items()):
            if self.spec.encoder == "resnet":
                decoder = ResNetDecoder(image.shape[batch_ndim:], self.spec.conv_channels, name=f"{name}_decoder")
            else:
                decoder = ImageDecoder(
                    image.shape[batch_ndim:],
                    self.spec.conv_channels,
                    self.spec.conv_kernels,
                    self.spec.conv_strides,
                    name=f"{name}_decoder",
                )
            loss = loss + image_reconstruction_loss(decoder(ys), image)
        vocab = dict(self.token_vocab)
        for name, words in sorted(tokens.items()):
            words = as_token_sequence(words, batch_ndim)
            logits = LanguageDecoder(vocab[name], words.shape[-1], name=f"{name}_decoder")(ys)
            loss = loss + language_reconstruction_loss(logits, words)
        return loss

    def _heads(self, y):
        """(logits, value) of the memory output ``y``; None for a head this network does not have."""
        y = MLP(self.spec.head_widths, self.spec.layer_norm, name="head")(y)
        logits = (
            None
            if self.critic_only
            else nn.Dense(
                self.actions.num_outputs,
                kernel_init=nn.initializers.orthogonal(self.spec.policy_init_scale),
                name="policy",
            )(y)
        )
        value = (
            None
            if self.spec.separate_critic
            else nn.Dense(1, kernel_init=nn.initializers.orthogonal(1.0), name="value")(y)[..., 0]
        )
        return logits, value

    @nn.compact
    def __call__(self, carry, obs, prev_action, prev_reward, reset):
        """One step for a batch [B]: returns (carry, (logits [B, actions.num_outputs], value [B]))."""
        if self.spec.separate_critic:
            critic_carry, (_, value) = self._critic()(carry["critic"], obs, prev_action, prev_reward, reset)
            carry = carry["actor"]
        x = self._core_input(obs, prev_action, prev_reward, reset, batch_ndim=1)
        carry, y = self.core(carry, x, reset)
        logits, own_value = self._heads(y)
        if self.spec.separate_critic:
            return {"actor": carry, "critic": critic_carry}, (logits, value)
        return carry, (logits, own_value)

    @nn.compact
    def unroll(self, carry, obs, prev_action, prev_reward, resets):
        """Time-major [T, B] inputs; the same (logits, values) as stepping ``__call__``, plus the
        per-step reconstruction loss [T, B] (zeros without ``reconstruct``). Initialising with this
        method creates every parameter, decoders included."""
        if self.spec.separate_critic:
            critic_carry, (_, values, _) = self._critic().unroll(carry["critic"], obs, prev_action, prev_reward, resets)
            carry = carry["actor"]
        x = self._core_input(obs, prev_action, prev_reward, resets, batch_ndim=2)
        carry, ys = self.core.unroll(carry, x, resets)
        logits, own_values = self._heads(ys)
        if self.spec.separate_critic:
            carry = {"actor": carry, "critic": critic_carry}
        else:
            values = own_values
        reconstruction = self._reconstruction_loss(ys, obs, 2) if self.reconstruct else jnp.zeros(values.shape)
        return carry, (logits, values, reconstruction)
