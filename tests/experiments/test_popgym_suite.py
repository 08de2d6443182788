"""popgym-suite: POPGym's tasks run through gymnasium on the host with memrl's cores, scored against
the memory-less level measured for each task."""

import gymnasium
import numpy as np
import pytest

from memrl.experiments import get
from memrl.experiments.memory_benchmark import TASKS as BENCHMARK_TASKS
from memrl.experiments.popgym_suite import MEMORIES, REFERENCES, TASKS

pytest.importorskip("popgym")


def test_every_task_with_every_core_on_the_host():
    experiment = get("popgym-suite")
    assert set(experiment.runs) == {f"{task}/{core}" for task in TASKS for core in MEMORIES}
    for config in experiment.runs.values():
        assert config.env_name.startswith("gymnasium/popgym:popgym-") and config.seeds >= 3
        assert config.total_steps % config.steps_per_update == 0  # no rounding note
    central = [e for e in experiment.expectations if e.central]
    assert [(e.run, e.op) for e in central] == [("RepeatPreviousEasy/gru", ">")]


def test_the_memory_less_levels_are_what_random_play_scores():
    """REFERENCES (the memory benchmark's random play: 1,000 episodes through memrl's host adapter)
    against 60 episodes of uniformly random actions through gymnasium itself (a memory-less policy
    cannot beat random on RepeatPrevious and CountRecall)."""
    for task in TASKS:
        env, returns = gymnasium.make(BENCHMARK_TASKS[task].env.removeprefix("gymnasium/")), []
        env.action_space.seed(0)
        for episode in range(60):
            env.reset(seed=1000 + episode)
            done, total = False, 0.0
            while not done:
                _, reward, terminated, truncated, _ = env.step(env.action_space.sample())
                total, done = total + reward, terminated or truncated
            returns.append(total)
        assert abs(np.mean(returns) - REFERENCES[task]) < 4 * np.std(returns) / np.sqrt(len(returns)) + 0.01, task
