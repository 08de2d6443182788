"""EPN on one-shot graph navigation (Ritter et al. 2021, Sec. 5, One-Shot StreetLearn; memrl's
procedural-graph analogue ``graph-nav``).

Finding: EPN reaches a large fraction of the shortest-path oracle's reward in neighbourhoods it has
never seen, above an LSTM, and an EPN trained on 5 junctions keeps working on 7 and 9, more so with
more planner iterations ("thinking time").

After training on ``graph-nav/5`` the final agents are evaluated on 5, 7 and 9 junctions, EPN with
1, 2 and 4 planner iterations, as a fraction of the oracle's reward on the same environment.

Presets: ``cpu`` (epn-memory-planning's small-budget settings, 300k steps per run) and ``paper``
(epn-memory-planning's paper preset: RMSprop inside the paper's ranges, 4 planner iterations).
"""

from __future__ import annotations

from pathlib import Path

import jax
import numpy as np

from memrl.experiments.base import Expectation, Experiment, PaperSetting, chosen_preset, register
from memrl.experiments.epn_memory_planning import CPU, PAPER, PLANNER
from memrl.experiments.epn_memory_planning import SETTINGS as MEMORY_PLANNING_SETTINGS
from memrl.learn.impala_config import ImpalaConfig

EPISODE_LENGTH = 200
TEST_JUNCTIONS = (5, 7, 9)
ITERATIONS = (1, 2, 4)
PRESETS = ("cpu", "paper")


def preset_runs(preset: str) -> dict[str, ImpalaConfig]:
    """EPN and the LSTM with epn-memory-planning's ``preset`` settings, a store for whole episodes."""
    budget = {"cpu": 300_000, "paper": 100_000_000}[preset]
    settings = dict(CPU if preset == "cpu" else PAPER, total_steps=budget)
    common = dict(env="graph-nav/5", head_widths=(64, 64), gamma=0.95, seeds=3, **settings)
    planner = {"capacity": EPISODE_LENGTH, "iterations": 2, **PLANNER[preset]}
    return {
        "5 junctions/epn": ImpalaConfig(core="epn", core_args=planner, **common),
        "5 junctions/lstm": ImpalaConfig(core="lstm", core_args={"hidden": 256}, encoder_widths=(64,), feed_prev_action=True, **common),
    }


def oracle_return(junctions: int, key, episodes: int = 256) -> float:
    """The shortest-path oracle's mean return per 200-step episode on ``graph-nav/junctions``."""
    from memrl import envs
    from memrl.envs.graph_nav_policies import oracle
    from memrl.envs.scripted_policy import episode_rewards

    env = envs.make(f"graph-nav/{junctions}")
    return float(jax.jit(lambda k: episode_rewards(env, oracle(env), k, episodes, EPISODE_LENGTH))(key).sum(-1).mean())


def evaluate_generalisation(folders: dict, out: Path, episodes_per_env: int = 2) -> dict:
    """Fraction of the oracle's return on 5, 7 and 9 junctions (EPN at 1, 2, 4 iterations)."""
    from rich.table import Table

    from memrl.analysis.planning_metrics import episodes_from_stream
    from memrl.console import console
    from memrl.run.final_agents import agent_rewards, final_params

    key = jax.random.PRNGKey(2021)
    oracle = {j: oracle_return(j, key) for j in TEST_JUNCTIONS}
    rows = {}
    for run, folder in folders.items():
        config, params = folder.load_config(), final_params(folder)
        settings = [None] if config.core != "epn" else list(ITERATIONS)
        for iterations in settings:
            label = run.split("/", 1)[1] + ("" if iterations is None else f" ({iterations} iterations)")
            core_args = config.core_args if iterations is None else {**config.core_args, "iterations": iterations}
            rows[label] = {}
            for junctions in TEST_JUNCTIONS:
                per_seed = agent_rewards(config, params, key, episodes_per_env * EPISODE_LENGTH, env=f"graph-nav/{junctions}", core_args=core_args)
                if per_seed:
                    returns = np.concatenate([episodes_from_stream(r, EPISODE_LENGTH) for r in per_seed]).sum(1)
                    rows[label][junctions] = float(returns.mean() / oracle[junctions])
    table = Table(title="fraction of the oracle's return (trained on 5 junctions)")
    table.add_column("agent")
    for junctions in TEST_JUNCTIONS:
        table.add_column(f"{junctions} junctions (oracle {oracle[junctions]:.1f})")
    for label, by_size in rows.items():
        table.add_row(label, *[f"{by_size[j]:.2f}" if j in by_size else "-" for j in TEST_JUNCTIONS])
    console.print(table)
    return {"oracle_return": oracle, "fraction_of_oracle": rows}


SETTINGS = (
    PaperSetting("environment", "One-Shot StreetLearn: Street View neighbourhoods of 5 intersections (Sec. 5)", "env",
                 "memrl's procedural-graph analogue (no Street View data here)"),
    *(row for row in MEMORY_PLANNING_SETTINGS if row.field not in ("core_args.k", "core_args.capacity", "total_steps")),
    PaperSetting("episodic store", "the whole episode (Sec. 4)", "core_args.capacity"),
    PaperSetting("env steps per run", "not in the text (StreetLearn agents have trained for billions of steps, Sec. 5)", "total_steps",
                 "cpu: what 2 cores train in about an hour; paper: 1e8, the aim for half an hour of one H100 (not measured)"),
)


def epn_graph_nav(preset: str | None = None) -> Experiment:
    """The experiment with ``preset`` (default: the current JAX backend's)."""
    preset = chosen_preset(preset, PRESETS)
    return Experiment(
        name="epn-graph-nav",
        version=2,
        description=f"EPN and LSTM on graph-nav/5 (a One-Shot StreetLearn analogue), V-trace, preset {preset!r}; tested on 5, 7, 9 junctions",
        reproduces="Ritter et al. 2021, Sec. 5 (One-Shot StreetLearn) and its generalisation to larger neighbourhoods",
        finding="EPN navigates new street graphs from one exploration, near the shortest path",
        paper_steps=None,
        runs=preset_runs(preset),
        expectations=(Expectation("5 junctions/epn", ">=", 0.5 * 46.3, "EPN reaches at least half the oracle's return (oracle 46.3 on 5 junctions)", central=True),),
        optima={"5 junctions": [("oracle 46.3", 46.3)]},
        evaluation=evaluate_generalisation,
        preset=preset,
        presets=PRESETS,
        settings=SETTINGS,
    )


register("epn-graph-nav", epn_graph_nav)
