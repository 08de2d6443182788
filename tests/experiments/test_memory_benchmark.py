"""memory-benchmark: every vector-observation memory through one agent and one learner on POPGym,
T-maze and MemoryChain tasks, scored between random play and the best return, in parts that each
fit one sitting."""

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from memrl import cores, envs, experiments
from memrl.experiments.base import Experiment
from memrl.experiments.memory_benchmark import (
    ADDED_MEMORIES,
    MEMORIES,
    PARTS,
    TASKS,
    THROUGHPUT_TASK,
    TUNED,
    evaluate_benchmark,
    memory_benchmark_runs,
    normalised,
    random_play_return,
    tasks_of,
)
from memrl.learn.ppo_config import PPOConfig
from memrl.run.folder import RunFolder
from memrl.run.seed_training import train_seeds


@pytest.mark.parametrize("preset", ["cpu", "paper"])
def test_every_memory_on_every_task_with_one_agent_and_learner_each_at_its_tuned_setting_on_the_cpu(preset):
    experiment = experiments.get("memory-benchmark", preset)
    memories = {**MEMORIES[preset], **ADDED_MEMORIES[preset]}
    assert experiment.kind == "benchmark" and experiment.version == 2 and len(memories) == 20
    assert set(experiment.runs) == {f"{task}/{memory}" for task in tasks_of(preset) for memory in memories}
    assert set(tasks_of(preset)) - set(TASKS) == ({"MiniGrid-MemoryS8"} if preset == "paper" else set())
    shared = memory_benchmark_runs(preset)  # version 1's: one optimiser setting for all
    for task in tasks_of(preset):
        configs = {memory: experiment.runs[f"{task}/{memory}"] for memory in memories}
        # apart from the memory and its optimiser setting, each task's runs are one config
        same = lambda c: dataclasses.replace(c, core=cores.make("gru"), lr=0.1, adam_eps=0.1)
        assert all(same(c) == same(shared[f"{task}/lstm"]) for c in configs.values())
        for memory, config in configs.items():
            assert config.core == memories[memory]
            setting = TUNED[memory] if preset == "cpu" else (shared[f"{task}/lstm"].lr, 1e-8)  # torch's Adam ε
            assert (config.lr, config.adam_eps) == setting
        assert all(
            c.seeds == 3 and c.seed == 0 and c.feed_prev_action and c.total_steps % c.steps_per_update == 0
            for c in configs.values()
        )
    central = [e for e in experiment.expectations if e.central]
    assert [(e.run, e.evaluated) for e in central] == [("RepeatPreviousEasy/gru", ("normalised",))]
    assert {e.run for e in experiment.expectations} >= {f"CountRecallEasy/{memory}" for memory in memories}


def test_the_tuned_settings_are_memory_tunings_choices_from_its_kept_pilots(tmp_path):
    """``TUNED`` is what memory-tuning v1's record (its kept pilot panels) chooses."""
    from memrl.experiments.kept_parts import restore_panels
    from memrl.experiments.memory_tuning import evaluate_tuning

    tuning = experiments.get("memory-tuning", "cpu")
    folders = {run: RunFolder(tmp_path / "runs" / run) for run in tuning.runs}
    restore_panels(tuning, folders, Path("docs/results"))
    assert all(folder.finished() for folder in folders.values())  # every pilot is kept
    for run, config in tuning.runs.items():
        folders[run].write_summary(config)
    evaluate_tuning(folders, tmp_path)
    chosen = json.loads((tmp_path / "choices.json").read_text())
    assert {memory: (c["lr"], c["adam_eps"]) for memory, c in chosen.items()} == TUNED


def test_the_parts_name_every_task_once_and_select_its_runs():
    experiment = experiments.get("memory-benchmark", "cpu")
    memories = {**MEMORIES["cpu"], **ADDED_MEMORIES["cpu"]}
    assert sorted(panel for panels in PARTS.values() for panel in panels) == sorted(TASKS)
    control = experiment.with_runs(["control"])
    assert set(control.runs) == {f"{task}/{memory}" for task in PARTS["control"] for memory in memories}
    assert not control.expectations  # the card tasks' checks wait for their part
    assert set(experiment.with_runs(["T-L", "MemoryChain/gru"]).runs) == {
        *(f"T-L/{memory}" for memory in memories),
        "MemoryChain/gru",
    }
    with pytest.raises(
        ValueError, match=rf"has {len(experiment.runs)} runs .*panels RepeatPreviousEasy, .*; parts chain, .*got nope"
    ):
        experiment.with_runs(["nope"])


def test_a_part_must_name_panels_of_the_experiment_once():
    runs = {
        "T-L/gru": PPOConfig(env=envs.make("tmaze/T-L"), core=cores.make("gru")),
        "T-LN/gru": PPOConfig(env=envs.make("tmaze/T-LN"), core=cores.make("gru")),
    }
    for parts in ({"a": ("T-L", "T-X")}, {"a": ("T-L",), "b": ("T-L",)}):
        with pytest.raises(ValueError, match="parts must name each of its panels at most once"):
            Experiment(name="x", version=1, description="x", reproduces="x", runs=runs, parts=parts)


def test_the_random_references_are_what_random_play_scores():
    tasks = tasks_of("paper")
    for name in ("T-L", "MemoryChain", "MiniGrid-MemoryS8"):  # the JAX tasks; POPGym's are stepped on the host alike
        assert random_play_return(tasks[name], episodes=1000) == pytest.approx(tasks[name].random, abs=5e-4)
    task = TASKS["T-L"]
    assert normalised(task.random, task) == 0.0 and normalised(task.best, task) == 1.0


