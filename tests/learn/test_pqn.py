"""PQN: the ε schedule, the Q(λ) loss's fixed targets, the config's refusals, and the positive
control (an LSTM solves T-L over seeds)."""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from memrl import cores, envs
from memrl.learn.learners import learner_for
from memrl.learn.losses import q_lambda_returns
from memrl.learn.pqn_config import PQNConfig

SMALL = PQNConfig(
    env=envs.make("tmaze/T-L", maze_length=4, timeout=20),
    core=cores.make("lstm", hidden=32),
    encoder_widths=(32,),
    head_widths=(32,),
    num_envs=8,
    rollout_len=16,
    num_minibatches=2,
    update_epochs=2,
    total_steps=8 * 16 * 150,
)


def test_epsilon_falls_linearly_over_its_fraction_of_the_updates_then_stays():
    learner = learner_for(dataclasses.replace(SMALL, epsilon_start=0.9, epsilon_finish=0.1, epsilon_decay=0.2))
    runner = learner.init(jax.random.PRNGKey(0))
    at = lambda update: np.asarray(learner.exploration(runner.replace(update=jnp.asarray(update))))
    assert at(0).shape == (SMALL.num_envs,) and np.all(at(0) == at(0)[0])
    np.testing.assert_allclose([at(u)[0] for u in (0, 15, 30, 31, 149)], [0.9, 0.5, 0.1, 0.1, 0.1], rtol=1e-6)


def test_the_q_lambda_targets_are_held_fixed_in_the_gradient():
    """PQN's loss is a semi-gradient: its gradient is that of ½ (Q(s_t, a_t) − G_t)² with the
    returns G computed beforehand from the same network's Q-values."""
    learner = learner_for(SMALL)
    runner, segment, _ = jax.jit(learner.act)(learner.init(jax.random.PRNGKey(0)))
    batch, carry = segment.transitions, segment.initial_carry
    q, _, _ = learner.unroll(runner.params, carry, batch)
    returns = jax.vmap(q_lambda_returns, in_axes=(1, 1, 1, None, None), out_axes=1)(
        batch.reward, batch.done.astype(jnp.float32), q, SMALL.gamma, SMALL.td_lambda
    )

    def fixed_target_loss(params):
        q, _, _ = learner.unroll(params, carry, batch)
        taken = jnp.take_along_axis(q, batch.action, axis=-1)[..., 0]
        return 0.5 * jnp.mean(jnp.square(taken[:-1] - returns))

    grads = jax.grad(lambda p: learner._loss(p, carry, batch)[0])(runner.params)
    jax.tree.map(
        lambda a, b: np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-7),
        grads,
        jax.grad(fixed_target_loss)(runner.params),
    )
    assert float(learner._loss(runner.params, carry, batch)[0]) == pytest.approx(
        float(fixed_target_loss(runner.params)), rel=1e-6
    )


@pytest.mark.parametrize(
    "settings, message",
    [
        (dict(entropy_coef=0.01), r"PQN learns Q-values alone: entropy_coef .* must be 0 \(--entropy-coef\)"),
        (dict(policy_lag=1), "PQN acts with its current network"),
        (dict(num_minibatches=3), r"num_envs \(8\) must be divisible by num_minibatches \(3\)"),
        (dict(optimizer="sgd"), "optimizer must be one of 'radam', 'adam', got 'sgd'"),
        (dict(td_lambda=1.5), r"td_lambda must be within \[0.0, 1.0\], got 1.5"),
        (
            dict(env=envs.make("gymnax/Pendulum-v1")),
            "PQN takes one discrete action per step; gymnax/Pendulum-v1 acts with continuous actions",
        ),
    ],
)
def test_the_config_refuses_what_pqn_cannot_run(settings, message):
    with pytest.raises(ValueError, match=message):
        dataclasses.replace(SMALL, **settings)


def test_pqn_with_an_lstm_solves_t_l_on_every_seed():
    """The positive control: greedy after 150 updates, every one of 3 seeds turns right at least 95%
    of the time (4 for the right turn, −3 for the wrong one: a guess returns 0.5)."""
    learner = learner_for(SMALL)
    train = jax.jit(jax.vmap(lambda key: learner.run(learner.init(key), 150)[0].params))
    params = train(jax.random.split(jax.random.PRNGKey(0), 3))
    evaluate = jax.jit(lambda p, key: learner.evaluate(p, key, 60))
    for seed in range(3):
        done, returns, _ = evaluate(jax.tree.map(lambda x: x[seed], params), jax.random.PRNGKey(100 + seed))
        finished = np.asarray(returns)[np.asarray(done)]
        assert len(finished) >= 50 and finished.mean() >= 4 - 7 * 0.05, (seed, finished.mean())
