"""HTM on Paired Associative Inference (Lampinen et al. 2021, App. B.4, against MEMO's task,
Banino et al. 2020).

Finding: on chains of length 3 HTM infers A -> C across two stored pairs nearly as well as MEMO
and better than a Universal Transformer. memrl has neither baseline; in their place, controls
that say what the accuracy means: a one-layer HTM (one read cannot reach C from A, so it should
stay at chance on length 3) and a one-layer HTM on length-2 chains (direct recall of a stored
pair, which one read can do). Scored on held-out stimuli.
"""

from __future__ import annotations

from pathlib import Path

import jax
import numpy as np

from memrl.experiments.base import EXPERIMENTS, Expectation, Experiment
from memrl.learn.supervised_config import SupervisedConfig

TEST_TRIALS = 2000


def pai_runs(total_steps: int = 2_000_000) -> dict[str, SupervisedConfig]:
    common = dict(task="pai", core="htm", total_steps=total_steps, batch_size=32, lr=1e-3, updates_per_chunk=200)
    model = dict(d_model=128, num_heads=4, mlp_dim=256, k=4)
    return {
        "length 3/htm, 2 layers": SupervisedConfig(task_args={"chain_length": 3}, core_args={**model, "num_layers": 2}, **common),
        "length 3/htm, 1 layer": SupervisedConfig(task_args={"chain_length": 3}, core_args={**model, "num_layers": 1}, **common),
        "length 2/htm, 1 layer": SupervisedConfig(task_args={"chain_length": 2}, core_args={**model, "num_layers": 1}, **common),
    }


def evaluate_held_out(folders: dict, out: Path) -> dict:
    """Accuracy of each run's final model on fresh trials of held-out stimuli."""
    from rich.table import Table

    from memrl.console import console
    from memrl.experiments.final_agents import final_params
    from memrl.learn.learners import learner_for

    rows = {}
    for run, folder in folders.items():
        learner = learner_for(folder.load_config())
        accuracy = jax.jit(learner.accuracy, static_argnums=(2, 3))
        per_seed = [float(accuracy(p, jax.random.PRNGKey(2020), TEST_TRIALS, "test")) for p in final_params(folder)]
        rows[run] = {"test_accuracy": per_seed, "mean": float(np.mean(per_seed)) if per_seed else None}
    table = Table(title=f"accuracy on held-out stimuli ({TEST_TRIALS} trials per seed; chance 0.5)")
    table.add_column("run")
    table.add_column("test accuracy")
    for run, row in rows.items():
        table.add_row(run, "-" if row["mean"] is None else f"{row['mean']:.3f} ({', '.join(f'{a:.3f}' for a in row['test_accuracy'])})")
    console.print(table)
    return {"held_out": rows}


def htm_pai() -> Experiment:
    return Experiment(
        name="htm-pai",
        version=1,
        description="HTM on Paired Associative Inference (chains of 3, 16 per trial), with 1-layer and length-2 controls",
        reproduces="Lampinen et al. 2021, App. B.4 (PAI length 3: HTM near MEMO, above a Universal Transformer)",
        runs=pai_runs(),
        expectations=(
            Expectation("length 3/htm, 2 layers", ">=", 0.9, "HTM infers across two pairs (paper: near MEMO)"),
            Expectation("length 2/htm, 1 layer", ">=", 0.9, "one read recalls a stored pair"),
        ),
        optima={"length 3": [("chance", 0.5)], "length 2": [("chance", 0.5)]},
        evaluation=evaluate_held_out,
    )


EXPERIMENTS.register("htm-pai", htm_pai)
