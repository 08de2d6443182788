"""EPN on one-shot graph navigation (Ritter et al. 2021, Sec. 5, One-Shot StreetLearn; memrl's
procedural-graph analogue ``graph-nav``).

Finding: EPN reaches a large fraction of the shortest-path oracle's reward in neighbourhoods it has
never seen, above an LSTM, and an EPN trained on 5 junctions keeps working on 7 and 9, more so with
more planner iterations ("thinking time").

After training on ``graph-nav/5`` the final agents are evaluated on 5, 7 and 9 junctions, EPN with
1, 2 and 4 planner iterations, as a fraction of the oracle's reward on the same environment.
"""

from __future__ import annotations

from pathlib import Path

import jax
import numpy as np

from memrl.experiments.base import Expectation, Experiment, register
from memrl.learn.impala_config import ImpalaConfig

EPISODE_LENGTH = 200
TEST_JUNCTIONS = (5, 7, 9)
ITERATIONS = (1, 2, 4)
# the settings of epn-memory-planning (Adam 1e-3, 20-step unrolls), with a memory for whole episodes
COMMON = dict(
    env="graph-nav/5", num_envs=16, rollout_len=20, head_widths=(64, 64), gamma=0.95, optimizer="adam", lr=1e-3,
    entropy_coef=0.01, total_steps=300_000, seeds=3, updates_per_chunk=25,
)
RUNS = {
    "5 junctions/epn": ImpalaConfig(core="epn", core_args={"capacity": EPISODE_LENGTH, "iterations": 2}, **COMMON),
    "5 junctions/lstm": ImpalaConfig(core="lstm", core_args={"hidden": 256}, encoder_widths=(64,), feed_prev_action=True, **COMMON),
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
    from memrl.experiments.final_agents import agent_rewards, final_params

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


EPN_GRAPH_NAV = Experiment(
    name="epn-graph-nav",
    version=1,
    description="EPN and LSTM on graph-nav/5 (a One-Shot StreetLearn analogue), V-trace, 3 seeds; tested on 5, 7, 9 junctions",
    reproduces="Ritter et al. 2021, Sec. 5 (One-Shot StreetLearn) and its generalisation to larger neighbourhoods",
    runs=RUNS,
    expectations=(Expectation("5 junctions/epn", ">=", 0.5 * 46.3, "EPN reaches at least half the oracle's return (oracle 46.3 on 5 junctions)"),),
    optima={"5 junctions": [("oracle 46.3", 46.3)]},
    evaluation=evaluate_generalisation,
)

register("epn-graph-nav", lambda: EPN_GRAPH_NAV)