@pytest.mark.slow
def test_the_evaluation_normalises_each_seed_and_times_the_throughput_task(tmp_path):
    pytest.importorskip("popgym")
    tiny = dict(
        encoder_widths=(8,),
        head_widths=(8,),
        feed_prev_action=True,
        num_envs=2,
        rollout_len=8,
        num_minibatches=1,
        update_epochs=1,
        total_steps=32,
        seeds=2,
    )
    runs = {
        f"{THROUGHPUT_TASK}/gru": PPOConfig(
            env=envs.make(TASKS[THROUGHPUT_TASK].env),
            core=cores.make("gru", hidden=8),
            **tiny,
        ),
        "T-L/lstm": PPOConfig(env=envs.make("tmaze/T-L", maze_length=4), core=cores.make("lstm", hidden=8), **tiny),
    }
    folders = {}
    for run, config in runs.items():
        folders[run] = RunFolder(tmp_path / run)
        folders[run].prepare(config)
        train_seeds(config, folders[run], config.seed_list())
        folders[run].write_summary(config)
    results = evaluate_benchmark(folders, tmp_path)
    for run, folder in folders.items():
        finals = [s["final"] for s in json.loads((folder.path / "summary.json").read_text())["seeds"].values()]
        task = TASKS[run.split("/")[0]]
        assert results["normalised"][run]["per_seed"] == pytest.approx([normalised(f, task) for f in finals])
    assert set(results["throughput"]) == {"gru"} and results["throughput"]["gru"] > 0
    assert np.isfinite(results["normalised"]["T-L/lstm"]["mean"])
    assert (tmp_path / "normalised_scores.png").stat().st_size > 0


@pytest.mark.parametrize("preset", ["cpu", "paper"])
def test_the_tuning_runs_every_memory_on_each_kind_of_demand_at_every_setting_on_a_pilot_seed(preset):
    from memrl.experiments.memory_benchmark import ADDED_MEMORIES, memory_benchmark_runs
    from memrl.experiments.memory_tuning import GRID, PILOT_SEED, PILOT_TASKS

    experiment = experiments.get("memory-tuning", preset)
    memories = {**MEMORIES[preset], **ADDED_MEMORIES[preset]}
    assert GRID[0] == (5e-4, 1e-5) and len(GRID) == 6  # memory-benchmark v1's setting first
    assert set(experiment.runs) == {
        f"{task} lr {lr:g} eps {eps:g}/{memory}"
        for task in PILOT_TASKS.values()
        for memory in memories
        for lr, eps in GRID
    }
    benchmark = memory_benchmark_runs(preset)
    for run, config in experiment.runs.items():
        panel, memory = run.split("/")
        task = panel.split(" ")[0]
        assert (config.seed, config.seeds, config.core) == (PILOT_SEED, 1, memories[memory])
        assert PILOT_SEED not in benchmark[f"{task}/lstm"].seed_list()  # never a reported seed
        assert dataclasses.replace(config, core=cores.make("gru"), lr=0.1, adam_eps=0.1, seed=0, seeds=3) == (
            dataclasses.replace(benchmark[f"{task}/lstm"], core=cores.make("gru"), lr=0.1, adam_eps=0.1)
        )
    assert experiment.kind == "benchmark" and experiment.keeps_results
    if preset == "cpu":  # sittings: each part at most 90 min on 2 cores; every panel in one
        assert sorted(p for part in experiment.parts.values() for p in part) == sorted(experiment.panels())
        assert len(experiment.parts) == 5 and all(len(part) <= 6 for part in experiment.parts.values())


def test_a_memorys_choice_is_its_best_mean_over_the_pilot_tasks_ties_to_the_first_setting():
    from memrl.experiments.memory_tuning import GRID, PILOT_TASKS, choices, pilot_panel

    tasks = list(PILOT_TASKS.values())
    scores = {f"{pilot_panel(t, lr, eps)}/s6": 0.0 for t in tasks for lr, eps in GRID}
    scores |= {f"{pilot_panel(t, lr, eps)}/lstm": 0.5 for t in tasks for lr, eps in GRID}
    scores[f"{pilot_panel(tasks[0], 2e-3, 1e-8)}/s6"] = 0.9  # best on one task
    scores[f"{pilot_panel(tasks[1], 1e-3, 1e-5)}/s6"] = 0.6  # lower mean than the above
    chosen = choices(scores)
    assert chosen["s6"] == {"lr": 2e-3, "adam_eps": 1e-8, "score": pytest.approx(0.3)}
    assert chosen["lstm"] == {"lr": 5e-4, "adam_eps": 1e-5, "score": 0.5}  # all equal: v1's setting
    del scores[f"{pilot_panel(tasks[2], 1e-3, 1e-8)}/lstm"]
    assert "lstm" not in choices(scores)  # a missing pilot: no choice


def test_the_tuning_evaluation_scores_each_pilot_and_writes_the_choices(tmp_path):
    """Each pilot run's normalised final return as an average entry the checks read, and choices.json."""
    from memrl.experiments.memory_tuning import evaluate_tuning

    experiment = experiments.get("memory-tuning", "cpu")
    folders = {}
    for run, config in experiment.runs.items():
        if run.endswith(("/lstm", "/s6")):
            folder = RunFolder(tmp_path / "runs" / run)
            folder.prepare(config)
            final = 1.0 if run.endswith("/lstm") else TASKS[run.split(" ")[0]].random
            (folder.path / "summary.json").write_text(json.dumps({"seeds": {"100": {"final": final}}}))
            folders[run] = folder
    evaluation = evaluate_tuning(folders, tmp_path)
    central = next(e for e in experiment.expectations if e.central)
    assert central.entry({}, evaluation)["per_seed"] == [1.0]  # the LSTM at v1's setting: the best
    assert json.loads((tmp_path / "choices.json").read_text())["s6"] == {"lr": 5e-4, "adam_eps": 1e-5, "score": 0.0}
