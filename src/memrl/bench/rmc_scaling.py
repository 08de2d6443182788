"""The RMC's cost as its memory grows (Santoro et al. 2018, App. A.1: "models with more but smaller
memories are faster to run than those with fewer but larger memories"): time and memory of one
acting step and of learning (the gradient over an unroll), for memories of ``slots`` rows and
``heads`` heads of ``head_size`` units each; attention per step is over slots + 1 rows, the
projections and the MLP scale with slots x (heads x head_size)."""

from __future__ import annotations

from typing import NamedTuple

from memrl.bench.htm_scaling import step_cost, training_cost


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
