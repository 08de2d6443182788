"""HTM's efficiency claim (Lampinen et al. 2021, Sec. 2): attending over N chunks of C steps with
top-k costs O(N + kC) per query against O(NC) for full attention. Per-step time and compiled
memory of one acting step of ``htm`` and ``trxl`` with equal width and layers, as the attended
past grows (TrXL's cache = HTM's store = ``past`` steps)."""

from __future__ import annotations

import time

import jax
import jax.numpy as jnp

from memrl import cores


def step_cost(core_name: str, core_args: dict, batch: int, width: int, repeats: int) -> tuple[float, float, float]:
    """(ms per step, carry MB, XLA working MB) of one jitted step with a full memory."""
    model = cores.make(core_name, **core_args)
    carry = jax.tree.map(lambda a: jnp.ones_like(a) if a.dtype == bool else a, model.initialize_carry(None, (batch,)))
    x, reset = jnp.ones((batch, width)), jnp.zeros((batch,), bool)
    params = model.init(jax.random.PRNGKey(0), carry, x, reset)
    compiled = jax.jit(lambda p, c: model.apply(p, c, x, reset)).lower(params, carry).compile()
    carry_mb = sum(a.nbytes for a in jax.tree.leaves(carry)) / 2**20
    working_mb = compiled.memory_analysis().temp_size_in_bytes / 2**20
    jax.block_until_ready(compiled(params, carry))
    start = time.perf_counter()
    for _ in range(repeats):
        out = compiled(params, carry)
    jax.block_until_ready(out)
    return 1000 * (time.perf_counter() - start) / repeats, carry_mb, working_mb


def htm_scaling_rows(pasts, width: int, layers: int, chunk_size: int, k: int, batch: int = 1, repeats: int = 5):
    """One row per attended past: (past, htm ms, trxl ms, trxl/htm time, htm MB, trxl MB)."""
    shared = dict(num_layers=layers, d_model=width, num_heads=8, mlp_dim=2 * width)
    rows = []
    for past in pasts:
        htm = step_cost("htm", {**shared, "window": chunk_size, "chunk_size": chunk_size, "num_chunks": past // chunk_size, "k": k}, batch, width, repeats)
        trxl = step_cost("trxl", {**shared, "memory_length": past}, batch, width, repeats)
        rows.append((past, htm[0], trxl[0], trxl[0] / htm[0], htm[1] + htm[2], trxl[1] + trxl[2]))
    return rows
