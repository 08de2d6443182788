"""The digits image task: patches in raster order that rebuild the image, the label at the last step,
a fixed disjoint split, and its settings refused when wrong."""

import jax
import numpy as np
import pytest

from memrl import tasks
from memrl.tasks.digits import NUM_IMAGES, load_images


def test_patches_are_read_in_raster_order_and_the_label_is_scored_last():
    task = tasks.make("digits", batch_size=5, patch_size=2)
    batch = task.sample(jax.random.PRNGKey(0))
    assert batch.inputs.shape == (16, 5, 4) and task.length == 16 and task.input_size == 4
    images, labels = load_images()
    for b in range(5):
        patches = np.asarray(batch.inputs[:, b])
        rebuilt = np.zeros((8, 8), np.float32)
        for step in range(16):  # step = 4 * patch row + patch column; a patch is flattened row by row
            row, column = divmod(step, 4)
            rebuilt[2 * row : 2 * row + 2, 2 * column : 2 * column + 2] = patches[step].reshape(2, 2)
        match = np.flatnonzero((images == rebuilt).all(axis=(1, 2)))
        assert len(match) >= 1 and int(batch.targets[-1, b]) in labels[match]
    assert np.asarray(batch.target_mask)[-1].all() and not np.asarray(batch.target_mask)[:-1].any()
    assert float(batch.inputs.min()) >= 0 and float(batch.inputs.max()) <= 1


def test_the_split_is_fixed_disjoint_and_covers_every_image():
    task = tasks.make("digits", test_size=297)
    train, test = task.splits["train"][0], task.splits["test"][0]
    assert len(train) == NUM_IMAGES - 297 and len(test) == 297 and train.shape[1:] == (64, 1)
    again = tasks.make("digits", test_size=297, batch_size=3).splits["test"][0]
    np.testing.assert_array_equal(test, again)
    assert not np.array_equal(tasks.make("digits", split_seed=1).splits["test"][0], test)
    train_rows = {row.tobytes() for row in train}
    # the dataset repeats a few images; a held-out image may equal a training one only if it repeats
    images = {row.tobytes(): 0 for row in load_images()[0].reshape(NUM_IMAGES, 64, 1)}
    for row in load_images()[0].reshape(NUM_IMAGES, 64, 1):
        images[row.tobytes()] += 1
    assert all(images[row.tobytes()] > 1 for row in test if row.tobytes() in train_rows)


@pytest.mark.parametrize(
    "settings, message",
    [
        (dict(patch_size=3), "patch_size must divide the image side 8"),
        (dict(patch_size=0), "patch_size must be a positive integer"),
        (dict(test_size=NUM_IMAGES), "test_size must leave training images"),
    ],
)
def test_bad_settings_are_refused(settings, message):
    with pytest.raises(ValueError, match=message):
        tasks.make("digits", **settings)
