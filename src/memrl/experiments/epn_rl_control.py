"""A positive control for EPN's reinforcement-learning path (issue 64 §3): can the EPN agent, trained
by memrl's V-trace at epn-memory-planning's cpu settings, hold a planning policy at all? Without
that, EPN staying at the memoryless level in epn-memory-planning says nothing about EPN.

The EPN agent (Ritter et al. 2021, Sec. 4) first clones ``transition_planner`` on the 3×3
Memory&Planning Game, a planner over the transitions it has made, as EPN's rows hold them (30.3;
the within-trial optimum 17.9; the best memoryless policy 12.2). Cloned straight into a memory of
100 rows it stays at the memoryless cross-entropy (docs/results/epn.md); the curriculum grows the
memory instead: 15,000 cloning updates on 8 rows, 5,000 on 24 rows from those parameters, then
V-trace with 100 rows (the game's episode) from the 24-row clone, in five stages of 100k
environment steps, so that each stage's frozen agent is read (each stage starts from the last
one's parameters with a fresh Adam). Checks: the 24-row clone plans (frozen above 17.9, and at most
12.2 with its memory reset before every step), and V-trace keeps it planning at 500k steps. Two
parts: ``8-rows`` (17 minutes on 2 idle cores), then ``24-rows-vtrace``.
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
    seed=200,
    **EPN_AGENT,
    **{name: value for name, value in EPN_TRAINING["cpu"].items() if name != "total_steps"},
)
"""epn-memory-planning's cpu EPN runs (16 environments × 20 steps, Adam 1e-3, 3 seeds), on seeds
200-202 (the pilots used 100)"""
CLONES = {"8-rows/clone": (8, 15_000, None), "24-rows/clone": (24, 5_000, "8-rows/clone")}
"""stage -> (memory rows, cloning updates, the stage whose parameters it starts from)"""
LSTM_CLONE_UPDATES = sum(updates for _, updates, _ in CLONES.values())
"""the LSTM clones for as many updates as EPN's two clones together"""
VTRACE_STAGES = 5
VTRACE_UPDATES = 313
"""V-trace stages of 313 updates (100,160 environment steps) each"""
LEVELS = RETURNS["3x3"]
EVALUATION_STEPS = 1000
"""each final agent acts 1,000 steps in its 16 environments: 160 episodes a seed"""


CURRICULUM_ROWS = {
    "episodic store": PaperSetting(
        "episodic store",
        "the whole 100-step episode (Sec. 4)",
        "core.capacity",
        "a curriculum: the clone learns to read 8 rows, then 24, before V-trace on the episode's 100 "
        "(cloned straight into 100 rows it stayed at the memoryless level; docs/results/epn.md)",
    ),
    "env steps per run": PaperSetting(
        "env steps per run",
        "not in the text (the figures' axes were lost)",
        "total_steps",
        "the clones: 15,000 and 5,000 updates (the pilot's); V-trace: five stages of 100k steps, each stage's agent read",
    ),
}
SETTINGS = tuple(
    CURRICULUM_ROWS.get(row.setting, row)
    for row in EPN_SETTINGS
    if row.setting != "N×k belief rows"  # not in this experiment
)


def vtrace_stage(i: int, memory: str = "") -> str:
    """The run of V-trace's stage ``i`` (1 ..): its agent after 100k·i environment steps; ``memory``
    "lstm" names the LSTM's, in a panel of their own (EPN's have no prefix, as in version 1)."""
    return f"{memory}-vtrace/{100 * i}k" if memory else f"vtrace/{100 * i}k"


def vtrace_stages(memory: str, core_settings: dict, clone: str) -> dict[str, ImpalaConfig]:
    """Five V-trace stages of ``memory``'s agent, the first from ``clone``'s parameters, each later
    one from the stage before's."""
    return {
        vtrace_stage(i, memory): ImpalaConfig(
            **{**COMMON, "total_steps": VTRACE_UPDATES * STEPS_PER_UPDATE, **core_settings},
            init_params=clone if i == 1 else vtrace_stage(i - 1, memory),
        )
        for i in range(1, VTRACE_STAGES + 1)
    }


def runs() -> dict[str, ImpalaConfig]:
    """EPN's clones on 8 and 24 rows, then its V-trace stages on 100, each starting from the run
    before; the LSTM's clone and its V-trace stages beside them."""
    clones = {
        stage: ImpalaConfig(
            **{**COMMON, "total_steps": updates * STEPS_PER_UPDATE},
            core=EPN(capacity=rows),
            teacher="transition_planner",
            clone_updates=updates,
            init_params=source,
        )
        for stage, (rows, updates, source) in CLONES.items()
    }
    lstm_clone = ImpalaConfig(
        **{**COMMON, "total_steps": LSTM_CLONE_UPDATES * STEPS_PER_UPDATE, **EPN_LSTM_BASELINE},
        teacher="transition_planner",
        clone_updates=LSTM_CLONE_UPDATES,
    )
    return {
        **clones,
        **vtrace_stages("", {"core": EPN(capacity=100)}, "24-rows/clone"),
        "lstm/clone": lstm_clone,
        **vtrace_stages("lstm", EPN_LSTM_BASELINE, "lstm/clone"),
    }


