"""``memrl bench``: PPO training throughput per core on T-LN (64 envs x 128-step rollouts), and the
same for the minimal single-file PPO-GRU loop in ``benchmarks/`` so the framework's overhead shows
as a ratio. Figures, not tests."""

from __future__ import annotations

import importlib.util
import time
from pathlib import Path

import jax
from rich.table import Table

from memrl.console import console
from memrl.learn.ppo import PPO
from memrl.learn.ppo_config import PPOConfig

BENCH_SHAPES = dict(env="tmaze/T-LN", num_envs=64, rollout_len=128, num_minibatches=4, update_epochs=4)


def measure_memrl(core: str, updates: int, **core_args) -> tuple[float, float]:
    """(compile seconds, env steps/s after compile) of ``updates`` PPO updates in one jit."""
    config = PPOConfig(core=core, core_args=core_args, total_steps=updates * 64 * 128, **BENCH_SHAPES)
    trainer = PPO(config)
    run = jax.jit(lambda r: trainer.run(r, updates))
    runner = trainer.init(jax.random.PRNGKey(0))
    start = time.perf_counter()
    runner, _ = jax.block_until_ready(run(runner))
    compile_s = time.perf_counter() - start
    start = time.perf_counter()
    jax.block_until_ready(run(runner))
    return compile_s, updates * config.steps_per_update / (time.perf_counter() - start)


def measure_minimal(updates: int, path: Path = Path("benchmarks/minimal_ppo_gru.py")) -> tuple[float, float] | None:
    if not path.exists():
        return None
    spec = importlib.util.spec_from_file_location("minimal_ppo_gru", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.measure(updates)


def command(cores: tuple[str, ...] = ("gru", "lstm", "lstm-stack", "amrl-max", "amrl-avg", "set", "gtrxl"), updates: int = 3) -> None:
    """Training throughput (env steps/s after compile, compile time apart) per core.

    Args:
        cores: cores to measure (gru runs with hidden 128, the others with their defaults).
        updates: PPO updates per measurement (64 x 128 env steps each).
    """
    table = Table(title=f"PPO on tmaze/T-LN, 64 envs x 128 steps, {jax.default_backend()} ({jax.devices()[0].device_kind})")
    for column in ("trainer", "compile s", "env steps/s", "ratio to minimal"):
        table.add_column(column)
    minimal = measure_minimal(updates)
    results = {}
    for core in cores:
        results[core] = measure_memrl(core, updates, **({"hidden": 128} if core == "gru" else {}))
    if minimal:
        table.add_row("minimal PPO-GRU (benchmarks/)", f"{minimal[0]:.1f}", f"{minimal[1]:,.0f}", "1.00")
    for core, (compile_s, sps) in results.items():
        ratio = f"{sps / minimal[1]:.2f}" if minimal else "-"
        table.add_row(f"memrl {core}" + (" (hidden 128)" if core == "gru" else ""), f"{compile_s:.1f}", f"{sps:,.0f}", ratio)
    console.print(table)
