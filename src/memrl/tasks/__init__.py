"""Supervised sequence and memory tasks (``base``) and their registry; importing this package
registers them."""

from memrl.tasks.base import SPLITS, TASKS, make, names, register
from memrl.tasks import paired_associative_inference  # noqa: F401  (registration)

__all__ = ["SPLITS", "TASKS", "make", "names", "register"]
