"""EPN (all-to-all and N×k) on the Memory&Planning Game: V-trace training throughput, and the time
of one acting step as the episodic memory grows."""

from __future__ import annotations

import time

import jax
from rich.table import Table

from memrl import envs
from memrl.console import console
from memrl.run.timing import time_training


def measure_vtrace(core: str, updates: int, **core_args) -> tuple[float, float]:
    """V-trace on memory-planning/4x4 with 16 envs x 100-step rollouts (whole episodes)."""
    from memrl import cores
    from memrl.learn.impala import Impala
    from memrl.learn.impala_config import ImpalaConfig

    config = ImpalaConfig(
        env=envs.make("memory-planning/4x4"),
        core=cores.make(core, **core_args),
        head_widths=(64, 64),
        num_envs=16,
        rollout_len=100,
        total_steps=updates * 1600,
    )
    return time_training(Impala(config), updates)


def measure_epn_step(core: str, capacity: int, batch: int = 16, repeats: int = 20) -> float:
    """Milliseconds per acting step of an EPN core whose memory holds ``capacity`` rows."""
    import jax.numpy as jnp

    from memrl import cores as core_registry

    model = core_registry.make(core, capacity=capacity)
    x = {"observation": jnp.ones((batch, 16)), "goal": jnp.ones((batch, 16)), "prev_action": jnp.ones((batch, 5))}
    carry = model.initialize_carry(None, (batch,))
    carry = {**carry, "count": jnp.full((batch,), float(capacity))}
    reset = jnp.zeros((batch,), bool)
    params = model.init(jax.random.PRNGKey(0), carry, x, reset)
    step = jax.jit(lambda c: model.apply(params, c, x, reset))
    jax.block_until_ready(step(carry))
    start = time.perf_counter()
    for _ in range(repeats):
        carry, y = step(carry)
    jax.block_until_ready(y)
    return 1000 * (time.perf_counter() - start) / repeats


def epn_tables(updates: int, capacities: tuple[int, ...]) -> None:
    """EPN training throughput and acting-step time against memory capacity."""
    table = Table(title=f"V-trace on memory-planning/4x4, 16 envs x 100 steps, {jax.default_backend()}")
    for column in ("core", "compile s", "env steps/s"):
        table.add_column(column)
    for core, core_args in (("epn", {"capacity": 100}), ("epn-nxk", {"capacity": 100}), ("lstm", {})):
        compile_s, sps = measure_vtrace(core, updates, **core_args)
        table.add_row(core, f"{compile_s:.1f}", f"{sps:,.0f}")
    console.print(table)
    table = Table(title="EPN acting step (batch 16, memory full) as the memory grows: all-to-all vs N×k (k = 50)")
    for column in ("capacity", "epn ms/step", "epn-nxk ms/step", "epn / epn-nxk"):
        table.add_column(column)
    for capacity in capacities:
        a2a, nxk = measure_epn_step("epn", capacity), measure_epn_step("epn-nxk", capacity)
        table.add_row(str(capacity), f"{a2a:.2f}", f"{nxk:.2f}", f"{a2a / nxk:.1f}")
    console.print(table)
