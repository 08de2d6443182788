"""R2D2: stored sequences with their carries, prioritised draws, the stored- and zero-state losses,
the config's refusals, and the positive control (an LSTM solves T-L over seeds)."""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from memrl import cores, envs
from memrl.learn.learners import learner_for
from memrl.learn.r2d2_config import R2D2Config
from memrl.run.folder import RunFolder
from memrl.run.policy import load_policy
from memrl.run.seed_training import train_seeds

SMALL = R2D2Config(
    env=envs.make("tmaze/T-L", maze_length=12, timeout=40),  # episodes longer than a sequence: its carry matters
    core=cores.make("lstm", hidden=16),
    encoder_widths=(16,),
    head_widths=(16,),
    num_envs=4,
    rollout_len=6,
    burn_in=3,
    replay_size=64,
    learn_start=64,
    batch_size=8,
    total_steps=4 * 6 * 3,
)


@pytest.fixture(scope="module")
def acted():
    """Three updates of SMALL, none learning (the replay holds fewer than learn_start)."""
    learner = learner_for(SMALL)
    runner, _ = jax.jit(lambda r: learner.run(r, 3))(learner.init(jax.random.PRNGKey(0)))
    return learner, runner


def test_a_stored_sequence_starts_with_the_last_updates_last_steps_and_its_carry_gives_the_acting_values(acted):
    learner, runner = acted
    replay, E, b = runner.replay, SMALL.num_envs, SMALL.burn_in
    assert int(replay.size) == 3 * E and int(runner.gradient_steps) == 0
    second, third = slice(E, 2 * E), slice(2 * E, 3 * E)
    for field in ("obs", "action", "reward", "done", "reset"):
        stored = getattr(replay.sequences, field)
        np.testing.assert_array_equal(stored[third, :b], stored[second, -b:])  # consecutive sequences overlap by b
    # the carry stored with a sequence is the acting core's at its first step: unrolled from it, the
    # network gives every stored step the value it gave while acting (the parameters have not moved)
    for slots in (second, third):
        sequences = jax.tree.map(lambda x: jnp.swapaxes(x[slots], 0, 1), replay.sequences)
        carry = jax.tree.map(lambda x: x[slots], replay.carry)
        _, (_, values, _) = learner.agent.apply(
            runner.params,
            carry,
            sequences.obs,
            sequences.prev_action,
            sequences.prev_reward,
            sequences.reset,
            method=learner.agent.unroll,
        )
        np.testing.assert_allclose(values, sequences.value, rtol=1e-5, atol=1e-5)


def test_the_zero_state_loss_is_the_stored_state_loss_from_a_zero_carry(acted):
    learner, runner = acted
    slots, weights = learner.drawn(runner.replay, jax.random.PRNGKey(1))
    sequences = jax.tree.map(lambda x: jnp.swapaxes(x[slots], 0, 1), runner.replay.sequences)
    carry = jax.tree.map(lambda x: x[slots], runner.replay.carry)
    zero = learner_for(dataclasses.replace(SMALL, stored_state=False))
    loss = lambda learner, carry: float(learner._loss(runner.params, runner.params, carry, sequences, weights)[0])
    zero_carry = learner.agent.initialize_carry((SMALL.batch_size,))
    assert loss(zero, carry) == pytest.approx(loss(learner, zero_carry), rel=1e-6)
    assert loss(zero, carry) != pytest.approx(loss(learner, carry), rel=1e-3)


def test_sequences_are_drawn_by_priority_among_the_stored_with_importance_weights(acted):
    learner, runner = acted
    c = dataclasses.replace(SMALL, batch_size=64)
    drawing = learner_for(c)
    priority = jnp.zeros(c.replay_size).at[:3].set(jnp.asarray([1.0, 1e-9, 4.0])).at[10].set(100.0)
    replay = runner.replay.replace(priority=priority, size=jnp.asarray(3, jnp.int32))
    draws = jax.jit(jax.vmap(lambda k: drawing.drawn(replay, k)))(jax.random.split(jax.random.PRNGKey(0), 200))
    slots, weights = np.asarray(draws[0]).ravel(), np.asarray(draws[1]).ravel()
    assert set(slots) <= {0, 2}  # slot 10 is not filled; slot 1's priority is negligible
    assert (slots == 2).mean() / (slots == 0).mean() == pytest.approx(4**0.9, rel=0.1)
    p = np.asarray([1.0, 1e-9**0.9, 4**0.9]) / (1 + 1e-9**0.9 + 4**0.9)
    expected = (3 * p) ** -c.importance_exponent
    one_batch = np.asarray(draws[0][0])
    np.testing.assert_allclose(draws[1][0], expected[one_batch] / expected[one_batch].max(), rtol=1e-4)
    assert weights.max() == 1.0


