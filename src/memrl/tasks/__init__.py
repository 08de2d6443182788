"""Supervised sequence tasks behind one contract (``base``) and their registry, which imports the
modules that register them (``base.TASK_MODULES``) when it is first asked."""

from memrl.tasks.base import SPLITS, TASKS, SequenceBatch, SequenceTask, make, names, register

__all__ = ["SPLITS", "TASKS", "SequenceBatch", "SequenceTask", "make", "names", "register"]
