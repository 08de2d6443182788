"""EPN on the Memory&Planning Game (Ritter et al. 2021, Sec. 5, Fig. 2).

Finding: EPN approaches the shortest-path optimum (the full-map oracle) within an episode, far above
an LSTM, which reaches at best the within-trial optimum (an agent that plans only from what it has
seen since the last goal); the N×k planner recovers about 92% of the all-to-all one.

Presets (``--preset NAME``; without one, ``cpu`` on a CPU and ``paper`` on an accelerator):
- ``cpu``: memrl's settings for small budgets (Adam 1e-3, 16 environments × 20-step unrolls, 2
  planner iterations), 800k steps per run, which took 103 minutes on 2 CPU cores before EPN's planner
  ran on memory prefixes (an EPN update is 2.2 times faster since: docs/results.md).
- ``paper``: the paper's RMSprop and planner (4 iterations, one head) with values picked inside
  its tuning ranges (docs/experiment_settings.md says which), 1e8 steps per run.
The docs report the level reached at each budget measured.
"""

from __future__ import annotations

from pathlib import Path

import jax
import numpy as np

from memrl.analysis.planning_metrics import episodes_from_stream, late_episode_fraction, steps_to_nth_goal
from memrl.envs.memory_planning_policies import RETURNS_4X4
from memrl.experiments.base import Expectation, Experiment, register
from memrl.experiments.paper_settings import EPN_SETTINGS
from memrl.learn.impala_config import ImpalaConfig
from memrl.learn.paper_agents import EPN_AGENT, EPN_LSTM_BASELINE, EPN_PLANNER, EPN_TRAINING

ENV = "memory-planning/4x4"
EPISODE_LENGTH = 100
PRESETS = ("cpu", "paper")


def preset_runs(preset: str) -> dict[str, ImpalaConfig]:
    """EPN, EPN-N×k and the LSTM with ``preset``'s settings; the policy head is the paper's 2-layer 64-unit MLP."""
    common = dict(env=ENV, **EPN_AGENT, **EPN_TRAINING[preset])
    planner = {"capacity": EPISODE_LENGTH, **EPN_PLANNER[preset]}
    return {
        "4x4/epn": ImpalaConfig(core="epn", core_args=planner, **common),
        "4x4/epn-nxk": ImpalaConfig(core="epn-nxk", core_args={**planner, "k": 50}, **common),
        "4x4/lstm": ImpalaConfig(**EPN_LSTM_BASELINE, **common),
    }




def scripted_episodes(name: str, episodes: int, key) -> np.ndarray:
    """Rewards [episodes, 100] of a scripted Memory&Planning policy on 4×4."""
    from memrl import envs
    from memrl.envs.memory_planning_policies import POLICIES
    from memrl.envs.scripted_policy import episode_rewards

    env = envs.make(ENV)
    return np.asarray(jax.jit(lambda k: episode_rewards(env, POLICIES[name](env), k, episodes, EPISODE_LENGTH))(key))


def evaluate_planning(folders: dict, out: Path, eval_episodes_per_env: int = 4, max_goals: int = 20) -> dict:
    """Each seed's final agent: return, late-episode fraction of the oracle and steps to the n-th
    goal, with the scripted oracle, explorer and within-trial explorer on the same plot."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from memrl.console import console
    from memrl.run.final_agents import agent_rewards, final_params

    key = jax.random.PRNGKey(2021)
    scripted = {name: scripted_episodes(name, 1000, key) for name in RETURNS_4X4}
    results, curves = {}, {name: steps_to_nth_goal(rewards, max_goals) for name, rewards in scripted.items()}
    for run, folder in folders.items():
        rewards = agent_rewards(folder.load_config(), final_params(folder), key, eval_episodes_per_env * EPISODE_LENGTH)
        per_seed = [episodes_from_stream(r, EPISODE_LENGTH) for r in rewards]
        if not per_seed:
            continue
        episodes = np.concatenate(per_seed)
        results[run] = {
            "return": float(episodes.sum(1).mean()),
            "late_episode_fraction_of_oracle": late_episode_fraction(episodes, scripted["oracle"]),
            "episodes": len(episodes),
        }
        curves[run.split("/", 1)[1]] = steps_to_nth_goal(episodes, max_goals)
        console.print(f"{run}: return {results[run]['return']:.2f}, last third {100 * results[run]['late_episode_fraction_of_oracle']:.0f}% of the oracle's reward ({len(episodes)} episodes)")

    fig, ax = plt.subplots(figsize=(6, 4))
    for label, steps in curves.items():
        style = "--" if label in RETURNS_4X4 else "-"
        ax.plot(np.arange(1, max_goals + 1), steps, style, marker="o", markersize=3, label=label)
    ax.set_xlabel("n-th goal of the episode")
    ax.set_ylabel("steps to reach it")
    ax.set_title("Memory&Planning Game 4×4 (cf. Ritter et al. 2021, Fig. 2e)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "steps_to_goal.png", dpi=120)
    plt.close(fig)
    results["scripted_late_episode_fraction_of_oracle"] = {
        name: late_episode_fraction(rewards, scripted["oracle"]) for name, rewards in scripted.items()
    }
    results["steps_to_nth_goal"] = {k: [None if np.isnan(v) else float(v) for v in c] for k, c in curves.items()}
    console.print(f"steps to the n-th goal: {out / 'steps_to_goal.png'}")
    return results




def epn_memory_planning(preset: str) -> Experiment:
    """The experiment's runs and checks in ``preset``."""
    return Experiment(
        name="epn-memory-planning",
        version=3,  # 3: TensorFlow 1's RMSprop (squared-gradient average from 1) wherever RMSprop runs
        description=f"EPN (all-to-all), EPN (N×k, k = 50) and LSTM on the 4×4 Memory&Planning Game, V-trace, preset {preset!r}",
        reproduces="Ritter et al. 2021, Fig. 2 (Memory&Planning Game)",
        finding="EPN plans shortest paths in new mazes; an LSTM stays at the within-trial level",
        paper_steps=None,
        runs=preset_runs(preset),
        expectations=(
            Expectation("4x4/epn", ">=", 0.9 * RETURNS_4X4["oracle"], "EPN approaches the shortest-path optimum (oracle 31.6)", central=True),
            Expectation("4x4/lstm", "<=", RETURNS_4X4["within_trial_explorer"] + 2.0, "LSTM reaches at most about the within-trial optimum (10.8)"),
        ),
        optima={"4x4": [(f"{name} {value}", value) for name, value in RETURNS_4X4.items()]},
        evaluation=evaluate_planning,
        settings=EPN_SETTINGS,
    )


register("epn-memory-planning", epn_memory_planning, presets=PRESETS)
