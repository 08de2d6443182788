"""TLB and a Transformer on the copying task as the gap grows (Didolkar et al. 2022, Sec. 5, Fig. 6,
Table 6, App. 7.6).

Finding (Fig. 6, Table 6): Transformer + TLB copies perfectly at every gap from 100 to 600, after
6,200 (gap 100) to 19,300 (gap 600) unique samples; the paper's baseline, the Feedback Transformer,
needs more samples and never reaches perfect accuracy beyond a gap of 300.

The paper's baseline is the Feedback Transformer (Fan et al. 2021), which memrl does not have;
memrl's baseline is the plain causal Transformer of the same width and depth (``transformer``, the
whole sequence in one block), the comparison the rest of the paper makes. Each model is the shared
sequence model (token embedding -> core -> linear readout), trained with Adam on fresh batches of
100; scored by the held-out sequence accuracy (all 10 digits right) after every 1,000 sequences,
and by the samples seen when it first reached 1.0 (Table 6's measure).
"""

from __future__ import annotations

from pathlib import Path

from memrl.experiments.base import Expectation, Experiment, PaperSetting, register
from memrl.learn.supervised_config import SupervisedConfig

PRESETS = ("cpu", "paper")
GAPS = {"paper": (100, 200, 300, 400, 500, 600), "cpu": (100, 200)}
SAMPLES_TO_PERFECT = {100: 6_200, 200: 9_100, 300: 12_700, 400: 14_600, 500: 13_600, 600: 19_300}
"""Table 6: unique samples Transformer + TLB needed to reach perfect accuracy"""

MODELS = {
    "paper": dict(d_model=256, mlp_dim=512, num_heads=4, num_reads=4, self_per_read=1),
    "cpu": dict(d_model=64, mlp_dim=128, num_heads=4, num_reads=2, self_per_read=1),
}
TLB = dict(chunk_size=10, num_state=20)
TRAINING = {
    "paper": dict(batch_size=100, lr=1e-4, total_steps=50_000, updates_per_chunk=10, embed_dim=256),
    "cpu": dict(batch_size=100, lr=1e-4, total_steps=30_000, updates_per_chunk=10, embed_dim=64),
}


def copying_runs(preset: str) -> dict[str, SupervisedConfig]:
    runs = {}
    for gap in GAPS[preset]:
        length = 2 * 10 + gap + 1
        cores = {"tlb": ("tlb", MODELS[preset] | TLB), "transformer": ("transformer", MODELS[preset] | dict(chunk_size=length))}
        for label, (core, args) in cores.items():
            runs[f"gap {gap}/{label}"] = SupervisedConfig(task="copying", task_args=dict(gap=gap), core=core, core_args=args, **TRAINING[preset])
    return runs


def first_perfect(rows: list[dict]) -> int | None:
    """The sequences seen when the held-out sequence accuracy first reached 1.0 (None if never)."""
    return next((row["sequences"] for row in rows if row.get("test_accuracy") == 1.0), None)


def evaluate_samples_to_perfect(folders: dict, out: Path) -> dict:
    """Per run: the samples to the first perfect held-out batch per seed, and their mean where
    every seed got there, beside Table 6's figure for TLB."""
    from rich.table import Table

    from memrl.console import console

    rows = {}
    table = Table(title="sequences seen when the held-out accuracy first reached 1.0 (Table 6)")
    for column in ("run", "per seed", "paper (TLB)"):
        table.add_column(column)
    for run, folder in folders.items():
        config = folder.load_config()
        per_seed = {str(seed): first_perfect(folder.read_metrics(seed)) for seed in config.seed_list()}
        reached = [v for v in per_seed.values() if v is not None]
        rows[run] = {"per_seed": per_seed, "all_reached": len(reached) == len(per_seed), "mean": sum(reached) / len(reached) if reached else None}
        gap = config.task_args["gap"]
        paper = f"{SAMPLES_TO_PERFECT[gap]:,}" if run.endswith("/tlb") else "-"
        table.add_row(run, ", ".join("never" if v is None else f"{v:,}" for v in per_seed.values()), paper)
    console.print(table)
    return {"samples_to_perfect": rows}


SETTINGS = (
    PaperSetting("gaps (blank steps)", "100, 200, 300, 400, 500, 600 (Fig. 6)", "task_args.gap", "cpu: the two shortest"),
    PaperSetting("baseline", "Feedback Transformer (Fan et al. 2021)", "", "memrl has no Feedback Transformer; the plain causal Transformer of the same size",
                 fixed="causal Transformer, the whole sequence in one block"),
    PaperSetting("layers", "4, R = 1: a state read after every self-attention layer (7.6)", "core_args.num_reads", "cpu: 2"),
    PaperSetting("width, FFN", "256, 512 (7.6)", "core_args.d_model", "cpu: 64, 128"),
    PaperSetting("heads", "not stated", "core_args.num_heads"),
    PaperSetting("chunk size", "10 (7.6)", "core_args.chunk_size"),
    PaperSetting("state vectors", "not stated (ListOps: 20)", "core_args.num_state"),
    PaperSetting("optimiser, learning rate", "Adam, 1e-4 (7.6)", "lr"),
    PaperSetting("batch", "100 (7.6)", "batch_size"),
    PaperSetting("sequences per run", "not stated (Table 6: up to 35,100 to perfect)", "total_steps", "cpu: what fits the budget"),
    PaperSetting("score", "samples to perfect accuracy (Table 6); accuracy (Fig. 6)", "",
                 fixed="sequences seen at the first perfect held-out batch of 100; held-out sequence accuracy"),
)


def tlb_copying(preset: str) -> Experiment:
    """The experiment's runs and checks in ``preset``."""
    runs = copying_runs(preset)
    return Experiment(
        name="tlb-copying",
        version=1,
        description="TLB and a causal Transformer of the same size on copying with growing gaps",
        reproduces="Didolkar et al. 2022, Fig. 6 and Table 6 (TLB copies perfectly at every gap)",
        finding="Transformer + TLB copies perfectly at every gap from 100 to 600",
        paper_steps=None,
        runs=runs,
        expectations=tuple(
            Expectation(run, ">=", 0.99, "TLB copies perfectly (Fig. 6)", central=True) for run in runs if run.endswith("/tlb")
        ),
        evaluation=evaluate_samples_to_perfect,
        optima={f"gap {gap}": [("perfect", 1.0)] for gap in GAPS[preset]},
        settings=SETTINGS,
    )


register("tlb-copying", tlb_copying, presets=PRESETS)
