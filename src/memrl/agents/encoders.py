"""Observation encoders and their reconstruction decoders (HTM agent: Lampinen et al. 2021,
App. D.1-D.2; the decoders are the encoders' architectural transposes).

- ``ConvEncoder``: ReLU convolutions (SAME padding, ``nn/convolution.py``), (16, 32, 32) channels with kernels (9, 3, 3) and strides
  (9, 1, 1) by default (the 99×99 Ballet frame becomes an 11×11 grid), optionally tagged with x-y
  coordinate channels (the RMC's BoxWorld agent, Santoro et al. 2018, App. A.3), flattened.
- ``ResNetEncoder``: the IMPALA ResNet (Espeholt et al. 2018), the paper's ResNet option: per stack
  of ``channels``, a 3×3 convolution, 3×3 max-pooling with stride 2, and two residual blocks
  (ReLU, conv, ReLU, conv, add); a final ReLU, flattened. ``ResNetDecoder`` is its transpose.
- ``LanguageEncoder``: word embedding (32) -> one-layer LSTM (256), final output.
- ``ImageDecoder`` / ``LanguageDecoder``: from the memory output back to pixel logits / token logits.

Images given as uint8 are scaled to [0, 1]. Token parts are int32 arrays [..., L] (or [...] for a
single word), with a vocabulary size the environment declares (``token_vocab``).
"""

from __future__ import annotations

from collections.abc import Sequence

import flax.linen as nn
import jax
import jax.numpy as jnp
import optax

from memrl.nn.convolution import SameConv, SameConvTranspose, max_pool, same_padding, upsample
from memrl.nn.cross_entropy import sigmoid_cross_entropy


def as_unit_image(image: jax.Array) -> jax.Array:
    """Pixels in [0, 1]: uint8 frames are divided by 255, float ones kept."""
    return image.astype(jnp.float32) / 255.0 if image.dtype == jnp.uint8 else image.astype(jnp.float32)


def as_image_batch(image: jax.Array) -> tuple[jax.Array, tuple[int, ...]]:
    """(images [N, H, W, C] in [0, 1], the leading batch shape that was flattened into N)."""
    x = as_unit_image(image)
    return x.reshape((-1,) + x.shape[-3:]), x.shape[:-3]


def as_token_sequence(tokens: jax.Array, batch_ndim: int) -> jax.Array:
    """[..., L] int tokens: a single token per step becomes a sequence of one."""
    return tokens[..., None] if tokens.ndim == batch_ndim else tokens


CONV_MACS_LIMIT = 1e9
"""multiply-adds per observation above which a convolutional encoder is refused: the papers' take
under 0.1 billion, and a kernel as large as the image (SAME padding reads it whole at every
position, through patches of kernel² values each) took minutes to compile and seconds per step"""


def check_conv_cost(image_shape: tuple[int, int, int], channels, kernels, strides) -> None:
    """Refuse convolutions whose multiply-adds per observation of ``image_shape`` (H, W, C) exceed
    ``CONV_MACS_LIMIT``, naming each layer's share."""
    (height, width, depth), macs = image_shape, []
    for c, k, s in zip(channels, kernels, strides):
        height, width = same_padding(height, k, s)[0], same_padding(width, k, s)[0]
        macs.append(height * width * k * k * depth * c)
        depth = c
    if sum(macs) > CONV_MACS_LIMIT:
        layers = ", ".join(f"kernel {k} stride {s}: {m / 1e9:,.2f}" for k, s, m in zip(kernels, strides, macs))
        raise ValueError(
            f"the convolutions would take {sum(macs) / 1e9:,.1f} billion multiply-adds per {image_shape} observation "
            f"({layers}), more than {CONV_MACS_LIMIT / 1e9:g}: choose smaller kernels or larger strides "
            "(--conv-kernels, --conv-strides)"
        )


class ConvEncoder(nn.Module):
    """ReLU convolutions (SAME padding) of the given channels, kernels and strides, flattened; the
    HTM agent's defaults are the paper's (16, 32, 32) / (9, 3, 3) / (9, 1, 1)."""

    channels: Sequence[int] = (16, 32, 32)
    kernels: Sequence[int] = (9, 3, 3)
    strides: Sequence[int] = (9, 1, 1)
    coordinates: bool = False
    """append two channels holding each cell's x and y, evenly spaced in [-1, 1], to the last grid"""

    @nn.compact
    def __call__(self, image):
        x, batch = as_image_batch(image)
        check_conv_cost(x.shape[1:], self.channels, self.kernels, self.strides)
        for i, (c, k, s) in enumerate(zip(self.channels, self.kernels, self.strides)):
            x = nn.relu(SameConv(c, k, s, name=f"conv_{i}")(x))
        if self.coordinates:
            x = jnp.concatenate([x, coordinate_channels(x.shape[0], x.shape[1], x.shape[2])], axis=-1)
        return x.reshape(batch + (-1,))


def coordinate_channels(n: int, height: int, width: int) -> jax.Array:
    """[n, height, width, 2]: x (the column) then y (the row), each evenly spaced in [-1, 1]."""
    y, x = jnp.meshgrid(jnp.linspace(-1.0, 1.0, height), jnp.linspace(-1.0, 1.0, width), indexing="ij")
    return jnp.broadcast_to(jnp.stack([x, y], -1), (n, height, width, 2))


