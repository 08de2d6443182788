"""`memrl analyze attention`: the RMC's attention weights read from a run's checkpoint and drawn
(the checkpoints are fresh models: the analysis reads any, and training one would only add a compile)."""

import jax
import numpy as np
import pytest

from memrl import cores, tasks
from memrl.analysis.attention_maps import command, reference_steps
from memrl.learn.learners import learner_for
from memrl.learn.supervised_config import SupervisedConfig
from memrl.run.folder import RunFolder


def test_reference_steps_find_the_reference_row():
    task = tasks.make("nth-farthest", batch_size=2, num_objects=3, num_features=2)
    inputs = np.zeros((3, 2, 2 + 9))
    for b, order in enumerate([(2, 0, 1), (1, 2, 0)]):
        for t, obj in enumerate(order):
            inputs[t, b, 2 + obj] = 1.0  # the object id of row t
        inputs[:, b, 5 + 2] = 1.0  # reference id 2 on every row
    np.testing.assert_array_equal(reference_steps(task, inputs), [0, 1])


def checkpointed(config, path) -> RunFolder:
    folder = RunFolder(path)
    folder.prepare(config)
    folder.save_checkpoint(0, learner_for(config).init(jax.random.PRNGKey(0)))
    return folder


@pytest.fixture(scope="module")
def rmc_run(tmp_path_factory):
    config = SupervisedConfig(
        task=tasks.make("nth-farthest", **dict(num_objects=4, num_features=3)),
        core=cores.make("rmc", **dict(mem_slots=2, head_size=4, num_heads=2, num_blocks=2)),
        embed_dim=8,
        batch_size=8,
        total_steps=16,
        updates_per_chunk=2,
    )
    return checkpointed(config, tmp_path_factory.mktemp("rmc_run"))


def test_draws_the_attention_of_an_rmc(rmc_run, tmp_path):
    command(rmc_run.path, out=tmp_path)
    assert (tmp_path / "attention.png").stat().st_size > 0
    saved = np.load(tmp_path / "attention.npz")
    assert sorted(saved.files) == ["block_0", "block_1"]
    steps, rows, heads, queries, keys = saved["block_0"].shape
    assert (steps, heads, queries, keys) == (4, 2, 3, 3) and 1 <= rows <= 3
    np.testing.assert_allclose(saved["block_0"].sum(-1), 1.0, rtol=1e-5)


def test_refuses_a_core_without_attention_and_a_missing_seed(rmc_run, tmp_path):
    with pytest.raises(ValueError, match="has seeds"):
        command(rmc_run.path, seed=3, out=tmp_path)
    config = SupervisedConfig(
        task=tasks.make("nth-farthest", **dict(num_objects=3, num_features=2)),
        core=cores.make("gru", **dict(hidden=4)),
        batch_size=4,
        total_steps=4,
        updates_per_chunk=1,
    )
    folder = checkpointed(config, tmp_path / "gru")
    with pytest.raises(ValueError, match="records no attention"):
        command(folder.path, out=tmp_path)
