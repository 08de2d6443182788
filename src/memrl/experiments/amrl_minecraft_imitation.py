"""AMRL's MC-LSN claim decided by imitation (issue 84 §2): on the noisy Minecraft maze (Beck et al.
2020, Sec. 5.2, Fig. 5; memrl's 2D analogue ``minecraft-maze/MC-LSN``) the LSTM and the stacked
LSTM fail to carry the indicator through ten rooms of noisy frames, where AMRL-Max and AMRL-Avg
learn it. The RL row (``amrl-minecraft``) trains 64k steps a run on the CPU; here every memory is
told the answer instead.

Each of the paper's six memories, in AMRL's Minecraft agent (conv 16/32, FC 256, the memory, FC
256), clones the maze's ``oracle`` (every rewarded step, and at the end the side the indicator
names) by cross-entropy through the learner's segmented unroll (``ImpalaConfig.teacher``, the
teacher acting), for the same 500 updates of 4 environments × 200 steps, with the value loss
weighed 0 while cloning (``clone_value_coef``: with the value loss at 0.5 an LSTM cloning the
one-room maze stayed on the memory-less plateau on every seed tried, docs/results/amrl.md). Each
final agent then acts frozen and greedy in fresh episodes, with its memory and with its memory
reset before every step (``frozen_returns``). A finished episode returns 6.1 for its 61 rewarded
steps plus 4 for the right side or −3 for the wrong one, so the memory-less optimum (a coin flip)
is 6.6 and the optimum 10.1. The pilots (seeds 100-101) sized it: the LSTM's clone stayed at the
decision's ln 2 (a cross-entropy of 0.011 over an episode) for all of 1,000 updates on both seeds,
AMRL-Max's left it within the first 250 and acted at the optimum (10.10; 6.05 and 7.15 amnesic), so
500 updates a run (400k env steps) separate them at half the pilots' cost: 6 memories × 5 seeds at
1,000 would not fit 90 minutes on 2 cores.
"""

from __future__ import annotations

from memrl import cores, envs
from memrl.experiments.amrl_minecraft import AGENT, CORES, MEMORYLESS, OPTIMA, RANDOM_PLAY, SETTINGS, SIZED_CORES
from memrl.experiments.base import Expectation, Experiment, PaperSetting, register
from memrl.experiments.evaluations import frozen_returns
from memrl.learn.impala_config import ImpalaConfig

ENV = "MC-LSN"
UPDATES, NUM_ENVS, ROLLOUT_LEN = 500, 4, 200
CLONING = dict(
    teacher="oracle",
    clone_updates=UPDATES,
    clone_value_coef=0.0,
    num_envs=NUM_ENVS,
    rollout_len=ROLLOUT_LEN,
    total_steps=UPDATES * NUM_ENVS * ROLLOUT_LEN,
    optimizer="adam",
    lr=2e-3,
    adam_eps=1e-8,
    seed=400,
    seeds=5,
)
"""every memory's cloning: the pilots' settings, on 5 fresh seeds (400-404; the pilots took 0-1 and
100-103), since a seed's outcome is nearly 0 or 1 (it carries the indicator or it does not)"""
EVALUATION_STEPS, EVALUATION_ENVS = 1000, 16
"""each final agent acts 1,000 steps in 16 fresh environments: about 250 episodes a seed"""


def runs() -> dict[str, ImpalaConfig]:
    """Each of the paper's six memories cloning the oracle on MC-LSN."""
    return {
        f"{ENV}/{core}": ImpalaConfig(
            env=envs.make(f"minecraft-maze/{ENV}"), core=SIZED_CORES.get(core) or cores.make(core), **AGENT, **CLONING
        )
        for core in CORES
    }


