"""memrl's SAME convolutions equal flax's Conv / ConvTranspose with the same parameters, values and gradients."""

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from memrl.nn.convolution import SameConv, SameConvTranspose, max_pool, upsample


def perturbed(params):
    return jax.tree.map(lambda a: a + 0.1 * jax.random.normal(jax.random.PRNGKey(5), a.shape), params)


@pytest.mark.parametrize("kernel, stride, size", [(1, 1, 11), (3, 1, 11), (5, 1, 7), (3, 2, 11), (9, 9, 99)])
def test_same_conv_equals_flax_conv(kernel, stride, size):
    x = jax.random.normal(jax.random.PRNGKey(0), (2, size, size, 3))
    reference = nn.Conv(4, (kernel, kernel), (stride, stride), padding="SAME")
    params = perturbed(reference.init(jax.random.PRNGKey(1), x))
    np.testing.assert_allclose(SameConv(4, kernel, stride).apply(params, x), reference.apply(params, x), atol=1e-5)


@pytest.mark.parametrize("kernel, height, width", [(3, 7, 7), (2, 6, 9), (4, 5, 8), (5, 11, 6)])
def test_same_conv_gradients_equal_flax_conv_gradients(kernel, height, width):
    """The hand-written gradient of the stride-1 convolution (odd and even kernels, non-square
    images) against JAX's own derivative of flax's Conv."""
    x = jax.random.normal(jax.random.PRNGKey(0), (3, height, width, 5))
    reference = nn.Conv(4, (kernel, kernel), padding="SAME")
    params = perturbed(reference.init(jax.random.PRNGKey(1), x))

    def loss(module):
        return lambda params, x: jnp.sum(jnp.sin(module.apply(params, x)))

    expected = jax.grad(loss(reference), (0, 1))(params, x)
    got = jax.grad(loss(SameConv(4, kernel)), (0, 1))(params, x)
    jax.tree.map(lambda g, e: np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-5), got, expected)


@pytest.mark.parametrize("kernel, stride", [(1, 1), (3, 1), (9, 9)])
def test_same_conv_transpose_equals_flax_conv_transpose(kernel, stride):
    x = jax.random.normal(jax.random.PRNGKey(0), (2, 11, 11, 5))
    reference = nn.ConvTranspose(4, (kernel, kernel), (stride, stride), padding="SAME")
    params = perturbed(reference.init(jax.random.PRNGKey(1), x))
    np.testing.assert_allclose(
        SameConvTranspose(4, kernel, stride).apply(params, x), reference.apply(params, x), atol=1e-5
    )


def test_unsupported_transpose_stride_is_refused():
    with pytest.raises(ValueError, match="stride 1 or stride == kernel"):
        SameConvTranspose(4, 3, 2).init(jax.random.PRNGKey(0), np.ones((1, 5, 5, 2)))


@pytest.mark.parametrize("size", [99, 11, 6])
def test_max_pool_equals_flax_max_pool(size):
    x = jax.random.normal(jax.random.PRNGKey(0), (2, size, size, 3)) - 3.0  # negative: zero padding would win
    np.testing.assert_array_equal(max_pool(x, 3, 2), nn.max_pool(x, (3, 3), (2, 2), padding="SAME"))


def test_upsample_repeats_cells_and_crops():
    x = np.arange(4.0).reshape(1, 2, 2, 1)
    np.testing.assert_array_equal(upsample(x, 2, (3, 4))[0, ..., 0], [[0, 0, 1, 1], [0, 0, 1, 1], [2, 2, 3, 3]])
