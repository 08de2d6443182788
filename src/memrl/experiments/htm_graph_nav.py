"""HTM on one-shot graph navigation (Lampinen et al. 2021, Sec. 3.4 and Fig. 6c, One-Shot
StreetLearn; memrl's procedural-graph analogue ``graph-nav``), against EPN and a gated TrXL.

Finding: HTM reaches about EPN's reward (somewhat more slowly), and both far exceed the baselines
(TrXL below them; Merlin about half of theirs).

Every agent trains with HTM's One-Shot StreetLearn settings (Table 1's "Streets" column: V-trace
policy loss 1, baseline 0.3, entropy 1e-4, Adam 4e-4, 64-step unrolls; HTM chunks of 4 read 32 at
a time, a store longer than the 200-step episode), EPN and GTrXL included, so that the memory is the
one difference; the paper took EPN's and the baselines' numbers from their own papers. The final
agents are evaluated as in ``epn-graph-nav``: fraction of the shortest-path oracle's return on 5, 7
and 9 junctions (EPN also with 1, 2 and 4 planner iterations).

Presets: ``cpu`` (the one-hot observations, memories of width 64 in 2 layers, 16 environments, one
seed, 300k steps per run) and ``paper`` (the procedural street views through the ResNet, the
paper's memory sizes, batch 32, 2 seeds as the paper's HTM, 1e8 steps).
"""

from __future__ import annotations

from memrl import envs
from memrl.agents.paper_agents import HTM_SIZES, HTM_STREETS_LOSSES
from memrl.cores.epn import EPN
from memrl.envs.graph_nav_policies import RANDOM_PLAY
from memrl.experiments.base import Expectation, Experiment, PaperSetting, register
from memrl.experiments.evaluations import GRAPH_NAV_EPISODE, graph_nav_generalisation
from memrl.learn.impala_config import ImpalaConfig

PRESETS = ("cpu", "paper")
CHUNK_SIZE = 4
"""Table 1's HTM chunk size for Streets (swept over 2, 4, 8, 16, Table 2)"""
OBSERVATION = {
    "cpu": dict(
        encoder="mlp",
        encoder_widths=(64,),
        reconstruction_coef=0.0,
        num_envs=16,
        seeds=1,
        total_steps=300_000,
    ),
    "paper": dict(
        encoder="resnet",
        encoder_widths=(),
        conv_channels=(16, 32, 32),
        reconstruction_coef=0.3,
        num_envs=32,
        seeds=2,
        total_steps=100_000_000,
    ),
}
"""cpu: one-hot observations through an MLP, 16 environments, one seed; paper: the procedural street
views through the ResNet with Table 1's reconstruction weight 0.3 for Streets, batch 32, 2 seeds as the paper's HTM"""
OBSERVED = {"cpu": {}, "paper": {"observation": "images"}}
"""graph-nav/5's settings for each preset's observation (``OBSERVATION``'s encoder reads it)"""
ORACLE = 46.3
"""the shortest-path oracle's mean return per 200-step episode on graph-nav/5 (256 episodes)"""
PARITY = round(ORACLE / 10, 2)
"""the non-inferiority bound of "comparable" (Fig. 6c, whose curves are lost in the text): a tenth of
the oracle's return, a gap the figure would show as two clearly separate curves"""


def preset_runs(preset: str) -> dict[str, ImpalaConfig]:
    """HTM, EPN and GTrXL on graph-nav/5 with the Streets settings at ``preset``'s sizes."""
    k, memory_length = (32, 256) if preset == "paper" else (8, 64)
    memories = HTM_SIZES[preset].memories(
        memory_length, chunk_size=CHUNK_SIZE, num_chunks=GRAPH_NAV_EPISODE // CHUNK_SIZE + 1, k=k
    )
    cores = {"htm": memories["htm"], "epn": EPN(capacity=GRAPH_NAV_EPISODE, iterations=2), "gtrxl": memories["gtrxl"]}
    common = dict(
        env=envs.make("graph-nav/5", **OBSERVED[preset]),
        head_widths=(512,),
        gamma=0.95,
        updates_per_chunk=25,
        **HTM_STREETS_LOSSES,
        **OBSERVATION[preset],
    )
    return {f"5 junctions/{name}": ImpalaConfig(core=core, **common) for name, core in cores.items()}


