"""HTM on Paired Associative Inference (Lampinen et al. 2021, App. B.4, against MEMO's task,
Banino et al. 2020).

Finding: on chains of length 3 HTM infers A -> C across two stored pairs nearly as well as MEMO
and better than a Universal Transformer. memrl has neither baseline; in their place, a control
that says what the accuracy means: a one-layer HTM, whose one read can answer the direct queries
(A -> B, B -> C) but cannot reach C from A, so it should stay at chance on the indirect ones.
Trained on MEMO's batches (half direct, half indirect queries), scored per kind of query on
held-out stimuli.
"""

from __future__ import annotations

from pathlib import Path

import jax
import numpy as np

from memrl.experiments.base import EXPERIMENTS, Expectation, Experiment
from memrl.learn.supervised_config import SupervisedConfig

TEST_TRIALS = 2000


def pai_runs(total_steps: int = 2_000_000) -> dict[str, SupervisedConfig]:
    """``direct_fraction`` is spelled out so that a run folder of v1 (indirect queries only) is refused, not resumed."""
    common = dict(task="pai", task_args={"chain_length": 3, "direct_fraction": 0.5}, core="htm", total_steps=total_steps, batch_size=32, lr=1e-3, updates_per_chunk=200)
    model = dict(d_model=128, num_heads=4, mlp_dim=256, k=4)
    return {
        "length 3/htm, 2 layers": SupervisedConfig(core_args={**model, "num_layers": 2}, **common),
        "length 3/htm, 1 layer": SupervisedConfig(core_args={**model, "num_layers": 1}, **common),
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
        accuracy = jax.jit(learner.accuracy, static_argnums=(2, 3))
        per_seed = [accuracy(p, jax.random.PRNGKey(2020), TEST_TRIALS, "test") for p in final_params(folder)]
        rows[run] = {
            kind: {"per_seed": [float(a[kind]) for a in per_seed], "mean": float(np.mean([a[kind] for a in per_seed]))}
            for kind in (per_seed[0] if per_seed else ())
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


def htm_pai() -> Experiment:
    return Experiment(
        name="htm-pai",
        version=2,
        description="HTM on Paired Associative Inference (chains of 3, 16 per trial, MEMO's direct and indirect queries), with a 1-layer control",
        reproduces="Lampinen et al. 2021, App. B.4 (PAI length 3: HTM near MEMO, above a Universal Transformer)",
        runs=pai_runs(),
        expectations=(
            Expectation("length 3/htm, 2 layers", ">=", 0.9, "HTM infers across two pairs (paper: near MEMO)",
                        evaluated=("held_out", "length 3/htm, 2 layers", "indirect", "mean")),
            Expectation("length 3/htm, 1 layer", ">=", 0.9, "one read recalls a stored pair",
                        evaluated=("held_out", "length 3/htm, 1 layer", "direct", "mean")),
        ),
        optima={"length 3": [("chance", 0.5), ("direct solved, indirect at chance", 0.75)]},
        evaluation=evaluate_held_out,
    )


EXPERIMENTS.register("htm-pai", htm_pai)
