"""Supervised training of an analysis's model by the learners' Adam (``learn/optimizers.py``), in chunks of steps with a checkpoint after
each: what the supervised checks (planner distances, visited moves, the probes of Ballet's memory and of a task's decision) share.

A loss is a function ``loss(params, key, *loss_args) -> (value, metrics)`` of fresh data drawn from
``key`` (``metrics`` a tuple of scalars, possibly empty), with hashable ``loss_args`` (sizes, a core,
a probe): one program per setting, so an interrupted training and its resumption share it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path

import jax
import numpy as np
import optax
from flax import serialization

from memrl.learn.optimizers import make_optimizer
from memrl.run.folder import atomic_write, resume_training


@functools.partial(jax.jit, static_argnums=(0, 1, 2, 3))
def train_chunk(loss: Callable, loss_args: tuple, lr: float, clip_norm: float | None, carry, keys):
    """One Adam step on ``loss`` per key; returns (carry, (loss values, metrics) per step)."""
    optimizer = make_optimizer(lr, clip_norm)

    def update(carry, key):
        params, state = carry
        (value, metrics), grads = jax.value_and_grad(loss, has_aux=True)(params, key, *loss_args)
        updates, state = optimizer.update(grads, state, params)
        return (optax.apply_updates(params, updates), state), (value, metrics)

    return jax.lax.scan(update, carry, keys)


def check_chunks(steps: int, chunk: int) -> None:
    """Refuse a number of steps that is not a positive multiple of the chunk."""
    if steps < 1 or steps % chunk:
        raise ValueError(f"steps must be a positive multiple of {chunk} (steps between checkpoints), got {steps}")


def train_in_chunks(
    loss: Callable,
    loss_args: tuple,
    params,
    key,
    steps: int,
    chunk: int,
    lr: float,
    clip_norm: float | None = None,
    checkpoint_dir: Path | None = None,
    settings: dict | None = None,
    what: str = "a training",
    on_chunk: Callable | None = None,
):
    """Train ``params`` for ``steps`` Adam steps of ``loss`` on data from ``key``; returns (params,
    curve [steps // chunk, 1 + metrics]: each chunk's mean loss and mean metrics).

    With ``checkpoint_dir`` the state is saved there after every chunk (settings.json,
    checkpoint.msgpack, written atomically), and a call with the same ``settings`` continues from it
    (``what`` names the training in a refusal of other settings): an interrupted training loses at
    most one chunk and ends with the same parameters as an uninterrupted one. ``on_chunk(steps done,
    *that chunk's curve row)`` reports progress."""
    check_chunks(steps, chunk)
    chunk_keys = jax.random.split(key, steps).reshape(steps // chunk, chunk, -1)
    metrics = jax.eval_shape(lambda p: loss(p, key, *loss_args)[1], params)
    saved = {
        "carry": (params, make_optimizer(lr, clip_norm).init(params)),
        "curve": np.full((len(chunk_keys), 1 + len(metrics)), np.nan),
        "chunks_done": 0,
    }
    if checkpoint_dir is not None:
        saved = resume_training(checkpoint_dir, settings or {}, saved, what)
    carry, curve = saved["carry"], np.array(saved["curve"])
    for done in range(int(saved["chunks_done"]), len(chunk_keys)):
        carry, (values, chunk_metrics) = train_chunk(loss, loss_args, lr, clip_norm, carry, chunk_keys[done])
        curve[done] = [float(values.mean()), *(float(m.mean()) for m in chunk_metrics)]
        if checkpoint_dir is not None:
            atomic_write(
                checkpoint_dir / "checkpoint.msgpack",
                serialization.to_bytes({"carry": carry, "curve": curve, "chunks_done": done + 1}),
            )
        if on_chunk is not None:
            on_chunk((done + 1) * chunk, *curve[done])
    return carry[0], curve


CHUNK_STEPS = 50
"""a probe's training steps between checkpoints"""


def probe_loss(params, key, probe, batch_size: int):
    """A probe's ``loss(params, key, batch_size) -> (value, metrics)`` in the form chunked training takes."""
    return probe.loss(params, key, batch_size)


def train_probe(
    probe,
    key,
    steps: int,
    batch_size: int = 16,
    lr: float = 3e-4,
    chunk: int = CHUNK_STEPS,
    checkpoint_dir: Path | None = None,
    settings: dict | None = None,
    on_chunk: Callable | None = None,
):
    """Train a probe's agent (``probe.init(key)``, ``probe.loss(params, key, batch_size) -> (L,
    metrics)`` on fresh episodes; ``probe.what`` names it in a refusal of other settings) by Adam on L, gradients clipped to norm 1; returns (params, per
    chunk: the mean loss and mean metrics). With ``checkpoint_dir`` the state is saved there after
    every chunk, and a call with the same ``settings`` continues from it."""
    init_key, data_key = jax.random.split(key)
    return train_in_chunks(
        probe_loss,
        (probe, batch_size),
        probe.init(init_key),
        data_key,
        steps,
        chunk,
        lr,
        clip_norm=1.0,
        checkpoint_dir=checkpoint_dir,
        settings=settings,
        what=probe.what,
        on_chunk=on_chunk,
    )
