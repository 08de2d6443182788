"""The LSTM on the 4×4 Memory&Planning Game across the EPN paper's tuning ranges (Ritter et al.
2021, App. A.2, Table 1: RMSprop with ε 1e-4, decay 0.99, no momentum; learning rate in
[1e-5, 4e-4], entropy cost in [1e-3, 1e-2], mini-batch of 32-128 trajectories, unrolls of 10-40,
γ in [0.9, 0.95]).

The question: at memrl's first settings (Adam 1e-3, 16 environments, entropy 0.01, outside those
ranges) the LSTM, EPN and EPN-N×k all stopped at 7.1 reward per episode, above a random walk (5.1)
and below the within-trial explorer (10.8), which the paper's LSTM reaches. Does an LSTM trained
inside the paper's ranges leave that plateau? The LSTM is cheap, so the sweep fits a CPU: the
corners of lr × entropy × batch, with unrolls of 40 and γ 0.95, one seed each, and memrl's first
settings at the same budget beside them.
"""

from __future__ import annotations

from memrl.envs.memory_planning_policies import RETURNS_4X4
from memrl.experiments.base import Expectation, Experiment, PaperSetting, register
from memrl.experiments.paper_agents import EPN_AGENT, EPN_LSTM_BASELINE, EPN_RMSPROP
from memrl.learn.impala_config import ImpalaConfig

LEARNING_RATES = (1e-4, 4e-4)
ENTROPY_COSTS = (1e-3, 1e-2)
BATCHES = (32, 128)
LSTM = dict(
    env="memory-planning/4x4",
    **EPN_LSTM_BASELINE,
    **dict(EPN_AGENT, seeds=1),
    total_steps=5_000_000,
    updates_per_chunk=50,
)
PAPER_RANGE = dict(**EPN_RMSPROP, rollout_len=40)
FIRST_SETTINGS = dict(optimizer="adam", lr=1e-3, entropy_coef=0.01, num_envs=16, rollout_len=20)
"""epn-memory-planning v1's settings"""
V1_RUN = "4x4/v1 settings (Adam 1e-3, batch 16, unroll 20)"


def sweep_runs() -> dict[str, ImpalaConfig]:
    runs = {
        f"4x4/lr {lr:g}, entropy {entropy:g}, batch {batch}": ImpalaConfig(
            lr=lr, entropy_coef=entropy, num_envs=batch, **PAPER_RANGE, **LSTM
        )
        for lr in LEARNING_RATES
        for entropy in ENTROPY_COSTS
        for batch in BATCHES
    }
    runs[V1_RUN] = ImpalaConfig(**FIRST_SETTINGS, **LSTM)
    return runs


SETTINGS = (
    PaperSetting(
        "optimiser",
        "RMSprop, ε 1e-4, decay 0.99, momentum 0 (Table 1)",
        "optimizer",
        "the last run: epn-memory-planning v1's Adam",
    ),
    PaperSetting(
        "learning rate", "swept in [1e-5, 4e-4] (Table 1)", "lr", "the sweep: the top of the range and a quarter of it"
    ),
    PaperSetting("entropy cost", "swept in [1e-3, 1e-2] (Table 1)", "entropy_coef", "the sweep: both ends"),
    PaperSetting("mini-batch (trajectories)", "swept in [32, 128] (Table 1)", "num_envs", "the sweep: both ends"),
    PaperSetting("unroll length", "swept in [10, 40] (Table 1)", "rollout_len", "40, the top of the range"),
    PaperSetting("discount γ", "swept in [0.9, 0.95] (Table 1)", "gamma"),
    PaperSetting("seeds", "the best runs of a large sweep (Fig. 2)", "seeds", "one seed per setting"),
    PaperSetting(
        "env steps per run",
        "not in the text (the figures' axes were lost)",
        "total_steps",
        "what 2 CPU cores train in about half an hour",
    ),
)

EPN_SETTINGS_SWEEP = Experiment(
    name="epn-settings-sweep",
    version=3,  # 3: TensorFlow 1's RMSprop (squared-gradient average from 1) wherever RMSprop runs
    description="The LSTM on the 4×4 Memory&Planning Game: lr × entropy × batch at the corners of the EPN paper's ranges, "
    "and memrl's first settings, one seed each",
    reproduces="Ritter et al. 2021, Fig. 2b (the LSTM reaches the within-trial optimum, 10.8), under App. A.2's tuning ranges",
    finding="an LSTM agent reaches the within-trial explorer's return (10.8)",
    paper_steps=None,
    runs=sweep_runs(),
    # version 2 states Fig. 2b's level as a check (version 1 had none)
    expectations=(
        Expectation(
            V1_RUN,
            ">",
            RETURNS_4X4["random_walk"],
            f"the LSTM above the random walk ({RETURNS_4X4['random_walk']}: collects on the goal, else a random move)",
            learning=True,
        ),
        Expectation(
            V1_RUN,
            ">=",
            RETURNS_4X4["within_trial_explorer"],
            "the LSTM reaches the within-trial explorer's return (Fig. 2b)",
            central=True,
        ),
    ),
    optima={"4x4": [(f"{name} {value}", value) for name, value in RETURNS_4X4.items()]},
    settings=SETTINGS,
)

register("epn-settings-sweep", lambda: EPN_SETTINGS_SWEEP)
