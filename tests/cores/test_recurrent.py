"""The recurrent baselines (LSTM, stacked LSTM, GRU) refuse sizes that are not positive integers,
naming the core and the setting, before anything is built; the LSTM's split gates are the fused cell's;
its weight initialisations have the scales they name."""

import pytest

from memrl import cores


@pytest.mark.parametrize(
    "core, settings, message",
    [
        ("lstm", dict(hidden=-3), r"LSTM.hidden must be a positive integer, got -3"),
        ("lstm", dict(hidden=2.5), r"core 'lstm' setting 'hidden' must be an integer, got 2.5"),
        ("lstm-stack", dict(layers=0), r"StackedLSTM.layers must be a positive integer, got 0"),
        ("gru", dict(hidden=0), r"GRU.hidden must be a positive integer, got 0"),
        (
            "lstm",
            dict(weight_init="orthogonal"),
            r"LSTM.weight_init must be one of \('fused', 'split'\), got 'orthogonal'",
        ),
        ("lstm-stack", dict(weight_init="Split"), r"StackedLSTM.weight_init must be one of"),
    ],
)
def test_bad_sizes_are_refused(core, settings, message):
    with pytest.raises(ValueError, match=message):
        cores.make(core, **settings)


def test_lstm_has_the_fused_cells_parameters_and_step():
    """The LSTM core splits its gates (W_x x + b for all steps at once, W_h h per step) but keeps the
    parameters of one Dense over [x, h] (names, shapes, initial values: old checkpoints load) and its step."""
    import flax.linen as nn
    import jax
    import jax.numpy as jnp
    import numpy as np

    from memrl.cores.lstm import _lstm_bias_init, lstm_update

    class DenseCell(nn.Module):  # the cell as it was written before the split: one Dense over [x, h]
        @nn.compact
        def __call__(self, carry, x):
            c, h = carry
            return lstm_update(c, nn.Dense(24, bias_init=_lstm_bias_init(6), name="gates")(jnp.concatenate([x, h], -1)))

    class FusedLSTM(nn.Module):
        @nn.compact
        def __call__(self, carry, x):
            return DenseCell(name="cell")(carry, x)

    core = cores.make("lstm", hidden=6)
    x, key = jax.random.normal(jax.random.PRNGKey(0), (3, 5)), jax.random.PRNGKey(1)
    carry = (jax.random.normal(key, (3, 6)), jax.random.normal(jax.random.PRNGKey(2), (3, 6)))
    params = core.init(key, carry, x, jnp.zeros(3, bool))
    fused = FusedLSTM().init(key, carry, x)
    assert jax.tree.structure(params) == jax.tree.structure(fused)
    for ours, theirs in zip(jax.tree.leaves(params), jax.tree.leaves(fused)):
        np.testing.assert_array_equal(ours, theirs)
    (c, h), y = core.apply(params, carry, x, jnp.zeros(3, bool))
    (c_fused, h_fused), _ = FusedLSTM().apply(params, carry, x)
    np.testing.assert_allclose(c, c_fused, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(h, h_fused, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "core, kernel_path", [("lstm", ("cell", "gates", "kernel")), ("lstm-stack", ("cell_1", "gates", "kernel"))]
)
def test_weight_inits_draw_each_part_at_its_named_scale(core, kernel_path):
    """ "fused": every weight of W = [W_x; W_h] at 1/sqrt(x + h) (sonnet's and Haiku's LSTM); "split":
    W_x at 1/sqrt(x) and W_h at 1/sqrt(h) (lecun_normal's truncated normal has exactly that standard deviation)."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    inputs, hidden = 192, 64
    stds = {}
    for weight_init in ("fused", "split"):
        model = cores.make(core, hidden=hidden, weight_init=weight_init)
        x = jnp.zeros((2, inputs if core == "lstm" else hidden))  # a stacked LSTM's upper cell reads the lower one's h
        params = model.init(jax.random.PRNGKey(0), model.initialize_carry(None, (2,)), x, jnp.zeros(2, bool))["params"]
        kernel = np.asarray(params[kernel_path[0]][kernel_path[1]][kernel_path[2]])
        split_at = x.shape[-1]
        stds[weight_init] = kernel[:split_at].std(), kernel[split_at:].std(), split_at
    fused_x, fused_h, x_width = stds["fused"]
    np.testing.assert_allclose([fused_x, fused_h], 1 / np.sqrt(x_width + hidden), rtol=0.03)
    split_x, split_h, _ = stds["split"]
    np.testing.assert_allclose([split_x, split_h], [1 / np.sqrt(x_width), 1 / np.sqrt(hidden)], rtol=0.03)


def test_the_grus_update_bias_starts_only_the_update_gates_bias():
    """b_z (the middle third of the input layer's bias: [r, z, n]) starts at ``update_bias``, so that
    z = σ(b_z + ...) keeps about σ(1) ≈ 0.73 of the state at 1.0; every other bias starts at 0, as
    Cho et al.'s and PyTorch's GRU, which the default 0 is."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    x, h = jnp.zeros((2, 5)), jnp.zeros((2, 8))
    for update_bias in (0.0, 1.0):
        core = cores.make("gru", hidden=8, update_bias=update_bias)
        params = core.init(jax.random.PRNGKey(0), h, x, jnp.zeros(2, bool))["params"]
        np.testing.assert_array_equal(params["input"]["bias"], np.repeat([0.0, update_bias, 0.0], 8))
        np.testing.assert_array_equal(params["recurrent"]["bias"], np.zeros(24))
