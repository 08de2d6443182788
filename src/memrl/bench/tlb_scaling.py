"""TLB's efficiency claim (Didolkar et al. 2022, Table 5): against a Transformer of the same width,
the chunked model infers faster (3.5x at chunk 1000, 1.2x at chunk 10), trains faster at large
chunks (4.4x at 1000 and 100, 0.7x at 10) and needs a tenth of the memory, on LRA's text
classification. Both models here are memrl's, in their whole-sequence form (``core.sequence``):
the sizes of the paper's text-classification setup (7.3) — Transformer: 4 self-attention layers;
TLB: 2 self-attention layers, 1 state read, 1 state update, 10 state vectors; width 256, FFN 1024,
4 heads. Inference: the forward pass; training: the gradient of mean(y²); memory: XLA's working
memory for each (``memory_analysis``), time after compile."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
from rich.table import Table

from memrl import cores
from memrl.bench.htm_scaling import timed_ms
from memrl.console import console
from memrl.nn.compiled_init import compiled_init

PAPER_RATIOS = {  # Table 5: chunk -> (inference speed, inference memory, training speed, training memory), Transformer = 1
    1000: (3.5, 0.09, 4.4, 0.14),
    100: (3.6, 0.08, 4.4, 0.08),
    40: (3.3, 0.12, 2.2, 0.49),
    20: (2.2, 0.08, 1.4, 0.40),
    10: (1.2, 0.1, 0.7, 0.42),
}
SHARED = dict(d_model=256, mlp_dim=1024, num_heads=4)
TRANSFORMER = dict(num_reads=2, self_per_read=2)  # 4 self-attention layers
TLB = dict(num_reads=1, self_per_read=2, num_updates=1, num_state=10)


class SequenceCost(NamedTuple):
    inference_ms: float
    inference_mb: float
    training_ms: float
    training_mb: float


def sequence_cost(
    core_name: str, core_args: dict, length: int, batch: int, repeats: int, training: bool = True
) -> SequenceCost:
    """Time (after compile) and XLA working memory of the forward pass and (unless not
    ``training``: NaN) of the gradient of the core's sequence form on ``length`` steps of random inputs."""
    model = cores.make(core_name, **core_args)
    xs = jax.random.normal(jax.random.PRNGKey(1), (length, batch, core_args["d_model"]))
    params = compiled_init(
        model, None, jax.random.PRNGKey(0), model.initialize_carry(None, (batch,)), xs[0], jnp.ones((batch,), bool)
    )

    def forward(p):
        return model.apply(p, xs, method=model.sequence)[1]

    inference = jax.jit(forward).lower(params).compile()
    inference_cost = (
        timed_ms(inference, params, repeats=repeats),
        inference.memory_analysis().temp_size_in_bytes / 2**20,
    )
    if not training:
        return SequenceCost(*inference_cost, float("nan"), float("nan"))
    gradient = jax.jit(jax.grad(lambda p: jnp.mean(forward(p) ** 2))).lower(params).compile()
    return SequenceCost(
        *inference_cost,
        timed_ms(gradient, params, repeats=repeats),
        gradient.memory_analysis().temp_size_in_bytes / 2**20,
    )


def transformer_cost(length: int, batch: int, repeats: int) -> SequenceCost:
    return sequence_cost("transformer", SHARED | TRANSFORMER | dict(chunk_size=length), length, batch, repeats)


def tlb_cost(chunk_size: int, length: int, batch: int, repeats: int) -> SequenceCost:
    return sequence_cost("tlb", SHARED | TLB | dict(chunk_size=chunk_size), length, batch, repeats)


def ratios(tlb: SequenceCost, transformer: SequenceCost) -> tuple[float, float, float, float]:
    """Table 5's ratios: speed = Transformer time / TLB time, memory = TLB memory / Transformer memory."""
    return (
        transformer.inference_ms / tlb.inference_ms,
        tlb.inference_mb / max(transformer.inference_mb, 1e-9),
        transformer.training_ms / tlb.training_ms,
        tlb.training_mb / max(transformer.training_mb, 1e-9),
    )


def tlb_tables(chunks: tuple[int, ...], length: int, lengths: tuple[int, ...], batch: int, repeats: int = 3) -> None:
    """TLB against a Transformer of its width: Table 5's ratios per chunk size, then as the sequence grows."""

    base = transformer_cost(length, batch, repeats)
    by_chunk = Table(
        title=f"TLB vs Transformer (Table 5), {length} steps, batch {batch}, width 256: speed = Transformer time / TLB time, "
        "memory = TLB / Transformer (paper's in brackets)"
    )
    for column in (
        "chunk",
        "TLB infer ms",
        "TLB train ms",
        "infer speed",
        "infer memory",
        "train speed",
        "train memory",
    ):
        by_chunk.add_column(column)
    by_chunk.add_row(
        "Transformer",
        f"{base.inference_ms:.1f}",
        f"{base.training_ms:.1f}",
        "1",
        f"1 ({base.inference_mb:.0f} MB)",
        "1",
        f"1 ({base.training_mb:.0f} MB)",
    )
    for chunk in chunks:
        cost = tlb_cost(chunk, length, batch, repeats)
        paper = PAPER_RATIOS.get(chunk)
        cells = [
            f"{ours:.2f}" + (f" ({theirs})" if paper else "")
            for ours, theirs in zip(ratios(cost, base), paper or (None,) * 4)
        ]
        by_chunk.add_row(str(chunk), f"{cost.inference_ms:.1f}", f"{cost.training_ms:.1f}", *cells)
    console.print(by_chunk)
    growth = Table(title=f"TLB (chunks of 100) vs Transformer as the sequence grows, batch {batch}")
    for column in (
        "steps",
        "Transformer infer / train ms",
        "TLB infer / train ms",
        "infer speed",
        "infer memory",
        "train speed",
        "train memory",
    ):
        growth.add_column(column)
    for steps in lengths:
        base, cost = transformer_cost(steps, batch, repeats), tlb_cost(100, steps, batch, repeats)
        growth.add_row(
            str(steps),
            f"{base.inference_ms:.1f} / {base.training_ms:.1f}",
            f"{cost.inference_ms:.1f} / {cost.training_ms:.1f}",
            *(f"{r:.2f}" for r in ratios(cost, base)),
        )
    console.print(growth)
