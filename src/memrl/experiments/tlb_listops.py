"""TLB and a Transformer on ListOps (Didolkar et al. 2022, Sec. 5, Table 4, Tables 7-8, App. 7.3).

Finding (Table 4): Transformer + TLB 38.2% against the Transformer's 37.64% on LRA's ListOps; Table
7: accuracy peaks at chunks of 100 (36.08, 36.49, 38.18, 36.97, 36.82 at chunks 2, 20, 100, 500,
1000). The 32.10% that is sometimes quoted as "the Transformer" is the paper's ablation in which
each chunk attends to the previous chunk instead of a bottleneck (7.3), not the Transformer.

App. 7.3 states chunks of 20 with 20 state vectors, while Tables 7 and 8 reach the reported 38.2%
at chunks of 100 with 20 state vectors (and LRA's ``transformer_tlb`` config uses blocks of 100):
memrl uses 100 and 20. Both models are memrl's causal cores inside the shared sequence model
(token embedding -> core -> linear readout at the last token); LRA's models read the answer from a
pooled, bidirectional encoding instead. Scored by each final model's accuracy on 2,560 draws from
the held-out trees.
"""

from __future__ import annotations

from memrl.cores.tlb import TemporalLatentBottleneck
from memrl.experiments.base import Experiment, PaperSetting, register
from memrl.experiments.evaluations import above_chance, held_out_evaluation, held_out_expectation
from memrl.learn.supervised_config import SupervisedConfig
from memrl.tasks.listops import ListOps

PRESETS = ("cpu", "paper")
TEST_DRAWS = 2_560
CHUNK_ABLATION = (2, 20, 100, 500, 1000)
"""Table 7's chunk sizes (paper preset)"""

TASK = {
    "paper": dict(min_length=500, max_length=2000, train_size=96_000, test_size=2_000),
    "cpu": dict(min_length=100, max_length=300, train_size=20_000, test_size=2_000),
}
MODEL = dict(d_model=64, mlp_dim=128, num_heads=4, num_reads=2, self_per_read=1)
TLB = dict(chunk_size=100, num_state=20)
TRAINING = {
    "paper": dict(batch_size=32, lr=1e-4, lr_warmup=1000, total_steps=32 * 5000, updates_per_chunk=250, embed_dim=64),
    "cpu": dict(batch_size=32, lr=1e-4, lr_warmup=1000, total_steps=32 * 2000, updates_per_chunk=250, embed_dim=64),
}


def listops_runs(preset: str) -> dict[str, SupervisedConfig]:
    task, training = ListOps(**TASK[preset]), TRAINING[preset]
    run = lambda settings: SupervisedConfig(task=task, core=TemporalLatentBottleneck(**MODEL | settings), **training)
    runs = {
        "listops/tlb": run(TLB),
        "listops/transformer": run(dict(num_state=0, chunk_size=task.max_length)),
    }
    if preset == "paper":
        runs |= {
            f"chunk size/tlb chunk {k}": run(TLB | dict(chunk_size=k)) for k in CHUNK_ABLATION if k != TLB["chunk_size"]
        }
    return runs


SETTINGS = (
    PaperSetting(
        "data",
        "LRA ListOps: 96,000 training and 2,000 test trees of 500-2,000 tokens",
        "task.max_length",
        "cpu: 20,000 trees of 100-300 tokens (at 500 tokens the Transformer took 4.1 s per update on a shared core: 2.3 h for the run)",
    ),
    PaperSetting("layers, width, FFN", "2, 64, 128 (7.3)", "core.d_model"),
    PaperSetting("heads", "not stated", "core.num_heads"),
    PaperSetting("reads per self-attention layer (R)", "1 (7.3)", "core.self_per_read"),
    PaperSetting(
        "chunk size",
        "20 (7.3); 100 best (Table 7)",
        "core.chunk_size",
        "Table 7's 100: where the reported 38.2% was reached",
    ),
    PaperSetting("state vectors", "20 (7.3, Table 8)", "core.num_state"),
    PaperSetting(
        "baseline",
        "Table 4: the vanilla Transformer (37.64%) and the Transformer-LS (37.5%); Fig. 5a: the Transformer-LS",
        "",
        "memrl has no Transformer-LS (Zhu et al. 2021); its Transformer is causal, over the whole sequence",
        fixed="the causal Transformer of the same size (transformer)",
    ),
    PaperSetting(
        "measure",
        "Table 4: test accuracy, 5 seeds; Fig. 5a: accuracy against samples over one pass of the data",
        "",
        "Table 4's claim is checked; Fig. 5a's (sample efficiency against the Transformer-LS) is not, without its baseline",
        fixed="final accuracy on 2,560 draws from the held-out trees",
    ),
    PaperSetting(
        "passes over the training trees",
        "one (Fig. 5a); Table 4: 5,000 steps of 32 over 96,000 trees (1.7)",
        "",
        "cpu: 64,000 sequences drawn from 20,000 trees (3.2 passes)",
        fixed="sequences drawn with replacement from the bank",
    ),
    PaperSetting(
        "readout",
        "TLB: the mean of the state vectors, then a classifier (3.3); Transformer: LRA's pooled bidirectional encoding",
        "",
        "memrl's cores are causal; both models' answer is read at the last token",
        fixed="causal core, read at the last token",
    ),
    PaperSetting("optimiser, learning rate", "Adam, 1e-4, 1,000 warm-up steps (7.3)", "lr"),
    PaperSetting("warm-up updates", "1,000 (7.3)", "lr_warmup"),
    PaperSetting("batch", "32 (7.3)", "batch_size"),
    PaperSetting("sequences per run", "5,000 steps of 32 (7.3)", "total_steps", "cpu: 2,000 updates"),
    PaperSetting(
        "score", "test accuracy, 5 seeds", "", fixed="the final model on 2,560 draws from the held-out trees, 1 seed"
    ),
)


def tlb_listops(preset: str) -> Experiment:
    """The experiment's runs and checks in ``preset``."""
    runs = listops_runs(preset)
    return Experiment(
        name="tlb-listops",
        version=3,  # 3: a learning check (above chance); "more accurate", as Table 4 says
        description="TLB and a causal Transformer of its size on ListOps (and Table 7's chunk sizes in the paper preset)",
        reproduces="Didolkar et al. 2022, Table 4 (TLB 38.2% vs Transformer 37.64%) and Table 7",
        finding="TLB is more accurate than a Transformer on ListOps",
        paper_steps=160_000,
        runs=runs,
        expectations=(
            above_chance("listops/tlb", runs["listops/tlb"].task, "TLB"),
            held_out_expectation(
                "listops/tlb",
                ">",
                None,
                "TLB more accurate than the Transformer (Table 4)",
                against="listops/transformer",
                central=True,
            ),
        ),
        evaluation=held_out_evaluation(
            TEST_DRAWS, batch_size=32
        ),  # the training batch: attention over 2,000 steps is large
        settings=SETTINGS,
    )


register("tlb-listops", tlb_listops, presets=PRESETS)
