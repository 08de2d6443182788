"""memrl's memories on POPGym (Morad et al. 2023, "POPGym: Benchmarking partially observable
reinforcement learning", ICLR), the benchmark researchers already use: four of its tasks at Easy,
stepped on the host through gymnasium (``--env gymnasium/popgym:<id>``; needs the ``popgym`` extra).

- RepeatPreviousEasy: say the suit of the card dealt 4 steps ago (51 steps).
- AutoencodeEasy: watch a sequence of cards, then play it back in reverse (103 steps).
- CountRecallEasy: say how often the card just dealt has been dealt before (51 steps).
- PositionOnlyCartPoleEasy (POPGym's "stateless" CartPole): balance from positions alone, so
  velocities must be inferred from the past (up to 200 steps).

Every POPGym episode's return lies in [-1, 1] (1: every step right). The references are measured
here (``REFERENCES``: a uniformly random policy over 200 episodes); for RepeatPrevious and
CountRecall a memory-less policy cannot do better than random (the answer depends on cards no
longer in view), so scoring above random there is memory at work.

Finding, as memrl checks it (version 1): a memory core (the GRU, POPGym's strongest baseline) is
well above the memory-less level on RepeatPreviousEasy. The other tasks and cores are reported
beside it. POPGym's paper trained its 13 memory models on RLlib, three trials per model and
difficulty; its per-task numbers and budget are not in this project's stored material (the paper
is not among ``../shared/papers``), so none is compared here, and the settings rows say "not
checked here" where only the paper could say. Episode returns are on POPGym's own scale, so a reader
with the paper can set ours beside its figures.
"""

from __future__ import annotations

from memrl.cores.amrl import AMRL
from memrl.cores.gru import GRU
from memrl.cores.lstm import LSTM
from memrl.cores.transformer_xl import TransformerXL
from memrl.experiments.base import Expectation, Experiment, PaperSetting, register
from memrl.learn.ppo_config import PPOConfig

TASKS = ("RepeatPreviousEasy", "CountRecallEasy", "PositionOnlyCartPoleEasy", "AutoencodeEasy")
CORES = {
    "gru": GRU(hidden=128),
    "lstm": LSTM(hidden=128),
    "amrl-max": AMRL(aggregator="max", hidden=128),
    "gtrxl": TransformerXL(gated=True, num_layers=2, d_model=64, num_heads=4, mlp_dim=128, memory_length=64),
}
REFERENCES = {  # uniformly random actions, 200 episodes (seed i for episode i), mean ± standard error
    "RepeatPreviousEasy": -0.505,
    "CountRecallEasy": -0.927,
    "PositionOnlyCartPoleEasy": 0.105,
    "AutoencodeEasy": -0.505,
}
# Sized for 2 CPU cores by a pilot of every run at one seed (docs/results/benchmarks.md#popgym-suite): at 146
# updates of 16 envs x 128 steps the GRU, LSTM and GTrXL repeat the card of 4 steps ago almost always
# and every core is above random on CountRecall; the command with 3 seeds took 36 minutes. No
# ``paper`` preset: the POPGym paper's settings are not in this project's material.
SETTINGS = dict(
    total_steps=146 * 2048,
    num_envs=16,
    rollout_len=128,
    num_minibatches=4,
    update_epochs=4,
    lr=5e-4,
    gamma=0.99,
    seeds=3,
)


def env_id(task: str) -> str:
    return f"gymnasium/popgym:popgym-{task}-v0"


def popgym_runs() -> dict[str, PPOConfig]:
    return {
        f"{task}/{name}": PPOConfig(
            env=env_id(task),
            core=core,
            encoder_widths=(64,),
            head_widths=(64,),
            feed_prev_action=True,
            **SETTINGS,
        )
        for task in TASKS
        for name, core in CORES.items()
    }


PAPER_SETTINGS = (
    PaperSetting("learner", "RLlib's (not checked here)", "", "memrl's own learner", fixed="memrl's recurrent PPO"),
    PaperSetting(
        "env steps per run", "not checked here", "total_steps", "what fits the experiment's 90 minutes on 2 cores"
    ),
    PaperSetting("seeds", "3 trials per model and difficulty", "seeds"),
    PaperSetting("memory width", "not checked here", "core.hidden"),
    PaperSetting("previous action as input", "not checked here", "feed_prev_action"),
)


def popgym_suite() -> Experiment:
    return Experiment(
        name="popgym-suite",
        version=1,
        description="GRU, LSTM, AMRL-Max and GTrXL on four POPGym tasks at Easy (host environments through gymnasium)",
        reproduces="Morad et al. 2023 (POPGym), the memory models on its Easy tasks",
        finding="a memory core repeats the card of four steps ago (RepeatPreviousEasy)",
        kind="benchmark",
        paper_steps=None,  # the paper is not in this project: its budget is not checked here
        runs=popgym_runs(),
        expectations=(
            Expectation(
                "RepeatPreviousEasy/gru",
                ">",
                REFERENCES["RepeatPreviousEasy"] + 0.5,
                "the GRU is well above the memory-less level (-0.5; 1.0 is every answer right)",
                central=True,
                learning=True,
            ),
            *(
                Expectation(
                    f"{task}/{core}",
                    ">",
                    REFERENCES[task],
                    f"{core} is above the memory-less level ({REFERENCES[task]})",
                )
                for task in ("RepeatPreviousEasy", "CountRecallEasy")
                for core in CORES
            ),
        ),
        optima={task: (("random / memory-less", REFERENCES[task]), ("optimum", 1.0)) for task in TASKS},
        settings=PAPER_SETTINGS,
    )


register("popgym-suite", popgym_suite)
