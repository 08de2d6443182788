"""PPO training throughput per core on T-LN (64 envs x 128-step rollouts) against the minimal
single-file PPO-GRU loop (``minimal_ppo_gru``), so the framework's overhead shows as a ratio; and
environments stepped on the host through gymnasium (T-LN, POPGym) against T-LN in JAX, each also
pipelined (a one-update policy lag: acting beside learning)."""

from __future__ import annotations

import os

import jax
from rich.table import Table

from memrl import envs
from memrl.bench import minimal_ppo_gru
from memrl.console import console
from memrl.cores import CORES
from memrl.cores.gru import GRU
from memrl.learn.ppo import PPO
from memrl.learn.ppo_config import PPOConfig
from memrl.run.timing import time_training

BENCH_SHAPES = dict(num_envs=64, rollout_len=128, num_minibatches=4, update_epochs=4)


def measure_memrl(core: str, updates: int, separate_critic: bool = False, **core_args) -> tuple[float, float]:
    """PPO on T-LN with the benchmark shapes (and, with ``separate_critic``, a critic network of its own)."""
    config = PPOConfig(
        core=CORES.make(core, **core_args),
        env=envs.make("tmaze/T-LN"),
        total_steps=updates * 64 * 128,
        separate_critic=separate_critic,
        **BENCH_SHAPES,
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


HOST_TASKS = ("RepeatPreviousEasy", "MineSweeperEasy")
"""POPGym tasks of the host table (a cheap step and a dear one), where the popgym extra is installed"""
PIPELINED = {"policy_lag": 1}
"""a row's settings that make its run act for the next update while this one learns (``run/pipeline.py``)"""


def host_rows() -> dict[str, tuple[str, dict, dict]]:
    """The host table's environments (label -> env, env_args, learner settings): T-LN in JAX and through
    gymnasium, XLand-MiniGrid's memory task and Craftax-Classic in JAX (with their extras), and POPGym's ``HOST_TASKS``, each also with a one-update policy lag (pipelined), the
    dear one also with a process per copy (``vectorization async``)."""
    import importlib.util

    import gymnasium

    from memrl.envs.gymnasium_adapter import GymnasiumEnv

    if "memrl-bench/TLN-v0" not in gymnasium.registry:
        tln = envs.make("tmaze/T-LN")  # one environment object: the copies share its compiled steps
        gymnasium.register("memrl-bench/TLN-v0", entry_point=lambda: GymnasiumEnv(tln))
    rows = {
        "tmaze/T-LN (JAX)": ("tmaze/T-LN", {}, {}),
        "gymnasium/memrl-bench/TLN-v0 (host, sync)": ("gymnasium/memrl-bench/TLN-v0", {}, {}),
    }
    if importlib.util.find_spec("xminigrid"):  # a JAX-native suite's memory task, stepped inside the program
        rows["xminigrid/MiniGrid-MemoryS8 (JAX)"] = ("xminigrid/MiniGrid-MemoryS8", {}, {})
    if importlib.util.find_spec("craftax"):
        rows["craftax/Craftax-Classic-Symbolic-v1 (JAX)"] = ("craftax/Craftax-Classic-Symbolic-v1", {}, {})
        rows["craftax/Craftax-Classic-Symbolic-v1 (JAX, resets 4: optimistic)"] = (
            "craftax/Craftax-Classic-Symbolic-v1",
            {"resets": 4},
            {},
        )
    if importlib.util.find_spec("popgym"):
        for task in HOST_TASKS:
            env = f"gymnasium/popgym:popgym-{task}-v0"
            rows[f"POPGym {task} (host, sync)"] = (env, {}, {})
            rows[f"POPGym {task} (host, sync, policy_lag 1: pipelined)"] = (env, {}, PIPELINED)
        rows[f"POPGym {HOST_TASKS[-1]} (host, async)"] = (
            f"gymnasium/popgym:popgym-{HOST_TASKS[-1]}-v0",
            {"vectorization": "async"},
            {},
        )
    return rows


def time_host_share(learner, updates: int) -> tuple[float, float, float]:
    """``time_training``'s figures (pipelined with a policy lag) and the share of the timed run's wall
    time spent in the host's steps (0 in JAX)."""
    host_seconds = lambda: getattr(learner.env, "host_seconds", 0.0)
    before = []
    compile_s, sps = time_training(
        learner, updates, before_timing=lambda: before.append(host_seconds()), pipelined=learner.config.policy_lag > 0
    )
    return compile_s, sps, (host_seconds() - before[0]) * sps / (updates * learner.config.steps_per_update)


def host_table(updates: int) -> None:
    """PPO-GRU on T-LN in JAX against the same T-LN stepped on the host (memrl -> gymnasium ->
    ``gymnasium/<id>``) and POPGym tasks, benchmark shapes, with the share of the wall time that the
    host's steps take, and the same runs with a one-update policy lag, whose acting goes beside the
    update before (worth it where the process has a second core)."""
    table = Table(
        title=f"PPO-GRU (hidden 128), 64 envs x 128 steps, on {len(os.sched_getaffinity(0))} core(s): "
        "T-LN in JAX, and environments stepped on the host"
    )
    for column in ("environment", "compile s", "env steps/s", "ratio to T-LN in JAX", "time in host steps"):
        table.add_column(column)
    jax_sps = None
    for label, (env, env_args, settings) in host_rows().items():
        config = PPOConfig(
            core=GRU(hidden=128),
            total_steps=updates * 64 * 128,
            env=envs.make(env, **env_args),
            **{**BENCH_SHAPES, **settings},
        )
        compile_s, sps, share = time_host_share(PPO(config), updates)
        jax_sps = jax_sps or sps
        table.add_row(label, f"{compile_s:.1f}", f"{sps:,.0f}", f"{sps / jax_sps:.2f}", f"{share:.0%}")
    console.print(table)
