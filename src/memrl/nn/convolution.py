"""Convolutions written as patch extraction + one matrix product.

They compute exactly what ``flax.linen.Conv`` / ``ConvTranspose`` compute with SAME padding (the
tests compare them), but XLA:CPU runs convolution ops several times slower inside loop bodies
(jax-ml/jax#12868) and a whole training run is one loop; slices, reshapes and matmuls do not
suffer from that, on any backend.
"""

from __future__ import annotations

import jax.numpy as jnp
import flax.linen as nn


def same_padding(size: int, kernel: int, stride: int) -> tuple[int, int, int]:
    """(output size, padding before, padding after) of SAME padding along one axis."""
    out = -(-size // stride)
    total = max((out - 1) * stride + kernel - size, 0)
    return out, total // 2, total - total // 2


def patches(x, kernel: int, stride: int, pad_value: float = 0.0):
    """[N, H, W, C] -> [N, H', W', kernel·kernel·C] SAME-padded patches, (row, col, channel) order."""
    (h_out, h_lo, h_hi), (w_out, w_lo, w_hi) = same_padding(x.shape[1], kernel, stride), same_padding(x.shape[2], kernel, stride)
    x = jnp.pad(x, ((0, 0), (h_lo, h_hi), (w_lo, w_hi), (0, 0)), constant_values=pad_value)
    if kernel == stride:  # non-overlapping: a reshape
        n, c = x.shape[0], x.shape[-1]
        x = x.reshape(n, h_out, kernel, w_out, kernel, c).transpose(0, 1, 3, 2, 4, 5)
        return x.reshape(n, h_out, w_out, kernel * kernel * c)
    rows = [x[:, i : i + (h_out - 1) * stride + 1 : stride, j : j + (w_out - 1) * stride + 1 : stride] for i in range(kernel) for j in range(kernel)]
    return jnp.concatenate(rows, axis=-1)


def max_pool(x, window: int, stride: int):
    """``nn.max_pool(x, (w, w), (s, s), padding="SAME")``: padding never wins the max."""
    p = patches(x, window, stride, pad_value=-jnp.inf)
    return p.reshape(*p.shape[:-1], window * window, x.shape[-1]).max(axis=-2)


def upsample(x, factor: int, size: tuple[int, int]):
    """Nearest-neighbour upsampling by ``factor``, cropped to ``size`` (the transpose of a pooling)."""
    x = jnp.repeat(jnp.repeat(x, factor, axis=1), factor, axis=2)
    return x[:, : size[0], : size[1]]


class PatchConv(nn.Module):
    """``nn.Conv(features, (k, k), (s, s), padding="SAME")`` with the same kernel [k, k, C, F]."""

    features: int
    kernel: int
    stride: int = 1

    @nn.compact
    def __call__(self, x):
        channels = x.shape[-1]
        kernel = self.param("kernel", nn.initializers.lecun_normal(), (self.kernel, self.kernel, channels, self.features))
        bias = self.param("bias", nn.initializers.zeros, (self.features,))
        return patches(x, self.kernel, self.stride) @ kernel.reshape(-1, self.features) + bias


class PatchConvTranspose(nn.Module):
    """``nn.ConvTranspose(features, (k, k), (s, s), padding="SAME")`` (no kernel transpose, flax's
    default) for stride 1 (then a convolution with the same kernel) or for kernel == stride (each
    input cell paints its own k×k block with the kernel flipped)."""

    features: int
    kernel: int
    stride: int = 1

    @nn.compact
    def __call__(self, x):
        if self.stride not in (1, self.kernel):
            raise ValueError(f"transposed convolution needs stride 1 or stride == kernel, got kernel {self.kernel}, stride {self.stride}")
        channels = x.shape[-1]
        kernel = self.param("kernel", nn.initializers.lecun_normal(), (self.kernel, self.kernel, channels, self.features))
        bias = self.param("bias", nn.initializers.zeros, (self.features,))
        if self.stride == 1:
            return patches(x, self.kernel, 1) @ kernel.reshape(-1, self.features) + bias
        n, h, w, _ = x.shape
        blocks = jnp.einsum("nhwc,ijcf->nhiwjf", x, kernel[::-1, ::-1]).reshape(n, h * self.kernel, w * self.kernel, self.features)
        return blocks + bias
