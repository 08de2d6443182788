"""Supervised training of any model on any sequence task (docs/architecture.md,
its task contract): fresh batches from the task, the masked sequence cross-entropy (softmax over classes,
sigmoid over bits), Adam. The learner interface is the actor-critic learners' (``init``,
``update``, ``run``, ``evaluate``), so run folders, checkpoints, resuming, progress and experiments
work the same.

    loss = Σ_b Σ_t m_bt ℓ(logits_bt, y_bt) / Σ_b Σ_t m_bt

Metrics per update: ``loss``, ``accuracy`` (the task's scoring: ``sequence_accuracy`` for exact
match tasks, else ``token_accuracy``), both accuracies, the gradient norm, and per kind of trial
where the task names kinds (PAI's direct and indirect queries); after each ``run`` (a chunk), the
same accuracies on one batch of the held-out split as ``test_*``.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax import struct

from memrl.learn.losses import masked_bit_cross_entropy, masked_sequence_cross_entropy
from memrl.learn.optimizers import make_optimizer
from memrl.learn.supervised_config import SupervisedConfig
from memrl.nn.compiled_init import compiled_init
from memrl.tasks.base import SequenceBatch


@struct.dataclass
class SupervisedState:
    """Everything a supervised run needs to continue; a checkpoint is exactly this."""

    params: Any
    opt_state: Any
    key: jax.Array
    update: jax.Array  # updates done
    task_state: Any = None  # the task's curriculum state (Learning to Execute's naive and combine), or None


def sequence_loss(logits: jax.Array, batch: SequenceBatch, output_kind: str) -> jax.Array:
    """The mean of the masked cross-entropy over the scored steps (per bit for bit targets)."""
    per_sequence = masked_bit_cross_entropy if output_kind == "bits" else masked_sequence_cross_entropy
    total = jax.vmap(per_sequence, in_axes=1)(logits, batch.targets, batch.target_mask).sum()
    scored = batch.target_mask.sum() * (logits.shape[-1] if output_kind == "bits" else 1)
    return total / jnp.maximum(scored, 1)


def right_steps(logits: jax.Array, targets: jax.Array, output_kind: str) -> jax.Array:
    """[T, B] true where the prediction is right: the argmax class, or every bit (logit > 0)."""
    if output_kind == "bits":
        return jnp.all((logits > 0) == (targets > 0.5), axis=-1)
    return logits.argmax(axis=-1) == targets


def accuracies(logits: jax.Array, batch: SequenceBatch, output_kind: str, scoring: str) -> dict[str, jax.Array]:
    """``token_accuracy`` (right scored steps / scored steps), ``sequence_accuracy`` (sequences
    with every scored step right), ``accuracy`` (the one the task scores by), and ``accuracy_<kind>``
    for each kind of trial the batch names (NaN when the batch has none of that kind)."""
    right, mask = right_steps(logits, batch.targets, output_kind), batch.target_mask
    token = (right & mask).sum() / jnp.maximum(mask.sum(), 1)
    whole = jnp.all(right | ~mask, axis=0)  # [B]
    scores = {"token_accuracy": token, "sequence_accuracy": whole.mean()}
    scores["accuracy"] = scores["sequence_accuracy" if scoring == "sequence" else "token_accuracy"]
    per_sequence = whole if scoring == "sequence" else (right & mask).sum(0) / jnp.maximum(mask.sum(0), 1)
    for kind, members in (batch.kinds or {}).items():
        scores[f"accuracy_{kind}"] = jnp.where(
            members.any(), (per_sequence * members).sum() / jnp.maximum(members.sum(), 1), jnp.nan
        )
    return scores


class SupervisedLearner:
    """The pure functions of a supervised run: its task, model and optimiser (module docstring)."""

    config_class = SupervisedConfig

    def __init__(self, config: SupervisedConfig):
        self.config = config
        self.task = config.task
        self.stage_tasks = config.stage_tasks
        self.stage_ends = np.cumsum([updates for updates, _ in config.curriculum], dtype=np.int32)
        self.model = config.model
        self.optimizer = make_optimizer(
            config.lr,
            config.max_grad_norm,
            adam_eps=config.adam_eps,
            warmup_steps=config.lr_warmup,
            weight_decay=config.weight_decay,
        )

    def init(self, key, params=None) -> SupervisedState:
        key, init_key, batch_key = jax.random.split(key, 3)
        if params is None:
            params = compiled_init(self.model, None, init_key, self.task.sample(batch_key).inputs)
        return SupervisedState(
            params, self.optimizer.init(params), key, jnp.zeros((), jnp.int32), self.task.initial_state()
        )

    def training_batch(self, key, update: jax.Array, task_state=None) -> SequenceBatch:
        """The batch of update number ``update``: each stage's task in turn, then the task's."""
        samplers = [lambda task=task: task.sample(key, "train", task_state) for task in (*self.stage_tasks, self.task)]
        if not self.stage_tasks:
            return samplers[0]()
        return jax.lax.switch(jnp.searchsorted(self.stage_ends, update, side="right"), samplers)

    def loss(self, params, batch: SequenceBatch) -> tuple[jax.Array, jax.Array]:
        """(the masked cross-entropy of ``params`` on ``batch``, the logits)."""
        logits = self.model.apply(params, batch.inputs)
        return sequence_loss(logits, batch, self.task.output_kind), logits

    def scores(self, params, batch: SequenceBatch) -> dict[str, jax.Array]:
        """The loss and accuracies of ``params`` on ``batch``."""
        loss, logits = self.loss(params, batch)
        return {"loss": loss, **accuracies(logits, batch, self.task.output_kind, self.task.scoring)}

    def update(self, state: SupervisedState, _=None) -> tuple[SupervisedState, dict]:
        key, batch_key = jax.random.split(state.key)
        batch = self.training_batch(batch_key, state.update, state.task_state)
        (loss, logits), grads = jax.value_and_grad(self.loss, has_aux=True)(state.params, batch)
        updates, opt_state = self.optimizer.update(grads, state.opt_state, state.params)
        state = SupervisedState(
            optax.apply_updates(state.params, updates), opt_state, key, state.update + 1, state.task_state
        )
        metrics = {
            "sequences": state.update * self.config.batch_size,
            "loss": loss,
            "grad_norm": optax.tree.norm(grads),
            **accuracies(logits, batch, self.task.output_kind, self.task.scoring),
            **self.task.state_metrics(state.task_state),
        }
        return state, metrics

    def run(self, state: SupervisedState, num_updates: int) -> tuple[SupervisedState, dict]:
        """``num_updates`` updates in one ``lax.scan``, metrics stacked per update; the held-out
        ``test_*`` loss and accuracies of the chunk's final parameters fill its last row (NaN
        before), and the task's curriculum state takes the held-out loss."""
        state, metrics = jax.lax.scan(self.update, state, None, num_updates)
        held_out = self.scores(state.params, self.task.sample(jax.random.fold_in(state.key, 1), "test"))
        state = state.replace(task_state=self.task.next_state(state.task_state, held_out["loss"]))
        last = jnp.arange(num_updates) == num_updates - 1
        metrics |= {f"test_{name}": jnp.where(last, value, jnp.nan) for name, value in held_out.items()}
        return state, metrics

    def evaluate(self, params, key, num_sequences: int) -> dict[str, jax.Array]:
        """The accuracies of ``params`` on ``num_sequences`` fresh sequences of the held-out split."""
        scores = self.scores(params, self.task.with_batch_size(num_sequences).sample(key, "test"))
        return {name: value for name, value in scores.items() if name != "loss"}

    def evaluation_summary(self, results: dict, num_sequences: int) -> str:
        """One line on what ``evaluate`` returned."""
        others = "".join(
            f", {name.replace('_', ' ')} {float(value):.3f}" for name, value in results.items() if name != "accuracy"
        )
        return f"accuracy {float(results['accuracy']):.3f}{others} on {num_sequences} held-out sequences"