SIZES = "cpu: small memories whose training fits a CPU"
SETTINGS = (
    PaperSetting(
        "environment",
        "One-Shot StreetLearn: Street View neighbourhoods (Sec. 3.4, B.4)",
        "env",
        "memrl's procedural-graph analogue graph-nav/5 (no Street View data here)",
    ),
    PaperSetting(
        "observation",
        "Street View images of the current place and the goal",
        "env.observation",
        "cpu: one-hot place and goal; paper: procedural street views",
    ),
    PaperSetting(
        "visual encoder",
        "ResNet, channels (16, 32, 32), 3×3 filters, stride 2 (Table 1)",
        "encoder",
        "cpu: an MLP on one-hot inputs",
    ),
    PaperSetting("memory width (state dimension)", "512 (Table 1)", "core.d_model", SIZES),
    PaperSetting("memory layers", "4 (Table 1)", "core.num_layers", SIZES),
    PaperSetting("attention heads", "8 (Table 1)", "core.num_heads", SIZES),
    PaperSetting("HTM chunk size", "4 (Table 1; swept over 2, 4, 8, 16, Table 2)", "core.chunk_size"),
    PaperSetting("HTM top-k", "32 (Table 1)", "core.k", "cpu: 8 of the 51 chunks"),
    PaperSetting("HTM chunks", "more than the longest episode / chunk size (Table 1)", "core.num_chunks"),
    PaperSetting(
        "TrXL memory (extra length)",
        "256 (Table 1)",
        "core.memory_length",
        "cpu: 64, a small memory's: a third of the 200-step episode (256 holds it all)",
    ),
    PaperSetting(
        "HTM window (recent steps attended directly)",
        'not stated: an HTM block supplements "standard attention within the present window" (Sec. 2); the official release has the attention module, not the agent',
        "core.window",
        "at least the chunk size, so that no step of the still open chunk is out of both the window and the store",
    ),
    PaperSetting(
        "EPN",
        "Ritter et al.'s agent, numbers from their paper (Fig. 6c)",
        "core.capacity",
        "trained here with the same learner settings as HTM; a store of the whole episode, 2 iterations",
    ),
    PaperSetting("policy and value nets", "MLP, 1 hidden layer of 512 (Table 1)", "head_widths"),
    PaperSetting("V-trace policy loss weight", "1 (Table 1)", "policy_coef"),
    PaperSetting("V-trace baseline weight", "0.3 (Table 1)", "value_coef"),
    PaperSetting(
        "reconstruction loss weight",
        "0.3 (Table 1)",
        "reconstruction_coef",
        "cpu: none (one-hot inputs have no image to rebuild)",
    ),
    PaperSetting("entropy weight", "1e-4 (Table 1)", "entropy_coef"),
    PaperSetting("optimiser", "Adam (Table 1)", "optimizer"),
    PaperSetting("learning rate", "4e-4 (Table 1; swept {1, 2, 4}e-4)", "lr"),
    PaperSetting("batch (trajectories per update)", "32 (Table 1)", "num_envs", "cpu: 16 on 2 cores"),
    PaperSetting("unroll length", "64 (Table 1)", "rollout_len"),
    PaperSetting("discount γ", "not stated", "gamma", "EPN's 0.95 (epn-graph-nav)"),
    PaperSetting("seeds", "2 for HTM (Fig. 6c)", "seeds", "cpu: one seed fits the CPU budget"),
    PaperSetting(
        "env steps per run",
        "not in the text (runs of 4 hours to days on TPUs, A.3)",
        "total_steps",
        "cpu: 300k, epn-graph-nav's CPU budget; paper: 1e8, as epn-graph-nav's paper preset",
    ),
)


def htm_graph_nav(preset: str) -> Experiment:
    """The experiment's runs and checks in ``preset``."""
    return Experiment(
        name="htm-graph-nav",
        version=2,
        changes=(
            "'at least level with EPN' is tested against a non-inferiority bound of a tenth of the oracle's"
            " return stated before the runs (issue 82 §2; version 1 tested it as superiority)"
        ),
        description=f"HTM, EPN and GTrXL on graph-nav/5 (a One-Shot StreetLearn analogue) with HTM's Streets settings, preset {preset!r}",
        reproduces="Lampinen et al. 2021, Sec. 3.4 and Fig. 6c (HTM about level with EPN on One-Shot StreetLearn, both above TrXL)",
        finding="HTM navigates new street graphs about as well as EPN, far above TrXL",
        paper_steps=None,
        runs=preset_runs(preset),
        expectations=(
            Expectation(
                "5 junctions/htm",
                ">",
                RANDOM_PLAY["graph-nav/5"],
                f"HTM above random play ({RANDOM_PLAY['graph-nav/5']}: the return of uniformly random actions)",
                learning=True,
            ),
            Expectation(
                "5 junctions/htm",
                ">=",
                None,
                f"HTM at least level with EPN (Fig. 6c: comparable), within {PARITY:g}: a tenth of the oracle's return",
                against="5 junctions/epn",
                central=True,
                parity=PARITY,
            ),
            Expectation(
                "5 junctions/htm",
                ">",
                None,
                "HTM above the gated TrXL (Fig. 6c)",
                against="5 junctions/gtrxl",
                central=True,
            ),
        ),
        optima={"5 junctions": [(f"oracle {ORACLE}", ORACLE)]},
        evaluation=graph_nav_generalisation,
        settings=SETTINGS,
    )


register("htm-graph-nav", htm_graph_nav, presets=PRESETS)
