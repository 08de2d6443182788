"""HTM on Passive Visual Match (Lampinen et al. 2021, Sec. 3.2, Fig. 4; memrl's 2-D analogue
``pvm`` of the DMLab level of Hung et al. 2019).

Finding: HTM chooses the square of the colour seen before the 30-second apple phase reliably, like
the RMA agent of Hung et al., while agents without a long memory are at chance on the choice
(1/3) and earn only the apples.

Each core trains with V-trace on ``pvm`` (its one-hot room needs no conv encoder, and memrl's
reconstruction loss covers images and tokens only, so none is used here); the final agents are scored
by the fraction of episodes whose choice was right (a reward of ``match_reward`` = 10 occurred),
which is what the expectations check: the return also counts apples (5-9 per episode for the agents of a
200k-step run), so it cannot tell a right choice from a guess.
"""

from __future__ import annotations

from pathlib import Path

import jax
import numpy as np

from memrl.experiments.base import Expectation, Experiment, register
from memrl.learn.impala_config import ImpalaConfig

EPISODE_STEPS = 600  # 5 + 30 + 5 seconds at 15 steps per second
MATCH_REWARD = 10.0

COMMON = dict(
    env="pvm", encoder_widths=(128,), head_widths=(256,), optimizer="adam", lr=3e-4,
    gamma=0.99, entropy_coef=0.01, num_envs=16, rollout_len=32, total_steps=2_000_000, seeds=1, updates_per_chunk=25,
)
TRANSFORMER = dict(num_layers=2, d_model=64, num_heads=4, mlp_dim=128)
RUNS = {
    "pvm/htm": ImpalaConfig(core="htm", core_args=dict(TRANSFORMER, window=16, chunk_size=16, num_chunks=EPISODE_STEPS // 16 + 1, k=4), **COMMON),
    "pvm/gtrxl": ImpalaConfig(core="gtrxl", core_args=dict(TRANSFORMER, memory_length=128), **COMMON),
    "pvm/lstm": ImpalaConfig(core="lstm", core_args={"hidden": 128}, **COMMON),
}


def evaluate_choices(folders: dict, out: Path, steps: int = 2 * EPISODE_STEPS) -> dict:
    """Fraction of finished episodes in which each final agent chose the matching square."""
    from memrl.console import console
    from memrl.experiments.final_agents import agent_evaluations, final_params

    key = jax.random.PRNGKey(2021)
    results = {}
    for run, folder in folders.items():
        config, params = folder.load_config(), final_params(folder)
        evaluations = agent_evaluations(config, params, key, steps)
        episodes = sum(int(done.sum()) for done, _, _ in evaluations)
        matches = sum(int((reward >= MATCH_REWARD).sum()) for _, _, reward in evaluations)
        if episodes:
            results[run] = {"fraction_correct": matches / episodes, "episodes": episodes}
            console.print(f"{run}: chose the matching square in {matches} of {episodes} episodes ({matches / episodes:.2f}; chance 0.33)")
    return {"choices": results}


HTM_PVM = Experiment(
    name="htm-pvm",
    version=2,
    description="HTM, GTrXL and LSTM on pvm (2-D Passive Visual Match), V-trace, 1 seed",
    reproduces="Lampinen et al. 2021, Sec. 3.2 (Passive Visual Match): HTM reliably correct, like RMA",
    runs=RUNS,
    expectations=(
        Expectation("pvm/htm", ">=", 0.9, "HTM chooses the matching square reliably, like RMA", evaluated=("choices", "fraction_correct")),
        Expectation("pvm/lstm", "<=", 0.5, "without a long memory the choice is near chance (1/3)", evaluated=("choices", "fraction_correct")),
    ),
    optima={"pvm": [("match only", MATCH_REWARD)]},
    evaluation=evaluate_choices,
)

register("htm-pvm", lambda: HTM_PVM)
