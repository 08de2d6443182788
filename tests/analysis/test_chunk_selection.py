"""memrl analyze chunk-selection: which stored chunks HTM reads at each step of an episode."""

import jax
import numpy as np
import pytest

from memrl import cores, envs
from memrl.analysis.chunk_selection import chunk_timeline, record_episode, relevance_by_chunk
from memrl.cli import main
from memrl.learn.impala_config import ImpalaConfig
from memrl.learn.learners import learner_for
from memrl.nn.hierarchical_attention import MASKED_RELEVANCE
from memrl.run.folder import RunFolder

HTM = dict(num_layers=2, d_model=16, num_heads=2, mlp_dim=16, window=3, chunk_size=2, num_chunks=4, k=2)
CONFIG = ImpalaConfig(
    env=envs.make("tmaze/T-LN", maze_length=20, timeout=60),
    core=cores.make("htm", **HTM),
    encoder_widths=(16,),
    head_widths=(16,),
    num_envs=2,
    rollout_len=4,
    total_steps=8,
)


def test_the_timeline_of_hand_checked_chunks():
    # chunks of 2, no overlap, 2 slots: chunk j ends at step 2j + 1 and is readable after it
    holder = chunk_timeline(7, chunk_size=2, overlap=0, num_chunks=2)
    assert holder.tolist() == [[-1, -1], [-1, -1], [0, -1], [0, -1], [0, 1], [0, 1], [2, 1]]
    # chunks of 3 overlapping by 1 (stride 2): chunk j ends at step 2j + 2
    assert chunk_timeline(6, chunk_size=3, overlap=1, num_chunks=4)[:, :2].tolist() == [[-1, -1]] * 3 + [
        [0, -1]
    ] * 2 + [[0, 1]]


def test_scores_are_a_distribution_over_the_chunks_in_store_and_the_read_ones_are_among_them():
    holder = chunk_timeline(7, chunk_size=2, overlap=0, num_chunks=2)
    relevance = np.array([[MASKED_RELEVANCE] * 2] * 2 + [[0.0, MASKED_RELEVANCE]] * 2 + [[1.0, 0.0]] * 3)
    selected = np.array([[0, 1]] * 7)
    scores, read = relevance_by_chunk(relevance, selected, holder)
    assert np.isnan(scores[:2]).all() and not read[:2].any()
    np.testing.assert_allclose(np.nansum(scores[2:], axis=1), 1.0)
    np.testing.assert_allclose(scores[4, :2], [np.e / (np.e + 1), 1 / (np.e + 1)])
    assert read[6].tolist() == [False, True, True]  # slot 0 holds chunk 2 by then, slot 1 chunk 1


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory):
    """An htm run folder with an (untrained) checkpoint: the analysis reads any."""
    folder = RunFolder(tmp_path_factory.mktemp("chunks") / "run")
    folder.prepare(CONFIG)
    folder.save_checkpoint(0, learner_for(CONFIG).init(jax.random.PRNGKey(0)))
    return folder


def test_the_timeline_is_the_cores_own_store_mask_through_the_wrap_around(run_folder):
    params = learner_for(CONFIG).init(jax.random.PRNGKey(0)).params
    layers, _, done = record_episode(CONFIG, params, jax.random.PRNGKey(1), 24)
    length = int(np.argmax(done)) + 1 if done.any() else 24
    assert length > 2 * HTM["chunk_size"] * HTM["num_chunks"]  # the store has wrapped around
    holder = chunk_timeline(length, HTM["chunk_size"], 0, HTM["num_chunks"])
    assert len(layers) == HTM["num_layers"]
    for relevance, selected in layers:
        assert relevance.shape == (24, HTM["num_chunks"]) and selected.shape == (24, HTM["k"])
        np.testing.assert_array_equal(relevance[:length] > MASKED_RELEVANCE / 2, holder >= 0)


def test_the_command_draws_and_saves_per_layer(run_folder, tmp_path):
    main(["analyze", "chunk-selection", str(run_folder.path), "--steps", "24", "--out", str(tmp_path)])
    saved = np.load(tmp_path / "chunk_selection.npz")
    assert (tmp_path / "chunk_selection.png").stat().st_size > 0
    for layer in range(HTM["num_layers"]):
        read = saved[f"layer_{layer}_read"]
        in_store = (saved["holder"] >= 0).sum(1)
        assert read.sum(1).tolist() == np.minimum(in_store, HTM["k"]).tolist()


def test_refuses_a_run_without_an_htm_core_and_a_missing_seed(tmp_path, capsys):
    gru = RunFolder(tmp_path / "gru")
    gru.prepare(ImpalaConfig(env=envs.make("tmaze/T-LN"), core=cores.make("gru")))
    htm = RunFolder(tmp_path / "htm")
    htm.prepare(CONFIG)
    for args, message in (
        ([str(gru.path)], "reads an htm core"),
        ([str(htm.path), "--seed", "3"], "has seeds [0], not 3"),
    ):
        with pytest.raises(SystemExit):
            main(["analyze", "chunk-selection", *args])
        assert message in capsys.readouterr().err
