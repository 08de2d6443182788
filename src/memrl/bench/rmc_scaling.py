"""The RMC's cost as its memory grows (Santoro et al. 2018, App. A.1: "models with more but smaller
memories are faster to run than those with fewer but larger memories"): time and memory of one
acting step and of learning (the gradient over an unroll), for memories of ``slots`` rows and
``heads`` heads of ``head_size`` units each; attention per step is over slots + 1 rows, the
projections and the MLP scale with slots x (heads x head_size)."""

from __future__ import annotations

from typing import NamedTuple

import jax
from rich.table import Table

from memrl.bench.htm_scaling import step_cost, training_cost
from memrl.console import console
from memrl.run.timing import time_training


class RMCCostRow(NamedTuple):
    slots: int
    heads: int
    units: int
    """slots x heads x head_size: the memory's size"""
    step_ms: float
    step_mb: float
    """carry + XLA temporaries of one acting step"""
    train_ms: float
    """per unrolled step of the gradient"""
    train_mb: float


def rmc_cost_rows(
    slots: tuple[int, ...],
    heads: tuple[int, ...],
    head_size: int,
    width: int = 64,
    batch: int = 32,
    train_steps: int = 32,
    repeats: int = 5,
) -> list[RMCCostRow]:
    """One row per (slots, heads), inputs of ``width``."""
    rows = []
    for n in slots:
        for h in heads:
            args = dict(mem_slots=n, num_heads=h, head_size=head_size)
            step_ms, step_mb = step_cost("rmc", args, batch, width, repeats)
            train_ms, train_mb = training_cost("rmc", args, batch, width, train_steps, repeats)
            rows.append(RMCCostRow(n, h, n * h * head_size, step_ms, step_mb, train_ms, train_mb))
    return rows


def rmc_tables(updates: int, slots: tuple[int, ...], heads: tuple[int, ...], head_size: int) -> None:
    """The RMC's cost against its memory's shape, and the BoxWorld agents' V-trace throughput."""
    from memrl.experiments.rmc_boxworld import boxworld_runs
    from memrl.learn.impala import Impala

    table = Table(
        title=f"RMC (head size {head_size}, input 64, batch 32): one acting step, and the gradient of a 32-step unroll per step"
    )
    for column in ("slots", "heads", "units", "step ms", "step MB", "train ms/step", "train MB"):
        table.add_column(column)
    for row in rmc_cost_rows(slots, heads, head_size):
        table.add_row(
            str(row.slots),
            str(row.heads),
            f"{row.units:,}",
            f"{row.step_ms:.2f}",
            f"{row.step_mb:.1f}",
            f"{row.train_ms:.2f}",
            f"{row.train_mb:.1f}",
        )
    console.print(table)
    table = Table(
        title=f"V-trace on boxworld/viewport, the RMC paper's agents, 32 envs x 40 steps, {jax.default_backend()}"
    )
    for column in ("agent", "compile s", "env steps/s"):
        table.add_column(column)
    for run, config in boxworld_runs("cpu").items():
        compile_s, sps = time_training(Impala(config), updates)
        table.add_row(run.split("/")[1], f"{compile_s:.1f}", f"{sps:,.0f}")
    console.print(table)
