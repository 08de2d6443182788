"""RMC, LSTM and DNC on Nth Farthest (Santoro et al. 2018, Sec. 4.1 and 5.1, App. A.1, Figs. 4-5).

Finding: on 8 vectors of 16 dimensions the RMC reaches about 91% while the LSTM and the DNC stay
below 30% (their best batch accuracy), whatever their sizes.

Each model is the paper's: the core, then a 4-layer MLP of 256 ReLU units, then the softmax over
the object ids, trained with softmax cross-entropy and Adam on fresh batches; scored on the last
step; the final models are scored on 12,800 held-out sequences. Rank 0 answers the reference m,
whose id every row carries, so a model that compares nothing scores 2/N (the shortcut: 0.25 at 8
objects). The checks score the ranks above 0, the questions that need the distances (the shortcut
there is 1/(N-1)), at 80% overall and 2/N + 0.1 restated for them. Each baseline also runs in its
stronger variant, one the paper does not have: the LSTM initialised per part (``weight_init="split"``)
and the DNC with its controller so (``controller_weight_init="split"``); the RMC must beat all four.
Presets:
- ``paper``: 8 vectors of 16 dimensions, batch 1600, Adam 1e-4 (App. A.1), RMC with 8 memories of
  2048/8 units (8 heads of 32, one block, unit gates: one of Fig. 4's best), LSTM 512, DNC with a
  2-layer controller of 128 and 16 memories of 128 (A.1: sizes made no difference for either), 3 seeds.
- ``cpu``: 3 vectors of 2 dimensions, batch 256, Adam 1e-3, 10,000 updates, the models at CPU sizes
  (RMC of 4 memories x 4 heads, as sonnet's example), 3 seeds (see ``SETTINGS``).
"""

from __future__ import annotations

from memrl.cores.dnc import DNC
from memrl.cores.lstm import LSTM
from memrl.cores.rmc import RelationalMemory
from memrl.experiments.base import Experiment, PaperSetting, register
from memrl.experiments.evaluations import held_out_evaluation
from memrl.experiments.evaluations import held_out_expectation as held_out
from memrl.learn.supervised_config import SupervisedConfig
from memrl.tasks.nth_farthest import NthFarthest

PRESETS = ("cpu", "paper")
HEAD = (256, 256, 256, 256)
"""the paper's output MLP, the same for every model (App. A.1)"""
TEST_SEQUENCES = 12_800
"""held-out sequences that score each final model (standard error under 0.005)"""
SOLVES = 0.8
"""the overall accuracy the RMC must reach (the paper's ~91% less noise), restated above rank 0"""
SHORTCUT_SLACK = 0.1
"""how far above the shortcut 2/N a model that has not learned the distances may score (the paper's
"below 30%" at 8 objects is the shortcut's 0.25 and noise; 2/N + 0.1 is 0.35 there)"""

TASKS = {"paper": dict(num_objects=8, num_features=16), "cpu": dict(num_objects=3, num_features=2)}
PAPER_MODELS = {
    "paper": {
        "rmc": RelationalMemory(mem_slots=8, head_size=32, num_heads=8, num_blocks=1, gate_style="unit"),
        "lstm": LSTM(hidden=512),
        "dnc": DNC(
            memory_size=16,
            word_size=128,
            hidden=128,
            controller_layers=2,
            num_reads=4,
            num_writes=4,
            output_size=128,
        ),
    },
    "cpu": {
        "rmc": RelationalMemory(mem_slots=4, head_size=32, num_heads=4, num_blocks=1, gate_style="unit"),
        "lstm": LSTM(hidden=256),
        "dnc": DNC(
            memory_size=16, word_size=64, hidden=64, controller_layers=2, num_reads=4, num_writes=1, output_size=64
        ),
    },
}
"""run label -> core: the paper's models, its LSTMs sonnet's (initialised fused)"""
SPLIT_INIT = {"lstm": "weight_init", "dnc": "controller_weight_init"}
"""each baseline's setting that initialises its LSTM per part (cores/lstm.py): the stronger variant"""
MODELS = {
    preset: models
    | {f"{name} split init": models[name].clone(**{setting: "split"}) for name, setting in SPLIT_INIT.items()}
    for preset, models in PAPER_MODELS.items()
}
"""the paper's models and the stronger variants of its baselines, "lstm split init" and "dnc split
init", against which the claim is decided too"""
BASELINES = ("lstm", "lstm split init", "dnc", "dnc split init")
"""the runs the RMC must beat: each paper baseline and its stronger variant"""
TRAINING = {
    "paper": dict(
        batch_size=1600, lr=1e-4, max_grad_norm=None, total_steps=1600 * 100_000, seeds=3, updates_per_chunk=500
    ),
    "cpu": dict(batch_size=256, lr=1e-3, max_grad_norm=None, total_steps=256 * 10_000, seeds=3, updates_per_chunk=500),
}


