"""``memrl.load_predictor``: a trained sequence model predicts what the learner scores (the same
accuracy as ``memrl eval`` on the same held-out sequences), and refuses what it cannot load."""

import jax
import numpy as np
import pytest

import memrl
from memrl import cores, envs, tasks
from memrl.learn.learners import learner_for
from memrl.learn.ppo_config import PPOConfig
from memrl.learn.supervised_config import SupervisedConfig
from memrl.run.folder import RunFolder
from memrl.run.seed_training import train_seeds


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory):
    config = SupervisedConfig(
        task=tasks.make("copying", gap=2, num_digits=3),
        core=cores.make("gru", hidden=16),
        embed_dim=8,
        batch_size=16,
        total_steps=16 * 200,
        lr=1e-2,
        updates_per_chunk=100,
    )
    folder = RunFolder(tmp_path_factory.mktemp("predictor") / "run")
    folder.prepare(config)
    train_seeds(config, folder, [0])
    return folder


def test_predictions_score_what_the_learner_evaluates(run_folder):
    predictor = memrl.load_predictor(run_folder.path)
    key = jax.random.PRNGKey(7)
    batch = predictor.held_out_batch(32, key)
    predictions = np.asarray(predictor.predict(batch.inputs))
    mask = np.asarray(batch.target_mask)
    assert predictions.shape == mask.shape
    token_accuracy = (predictions == np.asarray(batch.targets))[mask].mean()
    evaluated = learner_for(run_folder.load_config()).evaluate(predictor.params, key, 32)
    np.testing.assert_allclose(token_accuracy, evaluated["token_accuracy"], rtol=1e-6)
    assert token_accuracy > 0.3  # trained: far above chance (1/8 per digit; about 0.5 after these 200 updates)


def test_what_load_predictor_cannot_load_is_refused(run_folder, tmp_path):
    folder = RunFolder(tmp_path / "ppo")
    folder.prepare(
        PPOConfig(
            env=envs.make("tmaze/T-LN", maze_length=3, timeout=8),
            core=cores.make("gru", hidden=4),
            num_envs=2,
            rollout_len=4,
            num_minibatches=1,
            total_steps=8,
        )
    )
    with pytest.raises(
        ValueError,
        match="load_predictor loads supervised runs; .* holds a ppo run \\(load it with memrl.load_policy\\)",
    ):
        memrl.load_predictor(folder.path)
    with pytest.raises(ValueError, match="seeds \\[0\\], not 2"):
        memrl.load_predictor(run_folder.path, seed=2)


def test_inputs_unlike_the_tasks_are_named_at_the_boundary(run_folder):
    predictor = memrl.load_predictor(run_folder.path)
    tokens = np.asarray(predictor.held_out_batch(2).inputs)  # [T, B] token ids
    assert predictor.predict(tokens[:, :1]).shape == (tokens.shape[0], 1)  # any batch size
    with pytest.raises(
        ValueError,
        match="inputs must be time-major \\[T, B\\] token ids \\(the task's\\), got shape \\(.*\\) of float32",
    ):
        predictor.predict(tokens.astype(np.float32))
    with pytest.raises(ValueError, match="got shape \\(.*, 2, 1\\)"):
        predictor.predict(tokens[..., None])
    vocabulary = predictor.learner.task.input_size
    with pytest.raises(ValueError, match=f"token ids of the task's vocabulary, 0 to {vocabulary - 1}; got ids from"):
        predictor.predict(tokens + vocabulary)
    with pytest.raises(ValueError, match="got ids from -1"):
        predictor.predict(tokens - 1)
