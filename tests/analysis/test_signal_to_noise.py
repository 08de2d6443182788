import jax
import jax.numpy as jnp
import numpy as np
import pytest

from memrl.analysis.gradient_strength import make_core_for_width
from memrl.analysis.signal_to_noise import SETTINGS, Setting, analytic_snr, empirical_snr
from memrl.cores.amrl import aggregate


def simulated_aggregator_snr(kind: str, setting: Setting, steps: int, samples: int) -> np.ndarray:
    """Monte-Carlo SNR_t of memrl's own aggregator step (the one the AMRL cores use)."""
    noise = setting.noise_std * jax.random.normal(jax.random.PRNGKey(0), (steps, samples, 1)).at[0].set(0.0)
    xs = jnp.concatenate([noise.at[0].set(setting.signal), noise], axis=1)

    def step(carry, x):
        total, count = carry
        total, y = aggregate(kind, total, count + 1.0, x, use_straight_through=False)
        return (total, count + 1.0), y

    _, ys = jax.lax.scan(step, (jnp.zeros((2 * samples, 1)), jnp.zeros(2 * samples)), xs)
    with_signal, noise_only = np.asarray(ys[:, :samples, 0], np.float64), np.asarray(ys[:, samples:, 0], np.float64)
    return np.mean((with_signal - noise_only) ** 2, axis=1)[1:] / np.var(noise_only, axis=1)[1:]


@pytest.mark.parametrize("kind", ["max", "avg", "sum"])
@pytest.mark.parametrize("setting_name", list(SETTINGS))
def test_analytic_snr_matches_simulation(kind, setting_name):
    setting = SETTINGS[setting_name]
    simulated = simulated_aggregator_snr(kind, setting, steps=12, samples=200_000)
    np.testing.assert_allclose(analytic_snr(kind, setting, 12)[1:], simulated, rtol=0.05)


def test_max_keeps_a_strong_signal_and_loses_a_weak_one():
    """The paper's argument for combining aggregators: max beats avg only for strong signals."""
    weak, strong = SETTINGS["weak signal"], SETTINGS["strong signal"]
    assert analytic_snr("max", strong, 100)[99] > 100 * analytic_snr("avg", strong, 100)[99]
    assert analytic_snr("avg", weak, 100)[99] > 1e4 * analytic_snr("max", weak, 100)[99]


def test_empirical_snr_of_set_core_matches_average_formula():
    setting = SETTINGS["weak signal"]
    snr = empirical_snr(make_core_for_width("set", 1), jax.random.PRNGKey(3), setting, steps=20, sequences=8_000)
    np.testing.assert_allclose(snr[1:], analytic_snr("avg", setting, 20)[1:], rtol=0.08)
    assert np.isinf(snr[0])  # no noise has arrived at step 0


def test_unknown_aggregator_is_rejected():
    with pytest.raises(ValueError, match="'max', 'avg' or 'sum'"):
        analytic_snr("median", SETTINGS["weak signal"], 10)
