"""Supervised training of a memory model on a task's trials (softmax cross-entropy, Adam), with the
``init``/``run`` interface of the actor-critic learners, so run folders, checkpoints, resuming,
progress and experiments work the same. Trials are sampled afresh for every batch."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax import struct

from memrl import tasks
from memrl.agents.associative_inference import HTMAssociativeInference
from memrl.learn.supervised_config import SupervisedConfig

MODELS = {"htm": HTMAssociativeInference}


@struct.dataclass
class SupervisedState:
    params: Any
    opt_state: Any
    key: jax.Array
    update: jax.Array  # updates done


def choice_loss(logits: jax.Array, label: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Mean softmax cross-entropy of the right choices and the fraction chosen right (argmax).
    logits [B, C], label [B]."""
    loss = optax.softmax_cross_entropy_with_integer_labels(logits, label).mean()
    return loss, (logits.argmax(axis=-1) == label).mean()


class SupervisedLearner:
    def __init__(self, config: SupervisedConfig):
        self.config = config
        self.task = tasks.make(config.task, **config.task_args)
        self.stage_tasks = config.stage_tasks()
        self.stage_ends = np.cumsum([updates for updates, _ in config.curriculum], dtype=np.int32)
        self.model = MODELS[config.core](**config.core_args)
        self.optimizer = optax.chain(optax.clip_by_global_norm(config.max_grad_norm), optax.adam(config.lr))

    def init(self, key) -> SupervisedState:
        key, init_key, batch_key = jax.random.split(key, 3)
        params = self.model.init(init_key, self.task.sample(batch_key, 1))
        return SupervisedState(params, self.optimizer.init(params), key, jnp.zeros((), jnp.int32))

    def training_batch(self, key, update: jax.Array):
        """The trials of update number ``update``: each stage's task in turn, then the task's."""
        samplers = [lambda task=task: task.sample(key, self.config.batch_size, "train") for task in (*self.stage_tasks, self.task)]
        if not self.stage_tasks:
            return samplers[0]()
        return jax.lax.switch(jnp.searchsorted(self.stage_ends, update, side="right"), samplers)

    def update(self, state: SupervisedState, _=None) -> tuple[SupervisedState, dict]:
        key, batch_key = jax.random.split(state.key)
        batch = self.training_batch(batch_key, state.update)

        def loss_fn(params):
            return choice_loss(self.model.apply(params, batch), batch.label)

        (loss, accuracy), grads = jax.value_and_grad(loss_fn, has_aux=True)(state.params)
        updates, opt_state = self.optimizer.update(grads, state.opt_state, state.params)
        state = SupervisedState(optax.apply_updates(state.params, updates), opt_state, key, state.update + 1)
        metrics = {
            "env_steps": state.update * self.config.batch_size, "episodes": jnp.asarray(self.config.batch_size),
            "episode_return": accuracy, "loss": loss, "grad_norm": optax.tree.norm(grads),
        }
        return state, metrics

    def run(self, state: SupervisedState, num_updates: int) -> tuple[SupervisedState, dict]:
        """``num_updates`` updates in one ``lax.scan``; metrics stacked per update."""
        return jax.lax.scan(self.update, state, None, num_updates)

    def accuracy(self, params, key, num_trials: int, split: str = "test") -> dict[str, jax.Array]:
        """Fraction of ``num_trials`` fresh trials of ``split`` answered right (argmax): "all", and
        each kind of trial the task names (``trial_kinds``)."""
        batch = self.task.sample(key, num_trials, split)
        right = self.model.apply(params, batch).argmax(axis=-1) == batch.label
        kinds = self.task.trial_kinds(batch)
        return {"all": right.mean()} | {kind: (right & mask).sum() / mask.sum() for kind, mask in kinds.items()}
