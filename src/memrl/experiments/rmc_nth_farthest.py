"""RMC, LSTM and DNC on Nth Farthest (Santoro et al. 2018, Sec. 4.1 and 5.1, App. A.1, Figs. 4-5).

Finding: on 8 vectors of 16 dimensions the RMC reaches about 91% while the LSTM and the DNC stay
below 30% (their best batch accuracy), whatever their sizes.

Each model is the paper's: the core, then a 4-layer MLP of 256 ReLU units, then the softmax over
the 8 object ids, trained with softmax cross-entropy and Adam on fresh batches; scored on the last
step; the final models are scored on 12,800 held-out sequences. Presets:
- ``paper``: batch 1600, Adam 1e-4 (App. A.1), RMC with 8 memories of 2048/8 units (8 heads of 32,
  one block, unit gates: one of Fig. 4's best), LSTM 512, DNC with a 2-layer controller of 128 and
  16 memories of 128 (A.1: sizes made no difference for either), 3 seeds.
- ``cpu``: the same models at CPU sizes and batches (see ``SETTINGS``), one seed.
"""

from __future__ import annotations

from memrl.experiments.base import Experiment, PaperSetting, register
from memrl.experiments.evaluations import held_out_evaluation, held_out_expectation as held_out
from memrl.learn.supervised_config import SupervisedConfig

PRESETS = ("cpu", "paper")
HEAD = (256, 256, 256, 256)
"""the paper's output MLP, the same for every model (App. A.1)"""
TEST_SEQUENCES = 12_800
"""held-out sequences that score each final model (standard error under 0.005)"""

MODELS = {
    "paper": {
        "rmc": dict(mem_slots=8, head_size=32, num_heads=8, num_blocks=1, gate_style="unit"),
        "lstm": dict(hidden=512),
        "dnc": dict(memory_size=16, word_size=128, hidden=128, controller_layers=2, num_reads=4, num_writes=4, output_size=128),
    },
    "cpu": {
        "rmc": dict(mem_slots=8, head_size=32, num_heads=2, num_blocks=1, gate_style="unit"),
        "lstm": dict(hidden=256),
        "dnc": dict(memory_size=16, word_size=64, hidden=64, controller_layers=2, num_reads=4, num_writes=1, output_size=64),
    },
}
TRAINING = {
    "paper": dict(batch_size=1600, lr=1e-4, max_grad_norm=None, total_steps=1600 * 100_000, seeds=3, updates_per_chunk=500),
    "cpu": dict(batch_size=64, lr=1e-3, max_grad_norm=None, total_steps=64 * 60_000, seeds=1, updates_per_chunk=2000),
}


def nth_farthest_runs(preset: str) -> dict[str, SupervisedConfig]:
    return {
        f"nth farthest/{core}": SupervisedConfig(
            task="nth-farthest", task_args=dict(num_objects=8, num_features=16), core=core, core_args=args,
            embed_dim=40, head_widths=HEAD, **TRAINING[preset],
        )
        for core, args in MODELS[preset].items()
    }


SETTINGS = (
    PaperSetting("vectors x dimensions", "8 x 16 (Sec. 4.1)", "task_args.num_objects", fixed="8 x 16"),
    PaperSetting("optimiser", "Adam (A.1)", "", fixed="Adam"),
    PaperSetting("gradient clipping", "none stated (A.1)", "max_grad_norm",
                 "none (v2 clipped at memrl's default global norm 1.0)"),
    PaperSetting("learning rate", "1e-4 (A.1: tuned in 1e-5..1e-3, it did not matter)", "lr",
                 "cpu: 1e-3 with the smaller batch, the top of the paper's range"),
    PaperSetting("batch", "1,600 (A.1)", "batch_size", "cpu: a CPU update of 1600 sequences through the RMC takes seconds"),
    PaperSetting("output MLP", "4 layers of 256, ReLU (A.1)", "head_widths"),
    PaperSetting("input map before the core", "none (sonnet's example feeds the 40-wide rows to the core)", "embed_dim",
                 "memrl's sequence model always embeds; a 40-wide linear map before the core's own input map adds no capacity"),
    PaperSetting("RMC memories", "1, 8 or 16 (A.1, Fig. 4: 8 or 16 best)", "core_args.mem_slots"),
    PaperSetting("RMC heads", "1, 8 or 16 (A.1)", "core_args.num_heads", "cpu: fewer, narrower heads"),
    PaperSetting("RMC units per head", "2048 / memories / heads (A.1)", "core_args.head_size",
                 "cpu: 64 units per memory (2 heads of 32), 512 in all"),
    PaperSetting("RMC attention blocks", "1 (A.1)", "core_args.num_blocks"),
    PaperSetting("RMC gating", "unit or memory (A.1)", "core_args.gate_style"),
    PaperSetting("LSTM units", "64 to 4096, no difference (A.1)", "core_args.hidden"),
    PaperSetting("DNC controller", "2-layer LSTM (A.1)", "core_args.controller_layers"),
    PaperSetting("DNC memories x word", "1/8/16 x 128/512/1024, tied to the controller size (A.1)", "core_args.word_size",
                 "cpu: 16 x 64 with a controller of 64"),
    PaperSetting("DNC reads, writes", "1, 2 or 4 (A.1)", "core_args.num_reads"),
    PaperSetting("learning-rate decay", "sonnet's example: x0.9 every 1% of its epochs, floor 8e-5", "", fixed="none (constant)"),
    PaperSetting("sequences per run", "not stated (Fig. 4: hours of GPU training)", "total_steps", "cpu: what fits two hours on 2 cores"),
    PaperSetting("seeds", "not stated", "seeds"),
    PaperSetting("score", "best batch accuracy during training", "", fixed="the final model's accuracy on 12,800 held-out sequences"),
)


def rmc_nth_farthest(preset: str) -> Experiment:
    """The experiment's runs and checks in ``preset``."""
    return Experiment(
        name="rmc-nth-farthest",
        version=3,  # 3: no gradient clipping, as the paper states none (A.1)
        description="RMC, LSTM and DNC on Nth Farthest (8 vectors of 16 dimensions), each with the paper's 4x256 output MLP",
        reproduces="Santoro et al. 2018, Sec. 5.1 and Figs. 4-5 (RMC ~91%, LSTM and DNC below 30%)",
        finding="the RMC reasons about distances between remembered vectors; LSTM and DNC cannot",
        paper_steps=None,
        runs=nth_farthest_runs(preset),
        expectations=(
            held_out("nth farthest/rmc", ">=", 0.8, "the RMC solves most sequences (paper: ~91%)", central=True),
            held_out("nth farthest/lstm", "<=", 0.35, "the LSTM stays low (paper: below 30%)"),
            held_out("nth farthest/dnc", "<=", 0.35, "the DNC stays low (paper: below 30%)"),
            held_out("nth farthest/rmc", ">", None, "the RMC above the LSTM", against="nth farthest/lstm", central=True),
        ),
        evaluation=held_out_evaluation(TEST_SEQUENCES),
        optima={"nth farthest": [("chance 0.125", 0.125)]},
        settings=SETTINGS,
    )


register("rmc-nth-farthest", rmc_nth_farthest, presets=PRESETS)