def nth_farthest_runs(preset: str) -> dict[str, SupervisedConfig]:
    return {
        f"nth farthest/{label}": SupervisedConfig(
            task=NthFarthest(**TASKS[preset]),
            core=core,
            embed_dim=40,
            head_widths=HEAD,
            **TRAINING[preset],
        )
        for label, core in MODELS[preset].items()
    }


SETTINGS = (
    PaperSetting(
        "vectors",
        "8 (Sec. 4.1)",
        "task.num_objects",
        "cpu: 3, the fewest whose answers compare distances (ranks 1 and 2 ask which of the two other "
        "vectors is nearer to m or farther); at 4 x 4 no memory left the shortcut 2/N within 4,000 updates (pilots)",
    ),
    PaperSetting(
        "dimensions per vector", "16 (Sec. 4.1)", "task.num_features", "cpu: 2, with 3 vectors (the same pilots)"
    ),
    PaperSetting("optimiser", "Adam (A.1)", "", fixed="Adam"),
    PaperSetting(
        "gradient clipping",
        "none stated (A.1)",
        "max_grad_norm",
        "none (v2 clipped at memrl's default global norm 1.0)",
    ),
    PaperSetting(
        "learning rate",
        "1e-4 (A.1: tuned in 1e-5..1e-3, it did not matter)",
        "lr",
        "cpu: 1e-3 with the smaller batch, the top of the paper's range",
    ),
    PaperSetting(
        "batch", "1,600 (A.1)", "batch_size", "cpu: 256; a CPU update of 1600 sequences through the RMC takes seconds"
    ),
    PaperSetting("output MLP", "4 layers of 256, ReLU (A.1)", "head_widths"),
    PaperSetting(
        "input map before the core",
        "none (sonnet's example feeds the 40-wide rows to the core)",
        "embed_dim",
        "memrl's sequence model always embeds; a 40-wide linear map before the core's own input map adds no capacity",
    ),
    PaperSetting(
        "RMC memories",
        "1, 8 or 16 (A.1, Fig. 4: 8 or 16 best)",
        "core.mem_slots",
        "cpu: 4, as sonnet's example (rmc_nth_farthest.py) has them",
    ),
    PaperSetting(
        "RMC heads",
        "1, 8 or 16 (A.1)",
        "core.num_heads",
        "cpu: 4, as the example's (it takes them from the memories)",
    ),
    PaperSetting(
        "RMC units per head",
        "2048 / memories / heads (A.1)",
        "core.head_size",
        "cpu: 128 units per memory (4 heads of 32), 512 in all",
    ),
    PaperSetting("RMC attention blocks", "1 (A.1)", "core.num_blocks"),
    PaperSetting("RMC gating", "unit or memory (A.1)", "core.gate_style"),
    PaperSetting("LSTM units", "64 to 4096, no difference (A.1)", "core.hidden"),
    PaperSetting(
        "LSTM initialisation",
        "sonnet v1's LSTM: one fan-in over [x, h] (not stated; the papers' code)",
        "core.weight_init",
        'the run "lstm split init", a variant the paper does not have: input and recurrent weights each by their own '
        "fan-in (docs/results.md: it leaves the shortcut at 3 x 2 where the fused one does not)",
    ),
    PaperSetting("DNC controller", "2-layer LSTM (A.1)", "core.controller_layers"),
    PaperSetting(
        "DNC controller initialisation",
        "sonnet v1's LSTM (the papers' code)",
        "core.controller_weight_init",
        'the run "dnc split init" initialises the controller per part, as "lstm split init" does the LSTM',
    ),
    PaperSetting(
        "DNC memories x word",
        "1/8/16 x 128/512/1024, tied to the controller size (A.1)",
        "core.word_size",
        "cpu: 16 x 64 with a controller of 64",
    ),
    PaperSetting("DNC reads, writes", "1, 2 or 4 (A.1)", "core.num_reads"),
    PaperSetting(
        "learning-rate decay", "sonnet's example: x0.9 every 1% of its epochs, floor 8e-5", "", fixed="none (constant)"
    ),
    PaperSetting(
        "sequences per run",
        "not stated (Fig. 4: hours of GPU training)",
        "total_steps",
        "cpu: 10,000 updates; in the pilots the RMC left the shortcut after 2,000-3,750 updates on 2 of 3 seeds",
    ),
    PaperSetting("seeds", "not stated", "seeds"),
    PaperSetting(
        "score",
        "best batch accuracy during training",
        "",
        fixed="the final model's accuracy on 12,800 held-out sequences",
    ),
)


