"""PPO training throughput per core on T-LN (64 envs x 128-step rollouts) against the minimal
single-file PPO-GRU loop (``minimal_ppo_gru``), so the framework's overhead shows as a ratio; and
T-LN stepped on the host through gymnasium against T-LN in JAX."""

from __future__ import annotations

import jax
from rich.table import Table

from memrl.bench import minimal_ppo_gru
from memrl.console import console
from memrl.learn.ppo import PPO
from memrl.learn.ppo_config import PPOConfig
from memrl.run.timing import time_training

BENCH_SHAPES = dict(env="tmaze/T-LN", num_envs=64, rollout_len=128, num_minibatches=4, update_epochs=4)


def measure_memrl(core: str, updates: int, separate_critic: bool = False, **core_args) -> tuple[float, float]:
    """PPO on T-LN with the benchmark shapes (and, with ``separate_critic``, a critic network of its own)."""
    config = PPOConfig(
        core=core, core_args=core_args, total_steps=updates * 64 * 128, separate_critic=separate_critic, **BENCH_SHAPES
    )
    return time_training(PPO(config), updates)


def ppo_table(cores: tuple[str, ...], updates: int) -> None:
    """PPO on T-LN per core (gru with hidden 128, the others at their defaults) beside the minimal
    PPO-GRU loop, with the ratio of each to it."""
    table = Table(
        title=f"PPO on tmaze/T-LN, 64 envs x 128 steps, {jax.default_backend()} ({jax.devices()[0].device_kind})"
    )
    for column in ("trainer", "compile s", "env steps/s", "ratio to minimal"):
        table.add_column(column)
    minimal = minimal_ppo_gru.measure(updates)
    table.add_row("minimal PPO-GRU (memrl.bench.minimal_ppo_gru)", f"{minimal[0]:.1f}", f"{minimal[1]:,.0f}", "1.00")
    for core in cores:
        compile_s, sps = measure_memrl(core, updates, **({"hidden": 128} if core == "gru" else {}))
        label = f"memrl {core}" + (" (hidden 128)" if core == "gru" else "")
        table.add_row(label, f"{compile_s:.1f}", f"{sps:,.0f}", f"{sps / minimal[1]:.2f}")
    console.print(table)


def host_table(updates: int) -> None:
    """PPO-GRU on T-LN in JAX against the same T-LN stepped on the host (memrl -> gymnasium ->
    ``gymnasium/<id>``), benchmark shapes."""
    import gymnasium

    from memrl import envs
    from memrl.envs.gymnasium_adapter import GymnasiumEnv

    if "memrl-bench/TLN-v0" not in gymnasium.registry:
        tln = envs.make("tmaze/T-LN")  # one environment object: the copies share its compiled steps
        gymnasium.register("memrl-bench/TLN-v0", entry_point=lambda: GymnasiumEnv(tln))
    table = Table(
        title="PPO-GRU (hidden 128), 64 envs x 128 steps: T-LN in JAX and stepped on the host through gymnasium"
    )
    for column in ("environment", "compile s", "env steps/s", "ratio to JAX"):
        table.add_column(column)
    rows = {}
    for label, env in (
        ("tmaze/T-LN (JAX)", "tmaze/T-LN"),
        ("gymnasium/memrl-bench/TLN-v0 (host, sync)", "gymnasium/memrl-bench/TLN-v0"),
    ):
        config = PPOConfig(
            core="gru", core_args={"hidden": 128}, total_steps=updates * 64 * 128, **{**BENCH_SHAPES, "env": env}
        )
        rows[label] = time_training(PPO(config), updates)
    jax_sps = rows["tmaze/T-LN (JAX)"][1]
    for label, (compile_s, sps) in rows.items():
        table.add_row(label, f"{compile_s:.1f}", f"{sps:,.0f}", f"{sps / jax_sps:.2f}")
    console.print(table)
