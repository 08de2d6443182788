"""The supervised learner: its loss against NumPy, config errors, determinism, and learning PAI's
direct-recall case."""

import jax
import numpy as np
import pytest

from memrl.learn.supervised import SupervisedLearner, choice_loss
from memrl.learn.supervised_config import SupervisedConfig

SMALL_MODEL = {"num_layers": 1, "d_model": 16, "num_heads": 2, "mlp_dim": 16, "k": 2}
SMALL_TASK = {"num_chains": 3, "stimulus_dim": 8, "pool_size": 50}


def test_choice_loss_matches_numpy():
    logits = np.array([[2.0, -1.0], [0.5, 0.7], [-3.0, 1.0]], np.float32)
    label = np.array([0, 0, 1])
    log_softmax = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    loss, accuracy = choice_loss(logits, label)
    np.testing.assert_allclose(loss, -np.mean(log_softmax[np.arange(3), label]), rtol=1e-6)
    assert float(accuracy) == pytest.approx(2 / 3)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(task="pia"), "unknown task 'pia'; known: pai"),
        (dict(core="lstm"), "unknown supervised model 'lstm'; known: htm"),
        (dict(core_args={"layers": 2}), "layers"),
        (dict(task_args={"chain_length": 1}), "chain_length must be >= 2"),
        (dict(batch_size=0), "batch_size must be a positive integer"),
        (dict(lr=0.0), "lr must be > 0"),
        (dict(total_steps=16, batch_size=32), "less than one batch"),
        (dict(warmup_updates=-1), "warmup_updates must be >= 0"),
        (dict(warmup_task_args={"direct_fraction": 1.0}), "warmup_updates is 0"),
        (dict(warmup_updates=10, warmup_task_args={"num_chains": 4}), "change the shapes of the trials"),
        (dict(warmup_updates=10, warmup_task_args={"direct_fraction": 2.0}), "direct_fraction"),
    ],
)
def test_bad_config_is_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        SupervisedConfig(**kwargs)


def test_runs_are_deterministic_and_count_trials():
    learner = SupervisedLearner(SupervisedConfig(core_args=SMALL_MODEL, task_args=SMALL_TASK, batch_size=8))
    run = jax.jit(learner.run, static_argnums=1)
    (a, metrics), (b, _) = run(learner.init(jax.random.PRNGKey(3)), 3), run(learner.init(jax.random.PRNGKey(3)), 3)
    jax.tree.map(np.testing.assert_array_equal, a.params, b.params)
    np.testing.assert_array_equal(metrics["env_steps"], [8, 16, 24])
    assert np.all((0 <= metrics["episode_return"]) & (metrics["episode_return"] <= 1))
    assert np.all(np.isfinite(metrics["loss"]))


def test_the_warmup_trains_on_its_own_task_settings_then_on_the_task():
    config = SupervisedConfig(
        core_args=SMALL_MODEL, task_args={**SMALL_TASK, "direct_fraction": 0.0}, batch_size=8,
        warmup_updates=2, warmup_task_args={"direct_fraction": 1.0},
    )
    learner = SupervisedLearner(config)
    batch = jax.jit(learner.training_batch)
    hops = [np.asarray(batch(jax.random.PRNGKey(0), update).hops) for update in range(4)]
    np.testing.assert_array_equal(hops, [[1] * 8, [1] * 8, [2] * 8, [2] * 8])


def test_accuracy_is_scored_per_kind_of_query():
    learner = SupervisedLearner(SupervisedConfig(core_args=SMALL_MODEL, task_args=SMALL_TASK, batch_size=8))
    accuracy = jax.jit(learner.accuracy, static_argnums=(2, 3))(learner.init(jax.random.PRNGKey(0)).params, jax.random.PRNGKey(1), 200, "test")
    assert set(accuracy) == {"all", "direct", "indirect"}
    assert float(accuracy["all"]) == pytest.approx((float(accuracy["direct"]) + float(accuracy["indirect"])) / 2), "half of each kind"


@pytest.mark.slow
def test_one_layer_htm_learns_direct_recall_of_held_out_pairs():
    """Chains of length 2 (recall B from A): one chunk read suffices; measured 0.96 held-out
    accuracy after 600 updates, threshold 0.9 after 800."""
    config = SupervisedConfig(
        core_args={"num_layers": 1, "d_model": 64, "mlp_dim": 128, "k": 2},
        task_args={"chain_length": 2, "num_chains": 4, "stimulus_dim": 32}, lr=1e-3,
    )
    learner = SupervisedLearner(config)
    state, _ = jax.jit(learner.run, static_argnums=1)(learner.init(jax.random.PRNGKey(0)), 800)
    accuracy = learner.accuracy(state.params, jax.random.PRNGKey(1), 1000, "test")
    assert set(accuracy) == {"all", "direct"}, "chains of 2 have only direct queries"
    assert float(accuracy["all"]) >= 0.9, accuracy
