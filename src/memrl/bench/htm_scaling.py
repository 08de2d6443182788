"""HTM's efficiency claim (Lampinen et al. 2021, Sec. 2): attending over N chunks of C steps with
top-k costs O(N + kC) per query against O(NC) for full attention, and HTM trains 30-40% faster
than TrXL. Per-step time and memory of ``htm`` and ``trxl`` with equal width and layers, as the
attended past grows (TrXL's cache = HTM's store = ``past`` steps), both for one acting step and
for learning: the gradient of a loss over an unroll of ``train_steps`` steps."""

from __future__ import annotations

import time
from typing import NamedTuple

import jax
import jax.numpy as jnp
from rich.table import Table

from memrl import cores
from memrl.console import console
from memrl.nn.compiled_init import compiled_init


class ScalingRow(NamedTuple):
    past: int
    htm_step_ms: float
    trxl_step_ms: float
    htm_step_mb: float
    """carry + XLA temporaries of one acting step"""
    trxl_step_mb: float
    htm_train_ms: float
    """per unrolled step of the gradient"""
    trxl_train_ms: float
    htm_train_mb: float
    """XLA temporaries of the gradient"""
    trxl_train_mb: float


def full_memory(core_name: str, core_args: dict, batch: int, width: int):
    """(model, params, carry) with every memory slot valid."""
    model = cores.make(core_name, **core_args)
    carry = jax.tree.map(lambda a: jnp.ones_like(a) if a.dtype == bool else a, model.initialize_carry(None, (batch,)))
    params = compiled_init(
        model, None, jax.random.PRNGKey(0), carry, jnp.ones((batch, width)), jnp.zeros((batch,), bool)
    )
    return model, params, carry


def timed_ms(compiled, *args, repeats: int) -> float:
    """Milliseconds per call of a compiled function, after one warm-up call."""
    jax.block_until_ready(compiled(*args))
    start = time.perf_counter()
    for _ in range(repeats):
        out = compiled(*args)
    jax.block_until_ready(out)
    return 1000 * (time.perf_counter() - start) / repeats


def step_cost(core_name: str, core_args: dict, batch: int, width: int, repeats: int) -> tuple[float, float]:
    """(ms per step, carry + XLA working MB) of one jitted acting step with a full memory."""
    model, params, carry = full_memory(core_name, core_args, batch, width)
    x, reset = jnp.ones((batch, width)), jnp.zeros((batch,), bool)
    compiled = jax.jit(lambda p, c: model.apply(p, c, x, reset)).lower(params, carry).compile()
    carry_mb = sum(a.nbytes for a in jax.tree.leaves(carry)) / 2**20
    return timed_ms(
        compiled, params, carry, repeats=repeats
    ), carry_mb + compiled.memory_analysis().temp_size_in_bytes / 2**20


def training_cost(
    core_name: str, core_args: dict, batch: int, width: int, steps: int, repeats: int
) -> tuple[float, float]:
    """(ms per unrolled step, XLA working MB) of the gradient of mean(y²) over a ``steps``-step
    unroll that starts from a full memory."""
    model, params, carry = full_memory(core_name, core_args, batch, width)
    xs = jax.random.normal(jax.random.PRNGKey(1), (steps, batch, width))
    resets = jnp.zeros((steps, batch), bool)

    def loss(p):
        _, ys = model.apply(p, carry, xs, resets, method=model.unroll)
        return jnp.mean(ys**2)

    compiled = jax.jit(jax.grad(loss)).lower(params).compile()
    return timed_ms(compiled, params, repeats=repeats) / steps, compiled.memory_analysis().temp_size_in_bytes / 2**20


def htm_scaling_rows(
    pasts,
    width: int,
    layers: int,
    chunk_size: int,
    k: int,
    batch: int = 1,
    train_batch: int = 8,
    train_steps: int = 32,
    repeats: int = 5,
) -> list[ScalingRow]:
    """One row per attended past; HTM's window is one chunk."""
    shared = dict(num_layers=layers, d_model=width, num_heads=8, mlp_dim=2 * width)
    rows = []
    for past in pasts:
        htm = {**shared, "window": chunk_size, "chunk_size": chunk_size, "num_chunks": past // chunk_size, "k": k}
        trxl = {**shared, "memory_length": past}
        htm_step, trxl_step = (
            step_cost("htm", htm, batch, width, repeats),
            step_cost("trxl", trxl, batch, width, repeats),
        )
        htm_train = training_cost("htm", htm, train_batch, width, train_steps, repeats)
        trxl_train = training_cost("trxl", trxl, train_batch, width, train_steps, repeats)
        rows.append(
            ScalingRow(
                past,
                htm_step[0],
                trxl_step[0],
                htm_step[1],
                trxl_step[1],
                htm_train[0],
                trxl_train[0],
                htm_train[1],
                trxl_train[1],
            )
        )
    return rows


def htm_table(pasts: tuple[int, ...], width: int, layers: int) -> None:
    """HTM (16-step chunks, top-8) against TrXL attending over the same past: one acting step, and learning."""
    rows = htm_scaling_rows(pasts, width, layers, chunk_size=16, k=8, batch=1, train_batch=8, train_steps=32)
    shape = f"{layers} layers, width {width}; htm chunks of 16, k = 8"
    acting = Table(title=f"One acting step (batch 1, {shape}) vs attended past")
    learning = Table(title=f"Gradient over a 32-step unroll (batch 8, {shape}) vs attended past, per unrolled step")
    for table in (acting, learning):
        for column in ("past steps", "htm ms", "trxl ms", "trxl / htm", "htm MB", "trxl MB"):
            table.add_column(column)
    for row in rows:
        acting.add_row(
            str(row.past),
            f"{row.htm_step_ms:.2f}",
            f"{row.trxl_step_ms:.2f}",
            f"{row.trxl_step_ms / row.htm_step_ms:.2f}",
            f"{row.htm_step_mb:.1f}",
            f"{row.trxl_step_mb:.1f}",
        )
        learning.add_row(
            str(row.past),
            f"{row.htm_train_ms:.2f}",
            f"{row.trxl_train_ms:.2f}",
            f"{row.trxl_train_ms / row.htm_train_ms:.2f}",
            f"{row.htm_train_mb:.1f}",
            f"{row.trxl_train_mb:.1f}",
        )
    console.print(acting)
    console.print(learning)
