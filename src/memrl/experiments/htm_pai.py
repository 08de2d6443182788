"""HTM on Paired Associative Inference (Lampinen et al. 2021, App. B.4, against MEMO's task,
Banino et al. 2020).

Finding: on chains of length 3 HTM infers A -> C across two stored pairs nearly as well as MEMO
and better than a Universal Transformer. memrl has neither baseline; in their place, a control
that says what the accuracy means: a one-layer HTM, whose one read can answer the direct queries
(A -> B, B -> C) but cannot reach C from A, so it should stay at chance on the indirect ones.
Trained on MEMO's batches (half direct, half indirect queries) after a warm-up on direct queries
only (without it neither kind is learned at these budgets), scored per kind of query on held-out
stimuli; on MEMO's memory (16 chains, 32 stored pairs) and on a small one (2 chains, 4 pairs),
where the contrast appears at a CPU budget. On MEMO's memory the trials first store 2 of the 16
chains and then 4 and 8 (a curriculum over the memory's size; from 32 stored pairs at once
nothing is learned at these budgets).
"""

from __future__ import annotations

from pathlib import Path

import jax
import numpy as np

from memrl.experiments.base import Expectation, Experiment, register
from memrl.learn.supervised_config import SupervisedConfig

TEST_TRIALS = 2000
KIND_METRICS = {"indirect": "accuracy_indirect", "direct": "accuracy_direct", "all": "accuracy"}
"""kind of query -> the learner's evaluation metric"""


MEMORIES = {"16 chains": 16, "2 chains": 2}
"""panel -> chains per trial (MEMO's 16: 32 stored pairs; 2: 4 pairs, each read takes them all)"""

WARMUP = "2000 direct_fraction=1.0"
CURRICULA = {
    2: (WARMUP,),
    16: (f"{WARMUP} stored_chains=2", "28000 stored_chains=2", "15000 stored_chains=4", "15000 stored_chains=8"),
}
"""chains per trial -> stages before MEMO's batches on the whole memory (direct queries only for the
first 2000 updates, then half of each kind)"""
UPDATES = {2: 42_000, 16: 80_000}
"""updates of 32 trials per run, stages included (16 chains: 20000 on the whole memory)"""


def pai_runs() -> dict[str, SupervisedConfig]:
    """Per memory size, the 2-layer HTM and the 1-layer control."""
    model = dict(d_model=128, num_heads=4, mlp_dim=256, k=4)
    return {
        f"{panel}/htm, {layers} layer{'s' if layers > 1 else ''}": SupervisedConfig(
            task="pai", task_args={"chain_length": 3, "num_chains": chains, "direct_fraction": 0.5}, stages=CURRICULA[chains],
            core="htm-pai", core_args={**model, "num_layers": layers}, total_steps=32 * UPDATES[chains], batch_size=32, lr=1e-3,
            updates_per_chunk=500,
        )
        for panel, chains in MEMORIES.items() for layers in (2, 1)
    }


def evaluate_held_out(folders: dict, out: Path) -> dict:
    """Accuracy of each run's final model per kind of query, on fresh trials of held-out stimuli."""
    from rich.table import Table

    from memrl.console import console
    from memrl.experiments.final_agents import final_params
    from memrl.learn.learners import learner_for

    rows = {}
    for run, folder in folders.items():
        learner = learner_for(folder.load_config())
        evaluate = jax.jit(learner.evaluate, static_argnums=2)
        per_seed = [evaluate(p, jax.random.PRNGKey(2020), TEST_TRIALS) for p in final_params(folder)]
        rows[run] = {
            kind: {"per_seed": [float(a[metric]) for a in per_seed], "mean": float(np.mean([a[metric] for a in per_seed]))}
            for kind, metric in KIND_METRICS.items() if per_seed and metric in per_seed[0]
        }
    kinds = ("indirect", "direct", "all")
    table = Table(title=f"accuracy on held-out stimuli ({TEST_TRIALS} trials per seed, half of each kind; chance 0.5)")
    table.add_column("run")
    for kind in kinds:
        table.add_column({"indirect": "indirect (A-C)", "direct": "direct (A-B, B-C)", "all": "all"}[kind])
    for run, row in rows.items():
        table.add_row(run, *("-" if kind not in row else f"{row[kind]['mean']:.3f}" for kind in kinds))
    console.print(table)
    return {"held_out": rows}


def held_out(run: str, kind: str, op: str, threshold: float, why: str) -> Expectation:
    return Expectation(run, op, threshold, why, evaluated=("held_out", kind, "mean"))


def htm_pai() -> Experiment:
    return Experiment(
        name="htm-pai",
        version=4,
        description="HTM on Paired Associative Inference (chains of 3; MEMO's 16 per trial, reached by a curriculum over "
        "stored chains, and 2; direct and indirect queries after a direct-query warm-up), with a 1-layer control",
        reproduces="Lampinen et al. 2021, App. B.4 (PAI length 3: HTM near MEMO, above a Universal Transformer)",
        runs=pai_runs(),
        expectations=(
            held_out("16 chains/htm, 2 layers", "indirect", ">=", 0.9, "HTM infers across two pairs (paper: near MEMO)"),
            held_out("16 chains/htm, 1 layer", "direct", ">=", 0.9, "one read recalls a stored pair"),
            held_out("2 chains/htm, 2 layers", "indirect", ">=", 0.8, "two reads infer A -> C (small memory)"),
            held_out("2 chains/htm, 1 layer", "direct", ">=", 0.9, "one read recalls a stored pair (small memory)"),
            held_out("2 chains/htm, 1 layer", "indirect", "<=", 0.6, "one read cannot infer A -> C (the control)"),
        ),
        optima={panel: [("chance", 0.5), ("direct solved, indirect at chance", 0.75)] for panel in MEMORIES},
        evaluation=evaluate_held_out,
    )


register("htm-pai", htm_pai)
