"""Image classification as a sequence of patches, on the 8×8 handwritten digits that scikit-learn
ships (``sklearn.datasets.load_digits``: 1,797 images of 16 grey levels, 10 classes, the UCI
optical digits test set; nothing is downloaded). It stands in for CIFAR-10 in TLB's image
classification (Didolkar et al. 2022, Sec. 3.1, Table 1), where a 64×64 image is cut into 4×4
patches and read in raster order.

Each image is cut into ``patch_size`` × ``patch_size`` patches (1: pixel by pixel), read in raster
order, one flattened patch per step, grey levels scaled to [0, 1]; the class is scored at the last
step. The images are split once, by a permutation drawn from ``split_seed``: the last ``test_size``
are held out, the rest train. Batches draw images uniformly with replacement from their split.
"""

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np

from memrl.settings import check_positive
from memrl.tasks.base import SequenceBatch, SequenceTask, check_split, register

IMAGE_SIDE = 8
NUM_IMAGES = 1_797
GREY_LEVELS = 16


def load_images() -> tuple[np.ndarray, np.ndarray]:
    """(images [1797, 8, 8] float32 in [0, 1], labels [1797] int32) from scikit-learn's copy."""
    from sklearn.datasets import load_digits

    digits = load_digits()
    return (digits.images / GREY_LEVELS).astype(np.float32), digits.target.astype(np.int32)


def patch_sequences(images: np.ndarray, patch_size: int) -> np.ndarray:
    """[N, side, side] -> [N, (side / p)^2, p^2]: patches in raster order, each flattened row by row."""
    n, side = images.shape[0], images.shape[1]
    per_side = side // patch_size
    patches = images.reshape(n, per_side, patch_size, per_side, patch_size).transpose(0, 1, 3, 2, 4)
    return patches.reshape(n, per_side * per_side, patch_size * patch_size)


@dataclasses.dataclass(frozen=True)
class Digits(SequenceTask):
    """The class of an 8×8 digit read patch by patch (module docstring)."""

    batch_size: int = 128
    """images per batch (TLB's image classification: 128)"""
    patch_size: int = 1
    """side of the square patches, a divisor of 8 (1: one pixel per step, 64 steps)"""
    test_size: int = 297
    """held-out images (the rest, 1,500 by default, train)"""
    split_seed: int = 0
    """seed of the permutation that splits the images"""

    input_kind = "vectors"
    scored_at_final_step = True

    def __post_init__(self):
        check_positive(self, "batch_size", "patch_size", "test_size")
        if IMAGE_SIDE % self.patch_size:
            raise ValueError(
                f"Digits.patch_size must divide the image side {IMAGE_SIDE} (1, 2, 4 or 8), got {self.patch_size}"
            )
        if self.test_size >= NUM_IMAGES:
            raise ValueError(f"Digits.test_size must leave training images: below {NUM_IMAGES}, got {self.test_size}")

    @property
    def input_size(self) -> int:
        return self.patch_size**2

    @property
    def num_outputs(self) -> int:
        return 10

    @property
    def length(self) -> int:
        """Steps per sequence: patches per image."""
        return (IMAGE_SIDE // self.patch_size) ** 2

    @functools.cached_property
    def splits(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """Per split, (patch sequences [N, length, p^2], labels [N])."""
        images, labels = load_images()
        order = np.random.default_rng(self.split_seed).permutation(len(labels))
        sequences = patch_sequences(images, self.patch_size)[order]
        labels, n = labels[order], len(labels) - self.test_size
        return {"train": (sequences[:n], labels[:n]), "test": (sequences[n:], labels[n:])}

    def sample(self, key, split: str = "train", state=None) -> SequenceBatch:
        check_split(split)
        sequences, labels = self.splits[split]
        rows = jax.random.randint(key, (self.batch_size,), 0, len(labels))
        inputs = jnp.swapaxes(jnp.asarray(sequences)[rows], 0, 1)  # [T, B, p^2]
        last = jnp.arange(self.length)[:, None] == self.length - 1
        targets = jnp.where(last, jnp.asarray(labels)[rows][None], 0)
        return SequenceBatch(inputs, targets, jnp.broadcast_to(last, targets.shape))


register("digits", Digits)
