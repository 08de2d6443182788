"""The ConvLSTM core: with 1x1 kernels it is an LSTM per cell of the grid (NumPy reference)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from memrl import cores


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def test_one_by_one_kernels_give_an_lstm_per_cell():
    core = cores.make("conv-lstm", grid=3, channels=4, kernel=1)
    x = jax.random.normal(jax.random.PRNGKey(0), (2, 3 * 3 * 5))
    carry = jax.tree.map(lambda a: jax.random.normal(jax.random.PRNGKey(1), a.shape), core.initialize_carry(None, (2,)))
    params = core.init(jax.random.PRNGKey(2), carry, x, jnp.zeros((2,), bool))
    (c_new, h_new), y = core.apply(params, carry, x, jnp.zeros((2,), bool))
    kernel = np.asarray(params["params"]["gates"]["kernel"])[0, 0]  # [5 + 4, 16]
    bias = np.asarray(params["params"]["gates"]["bias"])
    c, h = (np.asarray(a) for a in carry)
    cells = np.asarray(x).reshape(2, 3, 3, 5)
    gates = np.concatenate([cells, h], -1) @ kernel + bias
    i, f, g, o = np.split(gates, 4, axis=-1)
    expected_c = sigmoid(f + 1.0) * c + sigmoid(i) * np.tanh(g)
    expected_h = sigmoid(o) * np.tanh(expected_c)
    np.testing.assert_allclose(c_new, expected_c, atol=1e-5)
    np.testing.assert_allclose(y, expected_h.reshape(2, -1), atol=1e-5)


def test_a_2x2_kernel_mixes_neighbouring_cells():
    core = cores.make("conv-lstm", grid=4, channels=2, kernel=2)
    carry = core.initialize_carry(None, (1,))
    x = jnp.zeros((1, 4, 4, 3)).at[0, 1, 1].set(1.0).reshape(1, -1)
    params = core.init(jax.random.PRNGKey(0), carry, x, jnp.zeros((1,), bool))
    _, y = core.apply(params, carry, x, jnp.zeros((1,), bool))
    _, y0 = core.apply(params, carry, jnp.zeros_like(x), jnp.zeros((1,), bool))
    changed = np.abs(np.asarray(y - y0)).reshape(4, 4, 2).sum(-1) > 0
    assert changed.sum() == 4 and changed[1, 1]  # SAME padding of an even kernel: the cell and three neighbours


def test_an_input_that_is_not_a_map_of_the_grid_is_refused():
    core = cores.make("conv-lstm", grid=3, channels=2)
    with pytest.raises(ValueError, match="not a multiple of 9"):
        core.init(jax.random.PRNGKey(0), core.initialize_carry(None, (1,)), jnp.zeros((1, 10)), jnp.zeros((1,), bool))
