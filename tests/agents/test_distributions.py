"""The action distributions (``agents/distributions.py``): the categorical's log-probabilities and
entropy against NumPy's softmax, and the squashed Gaussian's density against SciPy's normal through
the change of variables, integrating to one over its bounds, its samples within them."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

from memrl import envs
from memrl.agents.distributions import LOG_STD_RANGE, Categorical, Gaussian, for_env


def test_multi_categorical_log_prob_and_entropy():
    actions_of = Categorical((4, 2))
    logits = jax.random.normal(jax.random.PRNGKey(0), (5, 6))
    actions = jnp.array([[0, 1], [3, 0], [2, 1], [1, 1], [0, 0]])
    p_main = np.asarray(jax.nn.softmax(logits[:, :4]))
    p_check = np.asarray(jax.nn.softmax(logits[:, 4:]))
    expected = np.log(p_main[np.arange(5), actions[:, 0]]) + np.log(p_check[np.arange(5), actions[:, 1]])
    np.testing.assert_allclose(actions_of.log_prob(logits, actions), expected, rtol=1e-5)
    expected_entropy = -(p_main * np.log(p_main)).sum(-1) - (p_check * np.log(p_check)).sum(-1)
    np.testing.assert_allclose(actions_of.entropy(logits), expected_entropy, rtol=1e-5)
    samples = actions_of.sample(jax.random.PRNGKey(1), jnp.zeros((2000, 6)))
    assert samples.shape == (2000, 2) and samples[:, 0].max() == 3 and samples[:, 1].max() == 1
    assert (actions_of.num_outputs, actions_of.action_shape) == (6, (2,))
    np.testing.assert_array_equal(actions_of.features(jnp.array([3, 0])), [0, 0, 0, 1, 1, 0])


def test_the_squashed_gaussian_density_is_the_normal_one_through_the_change_of_variables():
    """Component 0 squashed into [-2, 2], component 1 unbounded: log π(a) = log N(u; μ, σ) − log |da/du|
    of the draws u, and the environment takes a = 2 tanh(u) (u itself where unbounded)."""
    gaussian = Gaussian((-2.0, -np.inf), (2.0, np.inf))
    mean, log_std = np.array([0.3, -1.0]), np.array([-0.5, 0.2])
    out = jnp.asarray(np.concatenate([mean, log_std]), jnp.float32)
    u = np.array([[1.5, 0.7], [-3.9, -3.0], [12.0, 10.0]], np.float32)  # 12: a on the bound in float32
    expected = (
        stats.norm.logpdf(u[:, 0], mean[0], np.exp(log_std[0]))
        - np.log(2 * 4 / (np.exp(u[:, 0]) + np.exp(-u[:, 0])) ** 2)
        + stats.norm.logpdf(u[:, 1], mean[1], np.exp(log_std[1]))
    )
    np.testing.assert_allclose(gaussian.log_prob(out, u), expected, rtol=1e-4)
    np.testing.assert_allclose(gaussian.to_env(u), np.stack([2 * np.tanh(u[:, 0]), u[:, 1]], -1), rtol=1e-6)
    entropy = np.sum(log_std + 0.5 * np.log(2 * np.pi * np.e))
    np.testing.assert_allclose(gaussian.entropy(out), entropy, rtol=1e-6)
    np.testing.assert_allclose(gaussian.greedy(out), mean, rtol=1e-6)
    np.testing.assert_allclose(gaussian.features(jnp.array([1.0, -3.0])), [np.tanh(1.0), -3.0], rtol=1e-6)
    assert (gaussian.num_outputs, gaussian.action_shape) == (4, (2,))


def test_the_squashed_density_integrates_to_one_and_its_actions_keep_the_bounds():
    gaussian = Gaussian((0.5,), (3.0,))
    out = jnp.array([0.8, 0.1])  # μ 0.8, σ e^0.1: mass near the upper bound
    a = np.linspace(0.5, 3.0, 200_001)[1:-1]
    u = np.arctanh((a - 0.5) / 1.25 - 1).astype(np.float32)
    density = np.exp(np.asarray(gaussian.log_prob(out, u[:, None]), np.float64))
    assert np.trapezoid(density, a) == pytest.approx(1.0, abs=2e-3)
    draws = gaussian.sample(jax.random.PRNGKey(0), jnp.broadcast_to(out, (20_000, 2)))
    actions = np.asarray(gaussian.to_env(draws))
    assert actions.dtype == np.float32 and actions.min() >= 0.5 and actions.max() <= 3.0
    assert float(draws.mean()) == pytest.approx(0.8, abs=0.03) and float(draws.std()) == pytest.approx(
        np.exp(0.1), rel=0.03
    )


def test_a_gaussian_far_out_has_finite_log_probabilities_and_gradients():
    """Draws far past where tanh reaches a bound in float32, and a log std beyond its range, give
    finite values and gradients, unbounded components included."""
    gaussian = Gaussian((-1.0, -np.inf), (1.0, np.inf))
    u = jnp.array([[40.0, 5.0], [-40.0, -5.0]])
    for out in (jnp.array([0.0, 0.0, 0.0, 0.0]), jnp.array([3.0, 0.0, 10.0, -20.0])):
        value, grad = jax.value_and_grad(lambda o: gaussian.log_prob(o, u).sum())(out)
        assert np.isfinite(value) and np.isfinite(np.asarray(grad)).all()
    assert float(gaussian._parts(jnp.array([0.0, 0.0, 10.0, -20.0]))[1].max()) == LOG_STD_RANGE[1]


def test_an_environment_chooses_its_distribution():
    assert for_env(envs.make("tmaze/T-LS")) == Categorical((4, 2))
    assert for_env(envs.make("gymnax/Pendulum-v1")) == Gaussian((-2.0,), (2.0,))