class ImageDecoder(nn.Module):
    """The transpose of ``ConvEncoder``: a linear map to the encoder's last feature grid, then
    transposed convolutions in reverse order, ending in logits of the image's shape."""

    image_shape: tuple[int, int, int]
    channels: Sequence[int] = (16, 32, 32)
    kernels: Sequence[int] = (9, 3, 3)
    strides: Sequence[int] = (9, 1, 1)

    @nn.compact
    def __call__(self, features):
        height, width, out_channels = self.image_shape
        scale = 1
        for s in self.strides:
            scale *= s
        grid = (-(-height // scale), -(-width // scale))
        batch = features.shape[:-1]
        x = nn.relu(
            nn.Dense(grid[0] * grid[1] * self.channels[-1], name="to_grid")(features.reshape((-1, features.shape[-1])))
        )
        x = x.reshape((-1, *grid, self.channels[-1]))
        outputs = list(self.channels[:-1])[::-1] + [out_channels]
        layers = list(zip(self.kernels, self.strides))[::-1]
        for i, (c, (k, s)) in enumerate(zip(outputs, layers)):
            x = SameConvTranspose(c, k, s, name=f"deconv_{i}")(x)
            if i < len(outputs) - 1:
                x = nn.relu(x)
        return x[:, :height, :width].reshape(batch + self.image_shape)


class ResidualBlock(nn.Module):
    """x + conv(relu(conv(relu(x)))) with 3×3 convolutions keeping the channels."""

    @nn.compact
    def __call__(self, x):
        y = SameConv(x.shape[-1], 3, name="conv_0")(nn.relu(x))
        return x + SameConv(x.shape[-1], 3, name="conv_1")(nn.relu(y))


class ResNetEncoder(nn.Module):
    """The IMPALA ResNet: per stack a 3×3 convolution, a 3×3 stride-2 max-pool and two residual
    blocks; ReLU and flatten at the end."""

    channels: Sequence[int] = (16, 32, 32)

    @nn.compact
    def __call__(self, image):
        x, batch = as_image_batch(image)
        for i, c in enumerate(self.channels):
            x = max_pool(SameConv(c, 3, name=f"conv_{i}")(x), 3, 2)
            x = ResidualBlock(name=f"residual_{i}_0")(x)
            x = ResidualBlock(name=f"residual_{i}_1")(x)
        return nn.relu(x).reshape(batch + (-1,))


class ResNetDecoder(nn.Module):
    """The transpose of ``ResNetEncoder``: a linear map to its last feature grid, then per stack in
    reverse order two residual blocks, 2× nearest-neighbour upsampling (the pooling's transpose)
    and a 3×3 convolution to the previous stack's channels, ending in logits of the image's shape."""

    image_shape: tuple[int, int, int]
    channels: Sequence[int] = (16, 32, 32)

    @nn.compact
    def __call__(self, features):
        height, width, out_channels = self.image_shape
        sizes = [(height, width)]
        for _ in self.channels:
            sizes.append((same_padding(sizes[-1][0], 3, 2)[0], same_padding(sizes[-1][1], 3, 2)[0]))
        batch = features.shape[:-1]
        grid = sizes[-1]
        x = nn.Dense(grid[0] * grid[1] * self.channels[-1], name="to_grid")(features.reshape((-1, features.shape[-1])))
        x = x.reshape((-1, *grid, self.channels[-1]))
        outputs = list(self.channels[:-1])[::-1] + [out_channels]
        for i, c in enumerate(outputs):
            x = ResidualBlock(name=f"residual_{i}_0")(x)
            x = ResidualBlock(name=f"residual_{i}_1")(x)
            x = upsample(nn.relu(x), 2, sizes[len(outputs) - 1 - i])
            x = SameConv(c, 3, name=f"conv_{i}")(x)
        return x.reshape(batch + self.image_shape)


class LanguageEncoder(nn.Module):
    vocab_size: int
    embed_dim: int = 32
    hidden: int = 256

    @nn.compact
    def __call__(self, tokens):
        """tokens [..., L] int -> [..., hidden]: the LSTM's output after the last word."""
        batch = tokens.shape[:-1]
        words = nn.Embed(self.vocab_size, self.embed_dim, name="embed")(tokens.reshape((-1, tokens.shape[-1])))
        lstm = nn.RNN(nn.OptimizedLSTMCell(self.hidden), name="lstm")
        return lstm(words)[:, -1].reshape(batch + (self.hidden,))


class LanguageDecoder(nn.Module):
    """An LSTM (``hidden``) fed the memory output at every position, then token logits."""

    vocab_size: int
    length: int
    hidden: int = 256

    @nn.compact
    def __call__(self, features):
        batch = features.shape[:-1]
        inputs = jnp.repeat(features.reshape((-1, 1, features.shape[-1])), self.length, axis=1)
        outputs = nn.RNN(nn.OptimizedLSTMCell(self.hidden), name="lstm")(inputs)
        return nn.Dense(self.vocab_size, name="logits")(outputs).reshape(batch + (self.length, self.vocab_size))


def image_reconstruction_loss(logits: jax.Array, image: jax.Array) -> jax.Array:
    """Sigmoid cross-entropy of pixel logits against the pixels in [0, 1], averaged per frame."""
    target = as_unit_image(image)
    return sigmoid_cross_entropy(logits, target).mean(axis=(-3, -2, -1))


def language_reconstruction_loss(logits: jax.Array, tokens: jax.Array) -> jax.Array:
    """Softmax cross-entropy of token logits [..., L, V] against tokens [..., L], summed over L."""
    return optax.softmax_cross_entropy_with_integer_labels(logits, tokens).sum(axis=-1)
