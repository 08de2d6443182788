"""The copying task as TLB sets it (Sec. 7.6)."""

import jax
import numpy as np
import pytest

from memrl import tasks


def test_layout_digits_gap_indicator_and_output_phase():
    task = tasks.make("copying", batch_size=256, gap=7, num_digits=10)
    batch = jax.jit(task.sample)(jax.random.PRNGKey(0))
    inputs, targets, mask = map(np.asarray, batch[:3])
    assert inputs.shape == targets.shape == mask.shape == (10 + 7 + 1 + 10, 256) == (task.length, 256)
    digits = inputs[:10]
    assert digits.min() == 1 and digits.max() == 8 and set(np.unique(digits)) == set(range(1, 9)), "digits from 1..8"
    np.testing.assert_array_equal(inputs[10:17], 0)
    np.testing.assert_array_equal(inputs[17], 9)
    np.testing.assert_array_equal(inputs[18:], 0)
    np.testing.assert_array_equal(mask, np.arange(28)[:, None] >= 18 + np.zeros((1, 256)))
    np.testing.assert_array_equal(targets[18:], digits)
    assert task.scoring == "sequence" and task.input_size == task.num_outputs == 10


def test_splits_differ_and_sampling_is_deterministic():
    task = tasks.make("copying", batch_size=64, gap=3)
    key = jax.random.PRNGKey(1)
    np.testing.assert_array_equal(task.sample(key).inputs, task.sample(key).inputs)
    train, test = np.asarray(task.sample(key).inputs[:10]).T, np.asarray(task.sample(key, "test").inputs[:10]).T
    assert not any((t == train).all(-1).any() for t in test)


@pytest.mark.parametrize("kwargs", [dict(gap=0), dict(num_digits=0), dict(batch_size=-2), dict(gap=1.5)])
def test_bad_settings_are_refused(kwargs):
    with pytest.raises(ValueError, match="must be a positive integer|must be an integer"):  # the task's or the type's
        tasks.make("copying", **kwargs)