def expectations() -> tuple[Expectation, ...]:
    returns = ("returns",)
    max_run = f"{ENV}/amrl-max"
    return (
        Expectation(
            max_run,
            ">",
            RANDOM_PLAY[ENV],
            f"AMRL-Max's clone above random play ({RANDOM_PLAY[ENV]}): it learnt the maze's walk from the teacher",
            evaluated=returns,
            learning=True,
        ),
        Expectation(
            max_run,
            ">",
            MEMORYLESS[ENV],
            f"AMRL-Max's clone carries the indicator: frozen above the memory-less optimum ({MEMORYLESS[ENV]})",
            evaluated=returns,
            central=True,
        ),
        *(
            Expectation(
                max_run,
                ">",
                None,
                f"AMRL-Max's clone above the {name}'s (Sec. 5.2: the LSTMs fail MC-LSN), over the same seeds and fresh episodes",
                evaluated=returns,
                against=f"{ENV}/{lstm}",
                paired=True,
                central=True,
            )
            for lstm, name in (("lstm", "LSTM"), ("lstm-stack", "stacked LSTM"))
        ),
        Expectation(
            f"{ENV}/amrl-avg",
            ">",
            MEMORYLESS[ENV],
            f"AMRL-Avg's clone carries the indicator: frozen above the memory-less optimum ({MEMORYLESS[ENV]})",
            evaluated=returns,
        ),
        *(
            Expectation(
                f"{ENV}/{lstm}",
                "<=",
                MEMORYLESS[ENV],
                f"the {name}'s clone fails: frozen at most the memory-less optimum ({MEMORYLESS[ENV]})",
                evaluated=returns,
            )
            for lstm, name in (("lstm", "LSTM"), ("lstm-stack", "stacked LSTM"))
        ),
    )


KEPT_SETTINGS = (
    "task",
    "rooms (MC-LS, MC-LSO, MC-LSN)",
    "timeout",
    "MC-LSN pixel noise",
    "image FF1",
    "FF2 after the memory",
    "memory size (LSTM, AMRL, SET; DNC controller)",
    "DNC memory",
)
IMITATION_SETTINGS = (
    PaperSetting(
        "learner",
        "PPO (A.5; Ray 0.6.2's RLlib)",
        "teacher",
        "an imitation analogue: every memory clones the maze's oracle (the teacher acting) for 500 updates, "
        "the value loss weighed 0 while cloning (clone_value_coef)",
    ),
    *(row for row in SETTINGS if row.setting in KEPT_SETTINGS),
    PaperSetting(
        "optimiser, learning rate",
        "Adam (ε 1e-5), best of {5e-3, 5e-4, 5e-5} (A.5)",
        "lr",
        "Adam 2e-3, ε 1e-8 for every memory: the pilots' setting (cloning, not the paper's PPO)",
    ),
    PaperSetting(
        "batch", "4,000 env steps per update (A.5)", "num_envs", "4 environments × 200 steps (an episode's timeout)"
    ),
    PaperSetting("seeds", "5 (Fig. 5)", "seeds", "5 fresh seeds, 400-404"),
)


AMRL_MINECRAFT_IMITATION = Experiment(
    name="amrl-minecraft-imitation",
    version=1,
    description="AMRL-Max, AMRL-Avg, SET, LSTM, stacked LSTM and DNC clone the MC-LSN oracle, then act frozen",
    reproduces="Beck et al. 2020, Sec. 5.2 and Fig. 5 (on MC-LSN the LSTMs fail, AMRL learns), as an imitation analogue",
    finding="AMRL-Max's clone carries the indicator through MC-LSN's noisy rooms; the LSTMs' do not",
    kind="imitation analogue",
    paper_steps=None,
    runs=runs(),
    expectations=expectations(),
    optima={ENV: OPTIMA[ENV]},
    evaluation=frozen_returns(EVALUATION_STEPS, num_envs=EVALUATION_ENVS, greedy=True),
    settings=IMITATION_SETTINGS,
)

register("amrl-minecraft-imitation", lambda: AMRL_MINECRAFT_IMITATION)
