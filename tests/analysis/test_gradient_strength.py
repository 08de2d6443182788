import jax
import jax.numpy as jnp
import numpy as np

from memrl.analysis.gradient_strength import gradient_strength, make_core_for_width


def test_set_gradient_is_one_over_t():
    """SET averages its inputs with true gradients, so ∂y_t/∂x_0 = 1/(t+1) exactly."""
    g = gradient_strength(make_core_for_width("set", 1), jax.random.PRNGKey(0), 20)
    np.testing.assert_allclose(g, 1.0 / np.arange(1, 21), rtol=1e-6)


def test_forward_mode_matches_reverse_mode():
    core = make_core_for_width("amrl-max", 1, hidden=8)
    steps = 12
    g = gradient_strength(core, jax.random.PRNGKey(1), steps)
    resets = jnp.zeros((steps, 1), bool).at[0].set(True)
    carry = core.initialize_carry(jax.random.PRNGKey(1), (1,))
    xs = jnp.zeros((steps, 1, 1)).at[0].set(1.0)
    params = core.init(jax.random.PRNGKey(1), carry, xs[0], resets[0])
    y = lambda x0: core.apply(params, carry, xs.at[0].set(x0), resets, method=core.unroll)[1][:, 0]
    jacobian = jax.jacrev(y)(xs[0])  # [T, H, 1, 1]
    np.testing.assert_allclose(g, np.linalg.norm(jacobian.reshape(steps, -1), axis=-1), rtol=1e-5)


def test_straight_through_keeps_gradient_that_lstm_loses():
    key = jax.random.PRNGKey(2)
    amrl = gradient_strength(make_core_for_width("amrl-max", 1, hidden=32), key, 100)
    lstm = gradient_strength(make_core_for_width("lstm", 1, hidden=32), key, 100)
    avg_without_st = gradient_strength(make_core_for_width("amrl-avg", 1, hidden=32, straight_through=False), key, 100)
    assert amrl[99] > 10 * lstm[99]
    assert amrl[99] > 20 * avg_without_st[99]  # a true average's gradient decays like 1/t
