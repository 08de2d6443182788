"""AMRL's aggregators and straight-through gradients, against plain NumPy."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from memrl import cores
from memrl.cores.amrl import aggregate


def run_aggregator(kind, a, straight_through):
    """Outputs of AGG over a [T, D] from a zero carry."""

    def body(carry, inputs):
        total, count = carry
        count = count + 1.0
        total, out = aggregate(kind, total, count, inputs, straight_through)
        return (total, count), out

    return jax.lax.scan(body, (jnp.zeros(a.shape[1:]), jnp.zeros(())), a)[1]


@pytest.mark.parametrize("straight_through", [False, True])
def test_forward_values_match_numpy(straight_through):
    a = np.random.default_rng(0).normal(size=(7, 5)).astype(np.float32)
    np.testing.assert_allclose(
        run_aggregator("max", a, straight_through), np.maximum.accumulate(np.maximum(a, 0.0), axis=0), rtol=1e-6
    )
    np.testing.assert_allclose(run_aggregator("sum", a, straight_through), np.cumsum(a, 0), rtol=1e-5)
    np.testing.assert_allclose(
        run_aggregator("avg", a, straight_through), np.cumsum(a, 0) / np.arange(1, 8)[:, None], rtol=1e-5
    )


def test_straight_through_backward_is_the_identity():
    """d y_T / d a_1: 1 for every ST aggregator (the max's gradient reaches both arguments and the
    avg's division is skipped); without ST, 1/T for avg and 0 for a max that a_1 did not win."""
    T = 6
    a = jnp.asarray(np.random.default_rng(1).normal(size=(T, 3)).astype(np.float32)).at[0].set(-5.0)
    for kind in ("max", "avg", "sum"):
        grad = jax.grad(lambda a: run_aggregator(kind, a, True)[-1].sum())(a)
        np.testing.assert_allclose(grad, np.ones_like(a), err_msg=kind)
    grad_avg = jax.grad(lambda a: run_aggregator("avg", a, False)[-1].sum())(a)
    np.testing.assert_allclose(grad_avg, np.full_like(a, 1.0 / T), rtol=1e-6)
    grad_max = jax.grad(lambda a: run_aggregator("max", a, False)[-1].sum())(a)
    assert float(jnp.abs(grad_max[0]).sum()) == 0.0


def test_amrl_output_is_skip_half_then_aggregate():
    core = cores.make("amrl-max", hidden=8)
    carry = core.initialize_carry(None, (2,))
    x = jax.random.normal(jax.random.PRNGKey(0), (2, 3))
    params = core.init(jax.random.PRNGKey(1), carry, x, jnp.ones(2, bool))
    new_carry, y = core.apply(params, carry, x, jnp.ones(2, bool))
    h = new_carry["lstm"][1]
    np.testing.assert_allclose(y[:, :4], h[:, 4:])  # the second half skips around
    np.testing.assert_allclose(y[:, 4:], jnp.maximum(h[:, :4], 0.0))  # max with the zero carry


def test_lstm_forget_gate_bias_starts_at_one():
    core = cores.make("lstm", hidden=4)
    carry = core.initialize_carry(None, (1,))
    params = core.init(jax.random.PRNGKey(0), carry, jnp.zeros((1, 2)), jnp.ones(1, bool))
    bias = params["params"]["cell"]["gates"]["bias"]
    np.testing.assert_array_equal(bias, [0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0])


def test_set_refuses_inputs_of_another_width():
    core = cores.make("set", features=4)
    carry = core.initialize_carry(None, (1,))
    with pytest.raises(
        ValueError, match=r"SET.features must equal the width of its inputs \(3: the encoder.s output\), got 4"
    ):
        core.init(jax.random.PRNGKey(0), carry, jnp.zeros((1, 3)), jnp.ones(1, bool))
