"""Supervised sequence tasks behind one contract (``base``) and their registry; importing this
package registers them all."""

from memrl.tasks import (
    babyai,
    copying,
    digits,
    language_model,
    learn_to_execute,
    listops,
    nth_farthest,
    paired_associative_inference,
    tmaze_returns,
)
from memrl.tasks.base import SPLITS, TASKS, SequenceBatch, SequenceTask, make, names, register

__all__ = ["SPLITS", "TASKS", "SequenceBatch", "SequenceTask", "make", "names", "register"]