def plans(run: str, central: bool) -> tuple[Expectation, ...]:
    """``run``'s frozen agent is above the within-trial optimum and falls to at most the best
    memoryless policy's return with its memory reset before every step."""
    within_trial, memoryless = LEVELS["within_trial_explorer"], LEVELS["two_move_walk"]
    return (
        Expectation(
            run,
            ">",
            within_trial,
            f"{run} plans: frozen above the within-trial optimum ({within_trial:.1f})",
            evaluated=("returns",),
            central=central,
            learning=True,
        ),
        Expectation(
            run,
            "<=",
            memoryless,
            f"{run}, its memory reset before every step, at most the best memoryless policy ({memoryless:.1f})",
            evaluated=("returns_without_memory",),
            central=central,
        ),
    )


def lstm_below_epn(i: int, central: bool) -> tuple[Expectation, ...]:
    """Fig. 2b at V-trace's stage ``i``: the LSTM's agent at most the within-trial optimum, and below
    EPN's agent of the same stage over the same seeds and fresh episodes."""
    within_trial = LEVELS["within_trial_explorer"]
    epn, lstm = vtrace_stage(i), vtrace_stage(i, "lstm")
    return (
        Expectation(
            lstm,
            "<=",
            within_trial,
            f"{lstm}: the LSTM's agent at most the within-trial optimum ({within_trial:.1f})",
            evaluated=("returns",),
            central=central,
        ),
        Expectation(
            epn,
            ">",
            None,
            f"{epn} above {lstm} (Fig. 2b), over the same seeds and fresh episodes",
            evaluated=("returns",),
            against=lstm,
            paired=True,
            central=central,
        ),
    )


def lstm_learnt(run: str) -> Expectation:
    """``run``, an LSTM agent, is above the best memoryless policy: it learnt from the teacher."""
    memoryless = LEVELS["two_move_walk"]
    return Expectation(
        run,
        ">",
        memoryless,
        f"{run} above the best memoryless policy ({memoryless:.1f}): the LSTM learnt from the teacher",
        evaluated=("returns",),
        learning=True,
    )


EPN_RL_CONTROL = Experiment(
    name="epn-rl-control",
    version=2,
    description="the EPN agent clones a transition planner on 8, then 24 memory rows, then trains by V-trace on "
    "100 (3×3 game); an LSTM's agent on the same path",
    reproduces="Ritter et al. 2021, Sec. 4 (EPN's agent) and Fig. 2b (EPN against an LSTM), on its "
    "Memory&Planning Game (a positive control, no paper figure's budget)",
    finding="the EPN agent can hold a planning policy, and memrl's V-trace keeps it; an LSTM's agent on the same "
    "path stays at most at the within-trial optimum",
    paper_steps=None,
    kind="benchmark",  # a positive control: no paper's finding is compared at its budget
    changes="the LSTM of epn-memory-planning on EPN's path (issue 84 §3): a clone of the same teacher for as many "
    "updates as EPN's clones (20,000), then the same five V-trace stages, with checks against the within-trial "
    "optimum and EPN's agents; EPN's runs as in version 1",
    runs=runs(),
    expectations=(
        *plans("24-rows/clone", central=True),
        *plans(vtrace_stage(VTRACE_STAGES), central=True),
        *(e for i in range(1, VTRACE_STAGES) for e in plans(vtrace_stage(i), central=False)),
        *lstm_below_epn(VTRACE_STAGES, central=True),
        *(e for i in range(1, VTRACE_STAGES) for e in lstm_below_epn(i, central=False)),
        lstm_learnt("lstm/clone"),
        lstm_learnt(vtrace_stage(VTRACE_STAGES, "lstm")),
    ),
    optima={
        panel: (("within-trial", LEVELS["within_trial_explorer"]), ("memoryless", LEVELS["two_move_walk"]))
        for panel in ("8-rows", "24-rows", "vtrace", "lstm", "lstm-vtrace")
    },
    evaluation=frozen_returns(EVALUATION_STEPS),
    settings=SETTINGS,
    parts={"8-rows": ("8-rows",), "24-rows-vtrace": ("24-rows", "vtrace"), "lstm": ("lstm", "lstm-vtrace")},
)

register("epn-rl-control", lambda: EPN_RL_CONTROL)
