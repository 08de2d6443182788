"""The LSTM on the 4×4 Memory&Planning Game across the EPN paper's tuning ranges (Ritter et al.
2021, App. A.2, Table 1: RMSprop with ε 1e-4, decay 0.99, no momentum; learning rate in
[1e-5, 4e-4], entropy cost in [1e-3, 1e-2], mini-batch of 32-128 trajectories, unrolls of 10-40,
γ in [0.9, 0.95]).

The question: at memrl's first settings (Adam 1e-3, 16 environments, entropy 0.01, outside those
ranges) the LSTM, EPN and EPN-N×k all stopped at 7.1 reward per episode, above a random walk (5.1)
and below the within-trial explorer (10.8), which the paper's LSTM reaches. Does an LSTM trained
inside the paper's ranges leave that plateau? The LSTM is cheap, so the sweep fits a CPU: the
corners of lr × entropy × batch, with unrolls of 40 and γ 0.95, one seed each, and memrl's first
settings at the same budget beside them, on three fresh seeds, since the claim is read there.

"Reaches the explorer's return" is two-sided: the LSTM's return within ``BAND`` of 10.83, each side
decided by its own one-sided test over the seeds (two one-sided tests: equivalence at 95%). Version
3 asked for at least 10.83 on one seed, which an LSTM at the level fails by noise (one CPU seed gave
10.63; three GPU seeds of the paper preset 10.58-10.78).
"""

from __future__ import annotations

from memrl import envs
from memrl.agents.paper_agents import EPN_AGENT, EPN_LSTM_BASELINE, EPN_RMSPROP
from memrl.envs.memory_planning_policies import RETURNS_4X4
from memrl.experiments.base import Expectation, Experiment, PaperSetting, register
from memrl.learn.impala_config import ImpalaConfig

LEARNING_RATES = (1e-4, 4e-4)
ENTROPY_COSTS = (1e-3, 1e-2)
BATCHES = (32, 128)
LSTM = dict(
    env=envs.make("memory-planning/4x4"),
    **EPN_LSTM_BASELINE,
    **dict(EPN_AGENT, seeds=1),
    total_steps=5_000_000,
    updates_per_chunk=50,
)
PAPER_RANGE = dict(**EPN_RMSPROP, rollout_len=40)
FIRST_SETTINGS = dict(optimizer="adam", lr=1e-3, entropy_coef=0.01, num_envs=16, rollout_len=20)
"""epn-memory-planning v1's settings"""
V1_RUN = "4x4/v1 settings (Adam 1e-3, batch 16, unroll 20)"
V1_RUN_SEEDS = dict(seeds=3, seed=10)
"""the run the claim is read on: three seeds, fresh (version 3 ran seed 0 of every run)"""
BAND = 0.5
"""how near the explorer's 10.83 "reaches" means, stated before the runs: half a collected goal per
100-step episode (5% of the level)"""


def sweep_runs() -> dict[str, ImpalaConfig]:
    runs = {
        f"4x4/lr {lr:g}, entropy {entropy:g}, batch {batch}": ImpalaConfig(
            lr=lr, entropy_coef=entropy, num_envs=batch, **PAPER_RANGE, **LSTM
        )
        for lr in LEARNING_RATES
        for entropy in ENTROPY_COSTS
        for batch in BATCHES
    }
    runs[V1_RUN] = ImpalaConfig(**FIRST_SETTINGS, **{**LSTM, **V1_RUN_SEEDS})
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
    PaperSetting(
        "seeds",
        "the best runs of a large sweep (Fig. 2)",
        "seeds",
        "one seed per corner; three (fresh) at version 1's settings, where the claim is checked",
    ),
    PaperSetting(
        "env steps per run",
        "not in the text (the figures' axes were lost)",
        "total_steps",
        "what 2 CPU cores train in about half an hour",
    ),
)

EXPLORER = RETURNS_4X4["within_trial_explorer"]

EPN_SETTINGS_SWEEP = Experiment(
    name="epn-settings-sweep",
    version=4,  # 3: TensorFlow 1's RMSprop (squared-gradient average from 1) wherever RMSprop runs
    changes=(
        "the claim read on three fresh seeds of version 1's settings, as two one-sided tests of a band of 0.5 around"
        " the explorer's 10.83 (issue 84 §3): version 3 asked one seed for at least 10.83, which an LSTM at the level"
        " fails by noise (10.63 on the CPU; 10.58-10.78 on three GPU seeds)"
    ),
    description="The LSTM on the 4×4 Memory&Planning Game: lr × entropy × batch at the corners of the EPN paper's ranges "
    "(one seed each), and memrl's first settings (three seeds)",
    reproduces="Ritter et al. 2021, Fig. 2b (the LSTM reaches the within-trial optimum, 10.8), under App. A.2's tuning ranges",
    finding="an LSTM agent reaches the within-trial explorer's return (10.8)",
    paper_steps=None,
    runs=sweep_runs(),
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
            round(EXPLORER - BAND, 2),
            f"the LSTM reaches the within-trial explorer's return (Fig. 2b): no lower than {EXPLORER} - {BAND}",
            central=True,
        ),
        Expectation(
            V1_RUN,
            "<=",
            round(EXPLORER + BAND, 2),
            f"... and no higher than {EXPLORER} + {BAND}: the level of a within-trial planner, not above it (Fig. 2b)",
            central=True,
        ),
    ),
    optima={"4x4": [(f"{name} {value}", value) for name, value in RETURNS_4X4.items()]},
    settings=SETTINGS,
)

register("epn-settings-sweep", lambda: EPN_SETTINGS_SWEEP)
