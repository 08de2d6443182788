"""EPN on one-shot graph navigation (Ritter et al. 2021, Sec. 5, One-Shot StreetLearn; memrl's
procedural-graph analogue ``graph-nav``).

Finding: EPN reaches a large fraction of the shortest-path oracle's reward in neighbourhoods it has
never seen, above an LSTM, and an EPN trained on 5 junctions keeps working on 7 and 9, more so with
more planner iterations ("thinking time").

After training on ``graph-nav/5`` the final agents are evaluated on 5, 7 and 9 junctions, EPN with
1, 2 and 4 planner iterations, as a fraction of the oracle's reward on the same environment.

Presets: ``cpu`` (epn-memory-planning's small-budget settings, 300k steps per run) and ``paper``
(epn-memory-planning's paper preset: RMSprop inside the paper's ranges, 4 planner iterations).
"""

from __future__ import annotations

from memrl import envs
from memrl.agents.paper_agents import EPN_AGENT, EPN_LSTM_BASELINE, EPN_PLANNER, EPN_TRAINING
from memrl.cores.epn import EPN
from memrl.envs.graph_nav_policies import RANDOM_PLAY
from memrl.experiments.base import Expectation, Experiment, PaperSetting, register
from memrl.experiments.evaluations import GRAPH_NAV_EPISODE, graph_nav_generalisation
from memrl.experiments.paper_settings import EPN_SETTINGS
from memrl.learn.impala_config import ImpalaConfig

PRESETS = ("cpu", "paper")


def preset_runs(preset: str) -> dict[str, ImpalaConfig]:
    """EPN and the LSTM with the EPN agent's ``preset`` settings, a store for whole episodes."""
    budget = {"cpu": 300_000, "paper": 100_000_000}[preset]
    common = dict(env=envs.make("graph-nav/5"), **EPN_AGENT, **dict(EPN_TRAINING[preset], total_steps=budget))
    planner = {"capacity": GRAPH_NAV_EPISODE, "iterations": 2, **EPN_PLANNER[preset]}
    return {
        "5 junctions/epn": ImpalaConfig(core=EPN(**planner), **common),
        "5 junctions/lstm": ImpalaConfig(**EPN_LSTM_BASELINE, **common),
    }


SETTINGS = (
    PaperSetting(
        "environment",
        "One-Shot StreetLearn: Street View neighbourhoods of 5 intersections (Sec. 5)",
        "env",
        "memrl's procedural-graph analogue (no Street View data here)",
    ),
    *(row for row in EPN_SETTINGS if row.field not in ("core.k", "core.capacity", "total_steps")),
    PaperSetting("episodic store", "the whole episode (Sec. 4)", "core.capacity"),
    PaperSetting(
        "env steps per run",
        "not in the text (StreetLearn agents have trained for billions of steps, Sec. 5)",
        "total_steps",
        "cpu: what 2 cores train in about an hour; paper: 1e8, the aim for half an hour of one H100 (not measured)",
    ),
)


def epn_graph_nav(preset: str) -> Experiment:
    """The experiment's runs and checks in ``preset``."""
    return Experiment(
        name="epn-graph-nav",
        version=3,  # 3: TensorFlow 1's RMSprop (squared-gradient average from 1) wherever RMSprop runs
        description=f"EPN and LSTM on graph-nav/5 (a One-Shot StreetLearn analogue), V-trace, preset {preset!r}; tested on 5, 7, 9 junctions",
        reproduces="Ritter et al. 2021, Sec. 5 (One-Shot StreetLearn) and its generalisation to larger neighbourhoods",
        finding="EPN navigates new street graphs from one exploration, near the shortest path",
        paper_steps=None,
        runs=preset_runs(preset),
        expectations=(
            Expectation(
                "5 junctions/epn",
                ">",
                RANDOM_PLAY["graph-nav/5"],
                f"EPN above random play ({RANDOM_PLAY['graph-nav/5']}: the return of uniformly random actions)",
                learning=True,
            ),
            Expectation(
                "5 junctions/epn",
                ">=",
                0.5 * 46.3,
                "EPN reaches at least half the oracle's return (oracle 46.3 on 5 junctions)",
                central=True,
            ),
        ),
        optima={"5 junctions": [("oracle 46.3", 46.3)]},
        evaluation=graph_nav_generalisation,
        settings=SETTINGS,
    )


register("epn-graph-nav", epn_graph_nav, presets=PRESETS)
