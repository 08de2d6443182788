"""The memory benchmark's tuning (issue 83 §3): each memory gets the same small budget to find its
learning rate and Adam ε before the benchmark reports it, so that a row measures the memory rather
than one shared optimiser setting (S6 stayed at chance under PPO's ε 1e-5 and lr 5e-4 and learned
MemoryChain at ε 1e-8 and lr 2e-3: docs/results/benchmarks.md, "S6 and Adam's ε").

The grid (``GRID``: lr 5e-4, 1e-3, 2e-3 × ε 1e-5, 1e-8; its first setting is memory-benchmark v1's)
is searched with one pilot seed (``PILOT_SEED``, never a seed the benchmark reports) on one task of
each kind of memory demand (``PILOT_TASKS``), with the benchmark's own agent, learner and budget.
A memory's choice (``choices``) is the setting of highest mean normalised final return over the
pilot tasks (0: random play, 1: the best; a tie goes to the setting listed first). The benchmark's
next version runs every memory at its choice; this experiment's kept parts hold the pilots.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np

from memrl.experiments.base import Expectation, Experiment, register
from memrl.experiments.evaluations import seed_entry
from memrl.experiments.memory_benchmark import (
    ADDED_MEMORIES,
    MEMORIES,
    PRESETS,
    SETTINGS,
    TASKS,
    memory_benchmark_runs,
    normalised,
)
from memrl.learn.ppo_config import PPOConfig

GRID = tuple((lr, eps) for eps in (1e-5, 1e-8) for lr in (5e-4, 1e-3, 2e-3))
"""(learning rate, Adam ε) settings searched, memory-benchmark v1's (5e-4, 1e-5) first"""
PILOT_TASKS = {
    "hold a cue": "MemoryChain",
    "recall the recent past": "RepeatPreviousEasy",
    "infer a state": "PositionOnlyCartPoleEasy",
}
"""one benchmark task for each kind of memory demand"""
PILOT_SEED = 100
"""the pilots' seed: the benchmark reports seeds 0-2"""


def setting_label(lr: float, eps: float) -> str:
    return f"lr {lr:g}, eps {eps:g}"


def pilot_panel(task: str, lr: float, eps: float) -> str:
    """The panel of ``task``'s pilots at one setting: "<task> lr <lr> eps <ε>" (no comma: the
    settings table lists panels with commas)."""
    return f"{task} lr {lr:g} eps {eps:g}"


def tuning_runs(preset: str) -> dict[str, PPOConfig]:
    """ "<task> lr <lr> eps <ε>/<memory>": each memory (v1's and those v2 adds) on each pilot task
    at each setting of the grid, one pilot seed, the benchmark's config otherwise."""
    benchmark = memory_benchmark_runs(preset)
    memories = {**MEMORIES[preset], **ADDED_MEMORIES[preset]}
    return {
        f"{pilot_panel(task, lr, eps)}/{memory}": dataclasses.replace(
            benchmark[f"{task}/lstm"], core=core, lr=lr, adam_eps=eps, seed=PILOT_SEED, seeds=1
        )
        for task in PILOT_TASKS.values()
        for memory, core in memories.items()
        for lr, eps in GRID
    }


def tuning_parts() -> dict[str, tuple[str, ...]]:
    """The sittings on 2 cores (each at most 90 minutes by memory-benchmark v1's rates: a MemoryChain
    panel of 20 memories about 26 min, RepeatPreviousEasy 22, PositionOnlyCartPoleEasy 6): the first
    two tasks a part per Adam ε, the third whole."""
    *split, whole = PILOT_TASKS.values()
    parts = {
        f"{task} eps {eps:g}": tuple(pilot_panel(task, lr, e) for lr, e in GRID if e == eps)
        for task in split
        for eps in dict.fromkeys(eps for _, eps in GRID)
    }
    return parts | {whole: tuple(pilot_panel(whole, lr, eps) for lr, eps in GRID)}


def setting_means(scores: dict[str, float]) -> dict[str, list[float]]:
    """Per memory in ``scores`` (run name -> normalised final return) that has every pilot: its mean
    over the pilot tasks at each setting of ``GRID``, in order."""
    means = {}
    for memory in dict.fromkeys(run.split("/", 1)[1] for run in scores):
        runs = [[f"{pilot_panel(task, lr, eps)}/{memory}" for task in PILOT_TASKS.values()] for lr, eps in GRID]
        if all(run in scores for setting in runs for run in setting):
            means[memory] = [float(np.mean([scores[run] for run in setting])) for setting in runs]
    return means


def choices(scores: dict[str, float]) -> dict[str, dict]:
    """Each memory's setting of highest mean normalised score over the pilot tasks (``setting_means``),
    with that mean; a tie goes to the setting listed first in ``GRID``. A memory with a pilot missing
    is left out."""
    chosen = {}
    for memory, means in setting_means(scores).items():
        best = int(np.argmax(means))  # the first of equal means
        chosen[memory] = {"lr": GRID[best][0], "adam_eps": GRID[best][1], "score": means[best]}
    return chosen


def evaluate_tuning(folders: dict, out: Path) -> dict:
    """Each pilot run's normalised final return, and each memory's choice (``choices``), printed
    and written to ``out/choices.json``."""
    from rich.table import Table

    from memrl.console import console

    scores = {}
    for run, folder in folders.items():
        summary = folder.path / "summary.json"
        if summary.exists():
            (final,) = [seed["final"] for seed in json.loads(summary.read_text())["seeds"].values()]
            scores[run] = normalised(final, TASKS[run.split(" ")[0]])
    chosen, means = choices(scores), setting_means(scores)
    table = Table(title=f"each memory's choice: mean normalised final return over {', '.join(PILOT_TASKS.values())}")
    for column in ("memory", *(setting_label(lr, eps) for lr, eps in GRID), "chosen"):
        table.add_column(column)
    for memory, choice in chosen.items():
        table.add_row(memory, *(f"{m:.2f}" for m in means[memory]), setting_label(choice["lr"], choice["adam_eps"]))
    console.print(table)
    (out / "choices.json").write_text(json.dumps(chosen, indent=2) + "\n")
    return {"normalised": {run: seed_entry([score]) for run, score in scores.items()}}


def memory_tuning(preset: str) -> Experiment:
    """The experiment's runs and checks in ``preset``."""
    v1 = pilot_panel("MemoryChain", *GRID[0])
    return Experiment(
        name="memory-tuning",
        version=1,
        description="each memory of the memory benchmark at 6 optimiser settings (lr x Adam eps), one pilot seed, "
        "on one task of each kind of memory demand",
        reproduces="issue 83 §3: one shared tuning budget for every memory before the benchmark",
        finding="each memory's learning rate and Adam eps, chosen on pilots",
        kind="benchmark",
        paper_steps=None,
        runs=tuning_runs(preset),
        expectations=(
            Expectation(
                f"{v1}/lstm",
                ">",
                TASKS["MemoryChain"].random,
                f"the LSTM at memory-benchmark v1's setting is above random play on MemoryChain ({TASKS['MemoryChain'].random})",
                learning=True,
            ),
            Expectation(
                f"{v1}/lstm",
                ">=",
                0.9,
                "the LSTM at v1's setting solves MemoryChain as it did in v1 (normalised 0.9 or more; v1: 1.00)",
                evaluated=("normalised",),
                central=True,
            ),
        ),
        evaluation=evaluate_tuning,
        settings=SETTINGS,
        parts=tuning_parts() if preset == "cpu" else {},
        keeps_results=True,
    )


register("memory-tuning", memory_tuning, presets=PRESETS)
