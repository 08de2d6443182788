"""HTM on Ballet (Lampinen et al. 2021, Sec. 3.1, Table 3).

Finding: with 2 dances every memory does well; with 8 dances HTM stays near 98% correct while TrXL
falls to ~66% (delay 16) / ~49% (delay 48) and an LSTM to chance; an HTM trained on 2-6 dances
generalises to 8.

Each core (htm, gtrxl, lstm) trains with V-trace and the reconstruction loss on the paper's mixed
distribution ({2, 4, 8} dancers × delays {16, 48}) and, for the generalisation test, on
{2, 4, 6} × {16, 48}; the final agents are then scored on 2, 4 and 8 dancers with delay 16 and on
8 with delay 48, as the fraction of episodes in which they touch the right dancer.

Two presets, chosen by the JAX backend when the experiment is built unless one is named
(``memrl reproduce htm-ballet --preset cpu`` on a GPU runs the small agents at GPU speed):
- ``cpu`` (the default on a CPU): Ballet's compact ``cells`` observation, small memories
  (2 layers of width 64), one seed, a budget that fits about two hours on 2 cores.
- ``paper`` (on a GPU): the 99×99 frames, the paper's 4 layers of width 512 with 8 heads, 3 seeds
  and a budget of 1e9 steps per run. The paper's exact budget and learning rate are memrl's
  reading, not verified against its text.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import jax
import numpy as np

from memrl.experiments.base import Expectation, Experiment, register
from memrl.learn.impala_config import ImpalaConfig

TEST_LEVELS = ("2_delay16", "4_delay16", "8_delay16", "8_delay48")
TRAINING_SETS = {"mixed": "ballet/mixed", "2-6 mixed": "ballet/2-6_mixed"}
LONGEST_EPISODE = 1024  # delay 48
K_SWEEP = (1, 2, 4, 8)
PRESETS = ("cpu", "paper")


def preset_runs(preset: str) -> dict[str, ImpalaConfig]:
    """The runs of a preset ("cpu" or "paper")."""
    if preset == "cpu":
        width, layers, heads, seeds, total_steps = 64, 2, 4, 1, 500_000
        visual = dict(env_args={"observation": "cells"}, conv_kernels=(1, 3, 3), conv_strides=(1, 1, 1))
        num_envs = 16
    elif preset == "paper":
        width, layers, heads, seeds, total_steps = 512, 4, 8, 3, 1_000_000_000
        visual = dict(env_args={}, conv_kernels=(9, 3, 3), conv_strides=(9, 1, 1))
        num_envs = 64
    else:
        raise ValueError(f"preset must be one of {PRESETS}, got {preset!r}")
    transformer = dict(num_layers=layers, d_model=width, num_heads=heads, mlp_dim=2 * width)
    cores = {
        "htm": dict(transformer, window=16, chunk_size=16, num_chunks=LONGEST_EPISODE // 16, k=4),
        "gtrxl": dict(transformer, memory_length=128),
        "lstm": dict(hidden=2 * width),
    }
    common = dict(
        encoder="conv", encoder_widths=(), head_widths=(512,), reconstruction_coef=1.0, optimizer="adam", lr=3e-4,
        gamma=0.99, entropy_coef=0.01, num_envs=num_envs, rollout_len=32, total_steps=total_steps, seeds=seeds,
        updates_per_chunk=25, **visual,
    )
    return {
        f"{panel}/{core}": ImpalaConfig(env=env, core=core, core_args=args, **common)
        for panel, env in TRAINING_SETS.items()
        for core, args in cores.items()
    }


def evaluate_levels(folders: dict, out: Path, steps: int = 1100, levels: tuple[str, ...] = TEST_LEVELS) -> dict:
    """Fraction of episodes ending on the right dancer, per final agent and test level."""
    from rich.table import Table

    from memrl.console import console
    from memrl.experiments.final_agents import agent_episode_returns, final_params

    key = jax.random.PRNGKey(2021)
    rows = {}
    for run, folder in folders.items():
        config, params = folder.load_config(), final_params(folder)
        rows[run] = {}
        for level in levels:
            per_seed = agent_episode_returns(config, params, key, steps, env=f"ballet/{level}")
            returns = np.concatenate(per_seed) if per_seed else np.zeros(0)
            if returns.size:
                rows[run][level] = {"correct": float(returns.mean()), "episodes": int(returns.size)}
    table = Table(title="fraction correct per test level (chance: 1 / dancers)")
    table.add_column("trained on / core")
    for level in levels:
        table.add_column(level)
    for run, by_level in rows.items():
        table.add_row(run, *[f"{by_level[lv]['correct']:.2f} ({by_level[lv]['episodes']})" if lv in by_level else "-" for lv in levels])
    console.print(table)
    return {"fraction_correct": rows}


def backend_preset(preset: str | None) -> str:
    """``preset`` (``preset_runs`` checks it), or without one the current JAX backend's: "cpu" on a
    CPU, "paper" on an accelerator."""
    if preset is None:
        return "cpu" if jax.default_backend() == "cpu" else "paper"
    return preset


def htm_ballet(preset: str | None = None) -> Experiment:
    """The experiment with ``preset`` (default: the current JAX backend's)."""
    preset = backend_preset(preset)
    return Experiment(
        name="htm-ballet",
        version=1,
        description=f"HTM, GTrXL and LSTM on Ballet (V-trace + reconstruction), preset {preset!r}; tested on 2, 4, 8 dancers",
        reproduces="Lampinen et al. 2021, Sec. 3.1 and Table 3 (Ballet), with the 2-6 → 8 dancers generalisation test",
        runs=preset_runs(preset),
        expectations=(Expectation("mixed/htm", ">=", 0.9, "HTM is near 98% correct on the mixed levels (paper, Table 3)"),),
        optima={"mixed": [("always correct", 1.0)], "2-6 mixed": [("always correct", 1.0)]},
        evaluation=evaluate_levels,
    )


def htm_k_sweep(preset: str | None = None) -> Experiment:
    """HTM with k ∈ {1, 2, 4, 8} chunks read per query on the mixed Ballet levels (App. D.3), with
    ``preset`` (default: the current JAX backend's)."""
    preset = backend_preset(preset)
    base = preset_runs(preset)["mixed/htm"]
    runs = {f"mixed/k={k}": dataclasses.replace(base, core_args={**base.core_args, "k": k}) for k in K_SWEEP}
    return Experiment(
        name="htm-k-sweep",
        version=1,
        description=f"HTM on the mixed Ballet levels with k = 1, 2, 4, 8 (preset {preset!r})",
        reproduces="Lampinen et al. 2021, App. D.3 (number of chunks attended)",
        runs=runs,
        optima={"mixed": [("always correct", 1.0)]},
        evaluation=evaluate_levels,
    )


register("htm-ballet", htm_ballet)
register("htm-k-sweep", htm_k_sweep)
