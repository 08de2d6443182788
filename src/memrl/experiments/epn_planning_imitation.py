"""EPN's planning claim decided by imitation (issue 84 §2): on the Memory&Planning Game (Ritter et
al. 2021, Sec. 5, Fig. 2b) EPN plans paths to the goal from what it saw for earlier goals, above
the within-trial optimum (an agent that plans only from what it has seen since the last goal),
while an LSTM reaches at most that level. The RL row (``epn-memory-planning``) never trained EPN
past the memoryless level at a CPU's budget; here both memories are told the answer instead.

Both clone ``transition_planner`` (30.3 on the 3×3 game: a shortest path over the transitions it
has made, as EPN's rows hold them) by cross-entropy through the learner's segmented unroll
(``ImpalaConfig.teacher``), the teacher acting, for the same 25,000 updates (8M labelled steps).
EPN takes epn-rl-control's curriculum, 15,000 updates on 8 memory rows and 5,000 on 24, then 5,000
on the episode's 100 rows (cloned straight into 100 rows it stays at the memoryless level;
docs/results/epn.md); the LSTM is epn-memory-planning's baseline (256 units, the previous action as
input) in one run. Each final agent is then frozen and acts in fresh episodes, with its memory and
with its memory reset before every step (``frozen_returns``). References on 3×3: the within-trial
optimum 17.86, the best memoryless policy 12.2. A pilot (seed 100) sized it: the LSTM's clone
reached 14.1 frozen and 10.0 without its memory, EPN's 8-, 24- and 100-row clones 10.0, 17.2 and
23.0 (9.9 without its memory).
"""

from __future__ import annotations

from memrl import envs
from memrl.agents.paper_agents import EPN_AGENT, EPN_LSTM_BASELINE, EPN_TRAINING
from memrl.cores.epn import EPN
from memrl.envs.memory_planning_policies import RETURNS
from memrl.experiments.base import Expectation, Experiment, PaperSetting, register
from memrl.experiments.evaluations import frozen_returns
from memrl.experiments.paper_settings import EPN_SETTINGS
from memrl.learn.impala_config import ImpalaConfig

STEPS_PER_UPDATE = 16 * 20
COMMON = dict(
    env=envs.make("memory-planning/3x3"),
    **EPN_AGENT,
    **{name: value for name, value in EPN_TRAINING["cpu"].items() if name != "total_steps"},
    teacher="transition_planner",
    seed=300,
)
"""epn-memory-planning's cpu runs (16 environments × 20 steps, Adam 1e-3), the teacher acting
throughout, on 3 fresh seeds 300-302 (the pilot used 100, epn-rl-control 200-202): a run's stages
need the parameters of the stage before, which only a run folder holds, so the experiment trains in
one sitting (about 90 minutes alone on 2 cores, by its first sitting); its outcomes are returns, not 0/1"""
EPN_STAGES = {
    "epn/8-rows": (8, 15_000, None),
    "epn/24-rows": (24, 5_000, "epn/8-rows"),
    "epn/100-rows": (100, 5_000, "epn/24-rows"),
}
"""run -> (memory rows, cloning updates, the run whose parameters it starts from)"""
LSTM_UPDATES = sum(updates for _, updates, _ in EPN_STAGES.values())
"""the LSTM clones for as many updates as EPN's three stages together"""
LEVELS = RETURNS["3x3"]
EVALUATION_STEPS = 1000
"""each final agent acts 1,000 steps in its 16 environments: 160 episodes a seed"""
EPN_RUN, LSTM_RUN = "epn/100-rows", "lstm/clone"


def runs() -> dict[str, ImpalaConfig]:
    """EPN's three cloning stages, each from the one before, and the LSTM's one."""
    epn = {
        run: ImpalaConfig(
            **COMMON,
            core=EPN(capacity=rows),
            clone_updates=updates,
            total_steps=updates * STEPS_PER_UPDATE,
            init_params=source,
        )
        for run, (rows, updates, source) in EPN_STAGES.items()
    }
    lstm = ImpalaConfig(
        **{**COMMON, **EPN_LSTM_BASELINE},
        clone_updates=LSTM_UPDATES,
        total_steps=LSTM_UPDATES * STEPS_PER_UPDATE,
    )
    return {**epn, LSTM_RUN: lstm}


def expectations() -> tuple[Expectation, ...]:
    within_trial, memoryless = LEVELS["within_trial_explorer"], LEVELS["two_move_walk"]
    returns = ("returns",)
    return (
        Expectation(
            EPN_RUN,
            ">",
            within_trial,
            f"EPN's clone plans: frozen above the within-trial optimum ({within_trial:.2f})",
            evaluated=returns,
            central=True,
        ),
        Expectation(
            LSTM_RUN,
            "<=",
            within_trial,
            f"the LSTM's clone reaches at most the within-trial optimum ({within_trial:.2f})",
            evaluated=returns,
            central=True,
        ),
        Expectation(
            EPN_RUN,
            ">",
            None,
            "EPN's clone above the LSTM's (Fig. 2b), over the same seeds and fresh episodes",
            evaluated=returns,
            against=LSTM_RUN,
            paired=True,
            central=True,
        ),
        Expectation(
            EPN_RUN,
            ">",
            memoryless,
            f"EPN's clone above the best memoryless policy ({memoryless:.1f}): it learnt from the teacher",
            evaluated=returns,
            learning=True,
        ),
        Expectation(
            EPN_RUN,
            "<=",
            memoryless,
            f"EPN's clone, its memory reset before every step, at most the best memoryless policy ({memoryless:.1f})",
            evaluated=("returns_without_memory",),
        ),
        Expectation(
            LSTM_RUN,
            ">",
            0.0,
            "the LSTM's clone uses its memory (frozen above itself with its memory reset): the baseline is not broken",
            evaluated=("memory_gain",),
        ),
    )


SETTINGS = (
    PaperSetting(
        "learner",
        "IMPALA: V-trace from the reward (A.2)",
        "teacher",
        "an imitation analogue: both memories clone transition_planner's actions (the teacher acting), "
        "for 25,000 updates each",
    ),
    PaperSetting(
        "episodic store",
        "the whole 100-step episode (Sec. 4)",
        "core.capacity",
        "the last stage: 100 rows; before it 8, then 24 (cloned straight into 100 rows EPN stays at the memoryless level)",
    ),
    *(
        row
        for row in EPN_SETTINGS
        if row.setting not in ("learner", "N×k belief rows", "episodic store", "env steps per run", "seeds")
    ),
    PaperSetting(
        "seeds", "the best runs of a large sweep (Fig. 2); 3 per condition (Fig. 4)", "seeds", "3 fresh seeds, 300-302"
    ),
)


EPN_PLANNING_IMITATION = Experiment(
    name="epn-planning-imitation",
    version=1,
    description="EPN and an LSTM clone a transition planner on the 3×3 Memory&Planning Game, then act frozen",
    reproduces="Ritter et al. 2021, Sec. 5 and Fig. 2b (EPN plans, an LSTM stays at the within-trial level), "
    "as an imitation analogue",
    finding="EPN's clone plans above the within-trial optimum; the LSTM's does not",
    kind="imitation analogue",
    paper_steps=None,
    runs=runs(),
    expectations=expectations(),
    optima={
        panel: (("within-trial", LEVELS["within_trial_explorer"]), ("memoryless", LEVELS["two_move_walk"]))
        for panel in ("epn", "lstm")
    },
    evaluation=frozen_returns(EVALUATION_STEPS),
    settings=SETTINGS,
)

register("epn-planning-imitation", lambda: EPN_PLANNING_IMITATION)
