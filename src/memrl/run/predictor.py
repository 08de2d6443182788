"""A trained sequence model from Python: ``memrl.load_predictor(run_folder, seed=0)`` for the run
folders of ``memrl train supervised`` (what ``memrl.load_policy`` is for actor-critic runs)::

    predictor = memrl.load_predictor("runs/copying-gru")
    batch = predictor.held_out_batch(num_sequences=8)        # the run's task, held-out split
    predictions = predictor.predict(batch.inputs)            # [T, B] classes ([T, B, bits] bools for bit tasks)
    accuracy = (predictions == batch.targets)[batch.target_mask].mean()

Inputs are the task's, time-major: [T, B] token ids or [T, B, input_size] vectors; the model starts
from its initial memory at each sequence's first step, as in training."""

from __future__ import annotations

from pathlib import Path

import jax
import numpy as np

from memrl.run.final_agents import TrainedSeed, trained_seed
from memrl.tasks.base import SequenceBatch


class Predictor:
    """The model of a trained supervised run: ``logits``, ``predict`` and ``held_out_batch``."""

    def __init__(self, trained: TrainedSeed):
        self.config, self.learner, self.params = trained.config, trained.learner, trained.params
        self.output_kind = self.learner.task.output_kind
        self._logits = jax.jit(lambda params, inputs: self.learner.model.apply(params, inputs))

    def logits(self, inputs) -> jax.Array:
        """[T, B, classes or bits]: the model's outputs for time-major ``inputs``."""
        self.check_inputs(inputs)
        return self._logits(self.params, inputs)

    def check_inputs(self, inputs) -> None:
        """Refuse inputs unlike the task's: another structure, rank, feature shape or kind of number
        (token ids against vectors), and token ids outside the task's vocabulary, named with what the
        task gives ([T, B, ...]; T and B free)."""
        expected = jax.eval_shape(lambda: self.held_out_batch(1)).inputs
        if jax.tree.structure(inputs) != jax.tree.structure(expected):
            raise ValueError(
                f"inputs must be structured as the task's, {jax.tree.structure(expected)}, got {jax.tree.structure(inputs)}"
            )
        for given, wanted in zip(jax.tree.leaves(inputs), jax.tree.leaves(expected)):
            shape, kind = np.shape(given), np.asarray(given).dtype.kind
            feature = "x".join(map(str, wanted.shape[2:]))
            described = (
                f"[T, B{', ' + feature if feature else ''}] {'token ids' if wanted.dtype.kind in 'iu' else 'numbers'}"
            )
            if (
                len(shape) != len(wanted.shape)
                or shape[2:] != wanted.shape[2:]
                or (kind in "iu") != (wanted.dtype.kind in "iu")
            ):
                raise ValueError(
                    f"inputs must be time-major {described} (the task's), got shape {shape} of {np.asarray(given).dtype}"
                )
        task = self.learner.task
        if (
            task.input_kind == "tokens"
            and np.size(inputs)
            and not 0 <= np.min(inputs) <= np.max(inputs) < task.input_size
        ):
            raise ValueError(
                f"inputs are token ids of the task's vocabulary, 0 to {task.input_size - 1}; got ids from "
                f"{np.min(inputs)} to {np.max(inputs)}"
            )

    def predict(self, inputs) -> jax.Array:
        """The predicted class [T, B] (argmax), or for bit tasks every bit [T, B, bits] (logit > 0)."""
        logits = self.logits(inputs)
        return logits > 0 if self.output_kind == "bits" else logits.argmax(axis=-1)

    def held_out_batch(self, num_sequences: int, key=None) -> SequenceBatch:
        """``num_sequences`` fresh sequences of the run's task from its held-out split (``key``
        default PRNGKey(0)): inputs, targets and the mask of the scored steps."""
        key = jax.random.PRNGKey(0) if key is None else key
        return self.learner.task.with_batch_size(num_sequences).sample(key, "test")


def load_predictor(run_folder: str | Path, seed: int = 0) -> Predictor:
    """The model of seed ``seed`` of the supervised run in ``run_folder``, from its last checkpoint."""
    return Predictor(trained_seed(run_folder, seed, "load_predictor"))
