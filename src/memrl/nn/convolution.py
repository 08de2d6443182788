"""SAME convolutions that stay fast inside XLA:CPU loop bodies (a whole training run is one loop).

They compute what ``flax.linen.Conv`` / ``ConvTranspose`` compute with SAME padding (the tests
compare them). Inside a loop body XLA:CPU runs the kernel gradient that JAX derives for a
convolution some 100 times slower than outside (jax-ml/jax#12868; 4.7 s against 83 ms for a 3×3,
32-channel layer on 2,048 7×7 grids), while forward convolutions in NHWC / HWIO layout run at full
speed there. So:

- stride 1 (the common case): ``same_convolution``, a convolution op whose gradient is given by hand:
  the input gradient as another forward convolution in that layout (the flipped kernel), the kernel
  gradient as k·k matrix products, one per kernel offset, of the shifted input's [N·H·W, C] rows by
  the output gradient's [N·H·W, F] (2.4-4 times faster on a CPU core than XLA's convolution with
  batch and channels swapped for the 2×2 layers of the RMC's agents, 1.2-1.5 times for HTM's 3×3).
  No patch tensor k·k times the input is written, which on a CPU is memory-bound;
- kernel == stride: non-overlapping patches, a reshape, and one matrix product;
- other strides: patches (shifted slices) and one matrix product.
"""

from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp


def same_padding(size: int, kernel: int, stride: int) -> tuple[int, int, int]:
    """(output size, padding before, padding after) of SAME padding along one axis."""
    out = -(-size // stride)
    total = max((out - 1) * stride + kernel - size, 0)
    return out, total // 2, total - total // 2


def patches(x, kernel: int, stride: int, pad_value: float = 0.0):
    """[N, H, W, C] -> [N, H', W', kernel·kernel·C] SAME-padded patches, (row, col, channel) order."""
    (h_out, h_lo, h_hi), (w_out, w_lo, w_hi) = (
        same_padding(x.shape[1], kernel, stride),
        same_padding(x.shape[2], kernel, stride),
    )
    x = jnp.pad(x, ((0, 0), (h_lo, h_hi), (w_lo, w_hi), (0, 0)), constant_values=pad_value)
    if kernel == stride:  # non-overlapping: a reshape
        n, c = x.shape[0], x.shape[-1]
        x = x.reshape(n, h_out, kernel, w_out, kernel, c).transpose(0, 1, 3, 2, 4, 5)
        return x.reshape(n, h_out, w_out, kernel * kernel * c)
    rows = [
        x[:, i : i + (h_out - 1) * stride + 1 : stride, j : j + (w_out - 1) * stride + 1 : stride]
        for i in range(kernel)
        for j in range(kernel)
    ]
    return jnp.concatenate(rows, axis=-1)


CONVOLUTION_LAYOUT = ("NHWC", "HWIO", "NHWC")


def _forward_convolution(x, kernel, padding):
    return jax.lax.conv_general_dilated(x, kernel, (1, 1), padding, dimension_numbers=CONVOLUTION_LAYOUT)


def _same_padding_pairs(kernel: int) -> tuple[tuple[int, int], tuple[int, int]]:
    _, lo, hi = same_padding(1, kernel, 1)
    return (lo, hi), (lo, hi)


@jax.custom_vjp
def same_convolution(x, kernel):
    """[N, H, W, C] ⋆ [k, k, C, F] -> [N, H, W, F]: stride 1, SAME padding, no bias."""
    return _forward_convolution(x, kernel, _same_padding_pairs(kernel.shape[0]))


def _same_convolution_forward(x, kernel):
    return same_convolution(x, kernel), (x, kernel)


def _same_convolution_backward(residuals, dy):
    """dx = dy ⋆ (the kernel flipped in space, input and output swapped), padded the other way;
    dk[i, j] = x_pad[:, i:i+H, j:j+W]ᵀ dy, each a [C, N·H·W] by [N·H·W, F] matrix product."""
    x, kernel = residuals
    k, n, h, w, c = kernel.shape[0], *x.shape
    (lo, hi), _ = _same_padding_pairs(k)
    dx = _forward_convolution(dy, kernel[::-1, ::-1].transpose(0, 1, 3, 2), ((hi, lo), (hi, lo)))
    x_pad = jnp.pad(x, ((0, 0), (lo, hi), (lo, hi), (0, 0)))
    rows = dy.reshape(n * h * w, -1)
    dk = [[x_pad[:, i : i + h, j : j + w].reshape(n * h * w, c).T @ rows for j in range(k)] for i in range(k)]
    return dx, jnp.stack([jnp.stack(row) for row in dk])


same_convolution.defvjp(_same_convolution_forward, _same_convolution_backward)


def convolve(x, kernel, stride: int):
    """[N, H, W, C] ⋆ [k, k, C, F] with SAME padding and the given stride, no bias."""
    if stride == 1 and kernel.shape[0] > 1:
        return same_convolution(x, kernel)
    return patches(x, kernel.shape[0], stride) @ kernel.reshape(-1, kernel.shape[-1])


def max_pool(x, window: int, stride: int):
    """``nn.max_pool(x, (w, w), (s, s), padding="SAME")``: padding never wins the max."""
    p = patches(x, window, stride, pad_value=-jnp.inf)
    return p.reshape(*p.shape[:-1], window * window, x.shape[-1]).max(axis=-2)


def upsample(x, factor: int, size: tuple[int, int]):
    """Nearest-neighbour upsampling by ``factor``, cropped to ``size`` (the transpose of a pooling)."""
    x = jnp.repeat(jnp.repeat(x, factor, axis=1), factor, axis=2)
    return x[:, : size[0], : size[1]]


class SameConv(nn.Module):
    """``nn.Conv(features, (k, k), (s, s), padding="SAME")`` with the same kernel [k, k, C, F]."""

    features: int
    kernel: int
    stride: int = 1

    @nn.compact
    def __call__(self, x):
        channels = x.shape[-1]
        kernel = self.param(
            "kernel", nn.initializers.lecun_normal(), (self.kernel, self.kernel, channels, self.features)
        )
        bias = self.param("bias", nn.initializers.zeros, (self.features,))
        return convolve(x, kernel, self.stride) + bias


class SameConvTranspose(nn.Module):
    """``nn.ConvTranspose(features, (k, k), (s, s), padding="SAME")`` (no kernel transpose, flax's
    default) for stride 1 (then a convolution with the same kernel) or for kernel == stride (each
    input cell paints its own k×k block with the kernel flipped)."""

    features: int
    kernel: int
    stride: int = 1

    @nn.compact
    def __call__(self, x):
        if self.stride not in (1, self.kernel):
            raise ValueError(
                f"transposed convolution needs stride 1 or stride == kernel, got kernel {self.kernel}, stride {self.stride}"
            )
        channels = x.shape[-1]
        kernel = self.param(
            "kernel", nn.initializers.lecun_normal(), (self.kernel, self.kernel, channels, self.features)
        )
        bias = self.param("bias", nn.initializers.zeros, (self.features,))
        if self.stride == 1:
            return convolve(x, kernel, 1) + bias
        n, h, w, _ = x.shape
        blocks = jnp.einsum("nhwc,ijcf->nhiwjf", x, kernel[::-1, ::-1]).reshape(
            n, h * self.kernel, w * self.kernel, self.features
        )
        return blocks + bias
