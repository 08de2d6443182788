"""Nth Farthest: the official generator's golden batch replayed by a NumPy generator with the same
draws, and the JAX sampler checked for the same layout, label rule and distributions."""

import jax
import numpy as np
import pytest

from memrl import tasks


def numpy_batch(batch_size: int, num_objects: int, num_features: int):
    """sonnet's ``_get_batch_data`` draws, in order (np.random): vectors, n, the reference, the row order;
    the label is the object id ranked n-th nearest to the reference (the README's rule)."""
    inputs, labels = [], []
    for _ in range(batch_size):
        data = np.random.uniform(-1, 1, size=(num_objects, num_features))
        nth = np.random.randint(0, num_objects)
        reference = np.random.randint(0, num_objects)
        distances = np.sqrt(((data[:, None] - data[None]) ** 2).sum(-1))
        labels.append(np.argsort(distances[reference])[nth])
        eye = np.identity(num_objects)
        rows = np.concatenate([data, eye, eye[[reference] * num_objects], eye[[nth] * num_objects]], axis=-1)
        inputs.append(np.random.permutation(rows))
    return np.stack(inputs).astype(np.float32), np.array(labels)


def label_rule(rows: np.ndarray, num_objects: int, num_features: int) -> int:
    """The answer read back from one sequence's rows [num_objects, width] alone."""
    vectors = rows[:, :num_features]
    ids = rows[:, num_features : num_features + num_objects].argmax(-1)
    reference = rows[0, num_features + num_objects : num_features + 2 * num_objects].argmax()
    nth = rows[0, num_features + 2 * num_objects :].argmax()
    by_id = vectors[np.argsort(ids)]
    return int(np.argsort(np.linalg.norm(by_id - by_id[reference], axis=-1))[nth])


def test_the_golden_batch_is_replayed_exactly(data_dir):
    golden = np.load(data_dir / "sequence_tasks" / "nth_farthest.npz")
    np.random.seed(int(golden["numpy_seed"]))
    inputs, labels = numpy_batch(64, 8, 16)
    np.testing.assert_array_equal(inputs, golden["inputs"])
    np.testing.assert_array_equal(labels, golden["labels"].astype(int))
    assert [label_rule(rows, 8, 16) for rows in golden["inputs"]] == golden["labels"].astype(int).tolist()
    assert (
        golden["labels"][golden["derived_nth"] == 0] == golden["derived_reference_id"][golden["derived_nth"] == 0]
    ).all(), "n = 0 names the reference itself"


def test_the_sampler_has_the_official_layout_and_label_rule():
    task = tasks.make("nth-farthest", batch_size=512, num_objects=5, num_features=3)
    batch = jax.jit(task.sample)(jax.random.PRNGKey(0))
    inputs, targets, mask = map(np.asarray, batch[:3])
    assert (
        inputs.shape == (5, 512, 3 + 15)
        and task.input_size == 18
        and task.num_outputs == 5
        and task.input_kind == "vectors"
    )
    np.testing.assert_array_equal(mask, np.arange(5)[:, None] == 4 + np.zeros((1, 512)), "only the last step is scored")
    sequences = np.swapaxes(inputs, 0, 1)
    for b in range(512):
        rows = sequences[b]
        assert sorted(rows[:, 3:8].argmax(-1)) == list(range(5)), "every object once"
        assert (rows[:, 8:] == rows[0, 8:]).all(), "reference and n on every row"
        assert targets[-1, b] == label_rule(rows, 5, 3)
    vectors = sequences[..., :3]
    assert -1 <= vectors.min() < -0.95 and 0.95 < vectors.max() <= 1 and abs(vectors.mean()) < 0.05, "U(-1, 1)"
    in_order = (sequences[..., 3:8].argmax(-1) == np.arange(5)).all(-1).mean()
    assert in_order < 0.05, "rows are shuffled"
    ranks = sequences[:, 0, 13:18].argmax(-1)
    assert set(batch.kinds) == {"rank0", "rank1", "rank2", "rank3", "rank4", "beyond_rank0"}
    for rank in range(5):
        np.testing.assert_array_equal(np.asarray(batch.kinds[f"rank{rank}"]), ranks == rank)
    np.testing.assert_array_equal(np.asarray(batch.kinds["beyond_rank0"]), ranks > 0)
    for block in (8, 13):  # reference and n: uniform over the objects
        counts = np.bincount(sequences[:, 0, block : block + 5].argmax(-1), minlength=5)
        assert counts.min() > 512 / 5 * 0.6


def test_splits_are_disjoint_seed_streams_and_sampling_is_deterministic():
    task = tasks.make("nth-farthest", batch_size=4)
    key = jax.random.PRNGKey(3)
    train, again, test = task.sample(key), task.sample(key), task.sample(key, "test")
    np.testing.assert_array_equal(train.inputs, again.inputs)
    assert not np.isclose(np.asarray(train.inputs)[..., :16], np.asarray(test.inputs)[..., :16]).all(-1).any()


@pytest.mark.parametrize("kwargs", [dict(num_objects=0), dict(num_features=-1), dict(batch_size=0)])
def test_bad_settings_are_refused(kwargs):
    with pytest.raises(ValueError, match="must be a positive integer"):
        tasks.make("nth-farthest", **kwargs)
