"""The optimiser against NumPy transcriptions: TensorFlow 1's RMSPropOptimizer (its average of
squared gradients starting at 1, ε inside the square root) and no clipping when max_grad_norm is None."""

import dataclasses

import jax.numpy as jnp
import numpy as np
import optax
import pytest

from memrl.learn.optimizers import make_optimizer


def tf1_rmsprop(params, grads_per_step, lr, decay, eps, momentum):
    """tf.compat.v1.train.RMSPropOptimizer (centered=False): ms and mom slots start at 1 and 0;
    ms ← ρ ms + (1 − ρ) g², mom ← μ mom + lr g / sqrt(ms + ε), θ ← θ − mom."""
    theta, ms, mom = params.copy(), np.ones_like(params), np.zeros_like(params)
    for g in grads_per_step:
        ms = decay * ms + (1 - decay) * g * g
        mom = momentum * mom + lr * g / np.sqrt(ms + eps)
        theta = theta - mom
    return theta


@pytest.mark.parametrize("momentum", [0.0, 0.9])
def test_rmsprop_with_initial_scale_1_is_tensorflow_1s(momentum):
    rng = np.random.default_rng(0)
    params = rng.normal(size=5).astype(np.float32)
    grads = [
        3.0 * rng.normal(size=5).astype(np.float32) for _ in range(6)
    ]  # global norms ~7: clipping at 40 or 1 would show
    optimizer = make_optimizer(
        2e-3,
        None,
        "rmsprop",
        rmsprop_decay=0.99,
        rmsprop_eps=1e-4,
        rmsprop_momentum=momentum,
        rmsprop_initial_scale=1.0,
    )
    theta, state = jnp.asarray(params), optimizer.init(jnp.asarray(params))
    for g in grads:
        updates, state = optimizer.update(jnp.asarray(g), state, theta)
        theta = optax.apply_updates(theta, updates)
    np.testing.assert_allclose(theta, tf1_rmsprop(params, grads, 2e-3, 0.99, 1e-4, momentum), rtol=1e-5, atol=1e-6)


def test_optax_default_first_step_is_about_ten_times_tensorflow_1s():
    g = jnp.ones((3,))
    first = {}
    for scale in (0.0, 1.0):
        optimizer = make_optimizer(1e-3, None, "rmsprop", rmsprop_initial_scale=scale)
        first[scale] = float(optimizer.update(g, optimizer.init(g), g)[0][0])
    assert first[0.0] / first[1.0] == pytest.approx(np.sqrt(1.0 + 1e-4) / np.sqrt(0.01 + 1e-4), rel=1e-4)  # 9.95


def test_max_grad_norm_none_turns_clipping_off_and_nothing_else():
    from memrl.learn.supervised_config import SupervisedConfig

    assert SupervisedConfig(max_grad_norm=None).validate().max_grad_norm is None
    with pytest.raises(ValueError, match="max_grad_norm must be > 0, got -1"):
        SupervisedConfig(max_grad_norm=-1.0).validate()


def steps_on_a_constant_gradient(optimizer, updates: int = 6) -> list[float]:
    """How far each of ``updates`` updates on a gradient of ones moves a weight: with Adam,
    lr · g / (|g| + ε), about the learning rate of that update."""
    params, state, taken = jnp.zeros(3), optimizer.init(jnp.zeros(3)), []
    for _ in range(updates):
        update, state = optimizer.update(jnp.ones(3), state, params)
        taken.append(float(-update[0]))
    return taken


def test_the_learning_rate_warms_up_linearly():
    """Adam's first step on a constant gradient moves each weight by about the learning rate: 0, then
    a quarter, a half, three quarters of it, then all of it with a warm-up of 4 updates."""
    steps = steps_on_a_constant_gradient(make_optimizer(0.1, max_grad_norm=1e9, warmup_steps=4))
    np.testing.assert_allclose(steps, [0.0, 0.025, 0.05, 0.075, 0.1, 0.1], rtol=1e-4)


def test_the_learning_rate_decays_linearly_to_zero_after_its_warm_up():
    """Adam's step on a constant gradient is about the learning rate: with a decay over 4 updates it
    falls by a quarter an update to 0 and stays there; after a warm-up of 2 the decay starts at the top."""
    np.testing.assert_allclose(
        steps_on_a_constant_gradient(make_optimizer(0.1, None, decay_steps=4)),
        [0.1, 0.075, 0.05, 0.025, 0, 0],
        atol=1e-6,
    )
    np.testing.assert_allclose(
        steps_on_a_constant_gradient(make_optimizer(0.1, None, warmup_steps=2, decay_steps=2)),
        [0, 0.05, 0.1, 0.05, 0, 0],
        atol=1e-6,
    )


def test_ppo_anneals_its_learning_rate_to_zero_over_every_optimiser_step_when_asked():
    """``anneal_lr``: Adam's steps in the run are updates × epochs × minibatches; against the same
    optimiser without it (the optimiser's step counts set alike, its moments at 0), the first step
    is the same, the middle one half, the last 0."""
    from memrl import cores, envs
    from memrl.learn.ppo import PPO
    from memrl.learn.ppo_config import PPOConfig

    config = PPOConfig(
        env=envs.make("tmaze/T-L"),
        core=cores.make("lstm", hidden=4),
        num_envs=4,
        rollout_len=8,
        num_minibatches=2,
        update_epochs=3,
        total_steps=4 * 8 * 5,
        lr=0.01,
    )
    assert config.optimizer_steps == 5 * 3 * 2

    def step_at(config, count: int) -> float:
        optimizer = PPO(config).optimizer
        state = optax.tree_utils.tree_set(optimizer.init(jnp.zeros(3)), count=jnp.asarray(count, jnp.int32))
        return float(-optimizer.update(jnp.full(3, 1e-2), state, jnp.zeros(3))[0][0])  # below the clip; ε 1e-5: 0.1%

    annealed, last = dataclasses.replace(config, anneal_lr=True), config.optimizer_steps
    assert step_at(annealed, 0) == step_at(config, 0) == pytest.approx(0.01, rel=2e-3)
    assert step_at(annealed, last // 2) == pytest.approx(step_at(config, last // 2) / 2, rel=1e-5)
    assert step_at(annealed, last) == 0.0 < step_at(config, last)
