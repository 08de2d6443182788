"""RMC and LSTM agents on Mini Pacman (Santoro et al. 2018, Sec. 5.3, Fig. 10).

Finding: with the 5×5 viewport the RMC agent scores about 677 against the LSTM's 550; with the
full observation 1159 against 598.

The paper states the agent's settings for BoxWorld (App. A.3) and not again for Mini Pacman; memrl
uses them for both: the 2×2 convolutions (12 and 24 channels) with x-y coordinate channels, the
RMC with 4 memories, 4 heads and 1024 units in all, memory-wise gates, linear policy and value
heads; V-trace with batches of 32 trajectories of 40 steps, entropy cost 0.005, γ 0.99. The LSTM
baseline replaces the RMC by an LSTM of 256 units (its size is not stated). Presets:
- ``paper``: both observations, the paper's learning rate, 1e9 steps per run (BoxWorld's budget;
  Mini Pacman's is not stated), 3 seeds.
- ``cpu``: the viewport only, 2M steps per run, 3 seeds (about 25 minutes on 2 cores); the full
  view's 15x19 frame takes about 3 hours per seed on one core, so it runs in the paper preset, on a GPU.
"""

from __future__ import annotations

from memrl import envs
from memrl.agents.paper_agents import RMC_BOXWORLD_AGENT, RMC_BOXWORLD_CORES, RMC_BOXWORLD_LOSSES, RMC_RMSPROP
from memrl.cores.lstm import LSTM
from memrl.experiments.base import Expectation, Experiment, PaperSetting, register
from memrl.learn.impala_config import ImpalaConfig

PRESETS = ("cpu", "paper")
OBSERVATIONS = {"paper": ("viewport", "full"), "cpu": ("viewport",)}
VIEWS = {"viewport": "the 5x5 viewport", "full": "the full view"}
MODELS = {"rmc": RMC_BOXWORLD_CORES["rmc"], "lstm": LSTM(hidden=256)}
TRAINING = {
    "paper": dict(RMC_RMSPROP, lr=1e-4, total_steps=1_000_000_000, updates_per_chunk=500, seeds=3),
    "cpu": dict(RMC_RMSPROP, lr=2e-4, total_steps=2_000_000, updates_per_chunk=100, seeds=3),
}
PAPER_SCORES = {"viewport": (677, 550), "full": (1159, 598)}
RANDOM_PLAY = 9.0
"""uniformly random play's mean return on Mini Pacman (``random_play_returns``: 1,000 first episodes,
key 0; the same in both views): the learning checks' level"""
"""observation -> (RMC, LSTM) episode returns read from the paper's text"""


def pacman_runs(preset: str) -> dict[str, ImpalaConfig]:
    return {
        f"{observation}/{label}": ImpalaConfig(
            env=envs.make(f"minipacman/{observation}"),
            core=core,
            **RMC_BOXWORLD_AGENT,
            **RMC_BOXWORLD_LOSSES,
            **TRAINING[preset],
        )
        for observation in OBSERVATIONS[preset]
        for label, core in MODELS.items()
    }


SETTINGS = (
    PaperSetting(
        "task",
        "I2A's Mini Pacman, 'regular' (Sec. 4.2)",
        "",
        fixed="DeepMind's PillEater rules, regular mode, 1000-step cap",
    ),
    PaperSetting("agent", "as BoxWorld's (App. A.3; not restated for Mini Pacman)", "conv_channels"),
    PaperSetting("RMC", "4 memories, 4 heads, 1024 units, memory gating (A.3)", "core.mem_slots"),
    PaperSetting("LSTM units", "not stated", "core.hidden"),
    PaperSetting("trajectories per batch", "32 (A.3)", "num_envs"),
    PaperSetting("unroll length", "40 (A.3)", "rollout_len"),
    PaperSetting("entropy cost", "0.005 (A.3)", "entropy_coef"),
    PaperSetting("discount γ", "0.99 (A.3)", "gamma"),
    PaperSetting("learning rate", "tuned in 1e-5..2e-4 (A.3)", "lr"),
    PaperSetting("optimiser", "not stated (IMPALA's: RMSprop ε 0.01)", "optimizer"),
    PaperSetting(
        "RMSprop's squared-gradient average at the start",
        "TensorFlow 1's: 1 (IMPALA's RMSPropOptimizer)",
        "rmsprop_initial_scale",
    ),
    PaperSetting(
        "env steps per run", "not stated", "total_steps", "cpu: 2M, what fits about 25 minutes on 2 cores for 3 seeds"
    ),
    PaperSetting(
        "observations",
        "5x5 viewport and full view (Fig. 10)",
        "env",
        "cpu: the viewport only (the full view is a GPU's run)",
    ),
    PaperSetting("seeds", "not stated", "seeds"),
)


def rmc_pacman(preset: str) -> Experiment:
    """The experiment's runs and checks in ``preset``."""
    return Experiment(
        name="rmc-pacman",
        version=4,  # 2: TensorFlow 1's RMSprop (squared-gradient average from 1) wherever RMSprop runs; 3: 3 seeds, cpu the viewport only; 4: a learning check (above random play)
        description="RMC and LSTM agents (V-trace) on Mini Pacman with "
        + " and with ".join(VIEWS[v] for v in OBSERVATIONS[preset]),
        reproduces="Santoro et al. 2018, Sec. 5.3 and Fig. 10 (viewport: RMC 677 vs LSTM 550; full: 1159 vs 598)",
        finding="the RMC agent outscores an LSTM agent at Mini Pacman, "
        + " and ".join(VIEWS[v].removeprefix("the ") for v in OBSERVATIONS[preset]),
        paper_steps=None,
        runs=pacman_runs(preset),
        expectations=tuple(
            check
            for observation, (rmc, lstm) in PAPER_SCORES.items()
            if observation in OBSERVATIONS[preset]
            for check in (
                Expectation(
                    f"{observation}/rmc",
                    ">",
                    RANDOM_PLAY,
                    f"the RMC agent scores above random play ({observation}: {RANDOM_PLAY})",
                    learning=True,
                ),
                Expectation(
                    f"{observation}/rmc",
                    ">",
                    None,
                    f"the RMC agent scores above the LSTM ({observation}: {rmc} vs {lstm})",
                    against=f"{observation}/lstm",
                    central=True,
                ),
            )
        ),
        optima={
            observation: [("paper's RMC", PAPER_SCORES[observation][0]), ("paper's LSTM", PAPER_SCORES[observation][1])]
            for observation in OBSERVATIONS[preset]
        },
        settings=SETTINGS,
    )


register("rmc-pacman", rmc_pacman, presets=PRESETS)
