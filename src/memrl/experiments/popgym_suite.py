"""memrl's memories on POPGym (Morad et al. 2023, "POPGym: Benchmarking partially observable
reinforcement learning", ICLR), the benchmark researchers already use: POPGym's baselines that
memrl has (the GRU, the LSTM, GTrXL) and AMRL-Max on four of its tasks at Easy, stepped on the
host through gymnasium (``env:gymnasium --env.id popgym:<id>``; needs the ``popgym`` extra).

- RepeatPreviousEasy: say the suit of the card dealt 4 steps ago (51 steps).
- AutoencodeEasy: watch a sequence of cards, then play it back in reverse (103 steps).
- CountRecallEasy: say how often the card just dealt has been dealt before (51 steps).
- PositionOnlyCartPoleEasy (POPGym's "stateless" CartPole): balance from positions alone, so
  velocities must be inferred from the past (up to 200 steps).

Version 2 is a part of ``memory-benchmark`` (issue 67: "popgym-suite becomes part of it"): its
runs are the benchmark's version 1 runs of these memories on these tasks (one shared optimiser
setting; ``memory_benchmark_runs``), the same configs, so the
benchmark's run folders are this experiment's too; its references are the benchmark's random play
(``memory_benchmark.TASKS``). Version 1 trained the same agents for 299k steps (146 updates)
before the benchmark existed; version 2 has the benchmark's 131k.

Every POPGym episode's return lies in [-1, 1] (1: every step right). On RepeatPrevious and
CountRecall a memory-less policy cannot do better than random play (the answer depends on cards no
longer in view), so scoring above random there is memory at work. The finding, as memrl checks it:
a memory core (the GRU, POPGym's strongest baseline) is well above the memory-less level on
RepeatPreviousEasy; the other tasks and cores are reported beside it.
"""

from __future__ import annotations

from memrl.experiments.base import Expectation, Experiment, register
from memrl.experiments.memory_benchmark import SETTINGS, memory_benchmark_runs
from memrl.experiments.memory_benchmark import TASKS as BENCHMARK_TASKS

TASKS = ("RepeatPreviousEasy", "CountRecallEasy", "PositionOnlyCartPoleEasy", "AutoencodeEasy")
MEMORIES = ("gru", "lstm", "amrl-max", "gtrxl")
REFERENCES = {task: BENCHMARK_TASKS[task].random for task in TASKS}
"""uniformly random play's mean return (the benchmark's ``random_play_return``): the memory-less level"""


def popgym_runs() -> dict:
    """The memory benchmark's cpu runs of ``MEMORIES`` on ``TASKS``."""
    return {
        run: config
        for run, config in memory_benchmark_runs("cpu").items()
        if run.split("/")[0] in TASKS and run.split("/", 1)[1] in MEMORIES
    }


def popgym_suite() -> Experiment:
    return Experiment(
        name="popgym-suite",
        version=2,
        description="GRU, LSTM, AMRL-Max and GTrXL on four POPGym tasks at Easy: the memory benchmark's POPGym part",
        reproduces="Morad et al. 2023 (POPGym), the memory models on its Easy tasks",
        finding="a memory core repeats the card of four steps ago (RepeatPreviousEasy)",
        kind="benchmark",
        part_of="memory-benchmark",
        paper_steps=None,  # the paper is not in this project: its budget is not checked here
        runs=popgym_runs(),
        expectations=(
            Expectation(
                "RepeatPreviousEasy/gru",
                ">",
                REFERENCES["RepeatPreviousEasy"] + 0.5,
                "the GRU is well above the memory-less level (-0.5; 1.0 is every answer right)",
                central=True,
                learning=True,
            ),
            *(
                Expectation(
                    f"{task}/{memory}",
                    ">",
                    REFERENCES[task],
                    f"{memory} is above the memory-less level ({REFERENCES[task]})",
                )
                for task in ("RepeatPreviousEasy", "CountRecallEasy")
                for memory in MEMORIES
            ),
        ),
        optima={task: (("random / memory-less", REFERENCES[task]), ("optimum", 1.0)) for task in TASKS},
        settings=SETTINGS,
        changes="part of memory-benchmark (issue 67): its runs of these memories and tasks, 131k steps a run where v1 "
        "trained 299k, and its random-play references",
    )


register("popgym-suite", popgym_suite)