def beyond_rank0(overall: float, objects: int) -> float:
    """The accuracy on ranks above 0 of a model with ``overall`` accuracy that answers every rank 0
    (a ``1 / objects`` share of the questions): (overall - 1/N) · N / (N - 1)."""
    return (overall - 1 / objects) * objects / (objects - 1)


def rmc_nth_farthest(preset: str) -> Experiment:
    """The experiment's runs and checks in ``preset``: on the ranks above 0, the questions that need
    the vectors' distances, at v4's levels restated for them (80% overall; the shortcut + 0.1)."""
    objects = TASKS[preset]["num_objects"]
    shortcut, solves = 1 / (objects - 1), beyond_rank0(SOLVES, objects)
    stays = beyond_rank0(2 / objects + SHORTCUT_SLACK, objects)
    held = lambda run, op, threshold, why, **kw: held_out(
        run, op, threshold, why, measure="accuracy_beyond_rank0", **kw
    )
    return Experiment(
        name="rmc-nth-farthest",
        version=6,  # 3: no gradient clipping (A.1); 4: cpu at 3 x 2, 3 seeds, the split-init LSTM; 5: checks on ranks above 0; 6: decided against the split-init LSTM and DNC too
        description=(
            f"RMC, LSTM and DNC on Nth Farthest ({objects} vectors of {TASKS[preset]['num_features']} dimensions), "
            "each with the paper's 4x256 output MLP, scored on the ranks above 0"
        ),
        reproduces="Santoro et al. 2018, Sec. 5.1 and Figs. 4-5 (RMC ~91%, LSTM and DNC below 30%)",
        finding="the RMC reasons about distances between remembered vectors; LSTM and DNC cannot",
        paper_steps=None,
        runs=nth_farthest_runs(preset),
        expectations=(
            held(
                "nth farthest/rmc",
                ">",
                shortcut,
                f"the RMC leaves the shortcut on ranks above 0 ({shortcut:.2f}: a guess among the others)",
                learning=True,
            ),
            held(
                "nth farthest/rmc",
                ">=",
                solves,
                f"the RMC solves most questions above rank 0 ({solves:.2f}: 80% overall; paper: ~91%)",
                central=True,
            ),
            *(
                held(
                    f"nth farthest/{baseline}",
                    "<=",
                    stays,
                    f"the {baseline} stays near the shortcut {shortcut:.2f} above rank 0 "
                    f"(paper: below 30% at N = 8{'' if baseline in ('lstm', 'dnc') else '; a variant the paper does not have'})",
                )
                for baseline in BASELINES
            ),
            *(
                held(
                    "nth farthest/rmc",
                    ">",
                    None,
                    f"the RMC above the {baseline} on ranks above 0",
                    against=f"nth farthest/{baseline}",
                    central=True,
                )
                for baseline in BASELINES
            ),
        ),
        evaluation=held_out_evaluation(TEST_SEQUENCES),
        optima={
            "nth farthest": [
                (f"chance {1 / objects:.3f}", 1 / objects),
                (f"shortcut 2/N {2 / objects:.3f}", 2 / objects),
            ]
        },
        settings=SETTINGS,
        changes=(
            "v5 checked the ranks above 0 (v4 all ranks, a 1/N share of which every model answers from the reference id); v6 adds "
            "the DNC with its controller initialised per part and decides the claim against both variants of each baseline, "
            "the split-init LSTM included, where v5 kept it as a control outside the verdict (issue 64 §2)"
        ),
    )


register("rmc-nth-farthest", rmc_nth_farthest, presets=PRESETS)