def test_learning_sets_the_drawn_sequences_priorities_and_copies_the_target_network():
    config = dataclasses.replace(SMALL, learn_start=8, learn_steps=2, target_period=3)
    learner = learner_for(config)
    runner = learner.init(jax.random.PRNGKey(0))
    run = jax.jit(lambda r: learner.run(r, 3))
    runner, metrics = run(runner)
    assert np.isnan(metrics["q_loss"][0]) and not np.isnan(metrics["q_loss"][1])  # 4 stored, then 8
    assert int(runner.gradient_steps) == 4
    assert not np.allclose(runner.replay.priority[: int(runner.replay.size)], 1.0)  # drawn ones re-prioritised
    assert float(runner.replay.max_priority) >= float(runner.replay.priority.max())
    copied_at_3 = jax.tree.leaves(runner.target_params)[0]
    assert not np.allclose(copied_at_3, jax.tree.leaves(runner.params)[0])  # a step since the copy at 3
    assert not np.allclose(copied_at_3, jax.tree.leaves(learner.init(jax.random.PRNGKey(0)).params)[0])


@pytest.mark.parametrize(
    "settings, message",
    [
        (dict(value_coef=0.5), r"R2D2 learns Q-values alone: value_coef .* must be 0 \(--value-coef\)"),
        (dict(burn_in=7), r"burn_in \(7\) must be at most rollout_len \(6\)"),
        (dict(replay_size=3, learn_start=2, batch_size=2), r"replay_size \(3\) must hold at least num_envs \(4\)"),
        (dict(batch_size=65), r"batch_size \(65\) must be at most learn_start \(64\)"),
        (dict(policy_lag=1), "R2D2 acts with its current network"),
        (dict(priority_exponent=1.5), r"priority_exponent must be within \[0.0, 1.0\], got 1.5"),
        (
            dict(env=envs.make("gymnax/Pendulum-v1")),
            "R2D2 takes one discrete action per step; gymnax/Pendulum-v1 acts with continuous actions",
        ),
    ],
)
def test_the_config_refuses_what_r2d2_cannot_run(settings, message):
    with pytest.raises(ValueError, match=message):
        dataclasses.replace(SMALL, **settings)


def test_r2d2_with_an_lstm_solves_t_l_on_every_seed():
    """The positive control: greedy after 300 updates, every one of 3 seeds turns right at least 95%
    of the time (4 for the right turn, −3 for the wrong one: a guess returns 0.5)."""
    config = dataclasses.replace(
        SMALL,
        env=envs.make("tmaze/T-L", maze_length=4, timeout=20),
        core=cores.make("lstm", hidden=32),
        encoder_widths=(32,),
        head_widths=(32,),
        num_envs=8,
        rollout_len=16,
        burn_in=8,
        replay_size=256,
        learn_start=32,
        batch_size=16,
        learn_steps=2,
        target_period=50,
        lr=1e-3,
        total_steps=8 * 16 * 300,
    )
    learner = learner_for(config)
    train = jax.jit(jax.vmap(lambda key: learner.run(learner.init(key), 300)[0].params))
    params = train(jax.random.split(jax.random.PRNGKey(0), 3))
    evaluate = jax.jit(lambda p, key: learner.evaluate(p, key, 60))
    for seed in range(3):
        done, returns, _ = evaluate(jax.tree.map(lambda x: x[seed], params), jax.random.PRNGKey(100 + seed))
        finished = np.asarray(returns)[np.asarray(done)]
        assert len(finished) >= 50 and finished.mean() >= 4 - 7 * 0.05, (seed, finished.mean())


def test_an_interrupted_run_resumes_with_its_replay_to_the_same_result(tmp_path):
    """The replay is part of the checkpoint: a run killed after its first chunk and resumed ends
    exactly where an uninterrupted one ends (the replay's priorities and the target network too)."""
    config = dataclasses.replace(SMALL, learn_start=8, total_steps=4 * 6 * 4, updates_per_chunk=2)

    class Killed(Exception):
        pass

    def kill_after_first_chunk(steps_done):
        if steps_done >= 2 * config.steps_per_update:
            raise Killed

    interrupted, straight = RunFolder(tmp_path / "interrupted"), RunFolder(tmp_path / "straight")
    interrupted.prepare(config)
    with pytest.raises(Killed):
        train_seeds(config, interrupted, [0], on_chunk=kill_after_first_chunk)
    train_seeds(config, interrupted, [0])
    straight.prepare(config)
    train_seeds(config, straight, [0])
    template = learner_for(config).init(jax.random.PRNGKey(0))
    a, b = interrupted.load_checkpoint(0, template), straight.load_checkpoint(0, template)
    jax.tree.map(
        np.testing.assert_array_equal, (a.params, a.target_params, a.replay), (b.params, b.target_params, b.replay)
    )
    assert int(a.update) == 4 and int(a.gradient_steps) == 3 and int(a.replay.size) == 16

    policy = load_policy(straight.path)  # acts greedily on the Q-values, and will not sample them
    obs, _ = config.env.reset(jax.random.PRNGKey(0))
    batched = jax.tree.map(lambda x: x[None], obs)
    action, _ = policy.act(batched, policy.initial_state(1), np.array([True]))
    assert action.shape == (1,)
    with pytest.raises(ValueError, match="outputs are Q-values, not a distribution to sample"):
        policy.act(batched, policy.initial_state(1), np.array([True]), greedy=False, key=jax.random.PRNGKey(1))
