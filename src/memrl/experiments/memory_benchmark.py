"""memrl's memory benchmark: every memory that reads a vector observation, the five papers' and
the linear-recurrent ones, through one agent and one learner (recurrent PPO) on the memory tasks
researchers know: POPGym's (Morad et al. 2023, ICLR; stepped on the host through gymnasium, the
``popgym`` extra), AMRL's T-mazes (Beck et al. 2020) and bsuite's MemoryChain (through gymnax).
No paper made this comparison: it is a benchmark record, not a reproduction.

Each seed's final return is normalised per task between uniformly random play (``Task.random``,
measured by ``random_play_return``) and the task's best return (``Task.best``): 0 is no skill, 1
is the optimum. The table holds each memory's normalised score per task (mean over seeds) and
their mean over tasks, beside its training throughput (env steps per second on one core: each
memory's learner timed on ``THROUGHPUT_TASK`` after its runs). On RepeatPrevious and CountRecall
a memory-less agent cannot beat random play, and on the T-mazes it cannot beat 0.5 (``Task.about``),
so a score above those is memory at work.

Version 1 ran 16 memories at one shared optimiser setting (lr 5e-4, Adam ε 1e-5), which held S6 at
chance (issue 83). Version 2 adds S5, DeltaNet, Gated DeltaNet and the mLSTM (``ADDED_MEMORIES``)
and runs each memory in the cpu preset at its own learning rate and ε (``TUNED``), chosen by
``memory-tuning`` on a pilot seed from one grid shared by all; ``memory_benchmark_runs`` keeps
version 1's shared setting, the base the tuning and popgym-suite start from.

Presets: ``cpu`` sized for 2 CPU cores and run in ``PARTS`` (each at most about 90 minutes);
``paper`` follows POPGym's own runs (``popgym/baselines/ppo.py``) for whoever has a GPU, every
memory at POPGym's one setting, and adds XLand-MiniGrid's MiniGrid-MemoryS8 (``PAPER_TASKS``, stepped
in JAX: the ``xminigrid`` extra). Every memory on a task gets the same agent, learner and budget
apart from its optimiser setting; ``SETTINGS`` lists every difference from POPGym's settings
(``memrl list --experiment memory-benchmark``).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from memrl import envs
from memrl.cores.amrl import AMRL
from memrl.cores.delta_net import DeltaNet
from memrl.cores.dnc import DNC
from memrl.cores.feedback_transformer import FeedbackTransformer
from memrl.cores.ffm import FFM
from memrl.cores.gru import GRU
from memrl.cores.htm import HierarchicalTransformerMemory
from memrl.cores.linear_attention import LinearAttention
from memrl.cores.lru import LRU
from memrl.cores.lstm import LSTM
from memrl.cores.min_gru import MinGRU
from memrl.cores.mlstm import MLSTM
from memrl.cores.rmc import RelationalMemory
from memrl.cores.s5 import S5
from memrl.cores.s6 import S6
from memrl.cores.tlb import TemporalLatentBottleneck
from memrl.cores.transformer_xl import TransformerXL
from memrl.experiments.base import Expectation, Experiment, PaperSetting, register
from memrl.experiments.evaluations import seed_entry
from memrl.learn.ppo_config import PPOConfig

PRESETS = ("cpu", "paper")


@dataclasses.dataclass(frozen=True)
class Task:
    """One column of the benchmark: the environment, its reference returns, and what it asks of memory."""

    env: str
    env_args: dict
    random: float
    """mean return of uniformly random play (``random_play_return``: the first episodes of 1,000 copies, key 0)"""
    best: float
    """the largest return an episode can have (POPGym's 1.0 is every step right; on HigherLower the
    deck's luck keeps even a perfect card counter below it)"""
    about: str


def popgym(task: str, random: float, about: str) -> Task:
    """A POPGym task (returns in [-1, 1]; 1: every step right)."""
    return Task(f"gymnasium/popgym:popgym-{task}-v0", {}, random, 1.0, about)


TASKS = {
    "RepeatPreviousEasy": popgym("RepeatPreviousEasy", -0.5, "say the suit of the card dealt 4 steps ago"),
    "CountRecallEasy": popgym("CountRecallEasy", -0.925, "say how often the card just dealt was dealt before"),
    "AutoencodeEasy": popgym("AutoencodeEasy", -0.5, "watch cards, then play them back in reverse"),
    "PositionOnlyCartPoleEasy": popgym(
        "PositionOnlyCartPoleEasy", 0.111, "balance from positions alone (velocities from the past)"
    ),
    "MineSweeperEasy": popgym("MineSweeperEasy", -0.224, "clear a 4x4 field, remembering what each probe showed"),
    "HigherLowerEasy": popgym("HigherLowerEasy", 0.002, "guess whether the next card is higher, counting cards seen"),
    "T-L": Task("tmaze/T-L", dict(maze_length=50), 0.416, 4.0, "carry the indicator to the junction (memory-less 0.5)"),
    "T-LN": Task(
        "tmaze/T-LN", dict(maze_length=50), 0.416, 4.0, "the same with noise in the corridor (memory-less 0.5)"
    ),
    "MemoryChain": Task(
        "gymnax/MemoryChain-bsuite", dict(memory_length=30), 0.024, 1.0, "recall the context bit of 30 steps ago"
    ),
}
"""column -> task, the same in both presets: the T-mazes (50 cells) and the chain (30 steps) ask a
memory to hold one bit for longer than POPGym's Easy card tasks do"""
PAPER_TASKS = {
    "MiniGrid-MemoryS8": Task(
        "xminigrid/MiniGrid-MemoryS8",
        {"one_hot": True},
        0.196,
        1 - 0.9 * 3 / 320,
        "say which end object matches the one in the first room (XLand-MiniGrid's, stepped in JAX; a guess 0.48)",
    )
}
"""columns of the paper preset alone: a JAX-native suite (the ``xminigrid`` extra; issue 87 §3), whose
steps cost nothing on the host where a GPU runs the learner; its cells one-hot, as xminigrid-control's.
Its best: three steps from the last corridor cell to the matching side (1 − 0.9 · 3 / 320); in
xminigrid-control a GRU solved it on every seed in 16.8M steps with 1,024 environments a batch (version 4),
on 2 seeds of 5 with 32 (version 3); the paper preset here steps POPGym's 64 environments × 1,024."""


def tasks_of(preset: str) -> dict[str, Task]:
    """The benchmark's columns in ``preset``: ``TASKS``, and in the paper preset ``PAPER_TASKS`` too."""
    return {**TASKS, **(PAPER_TASKS if preset == "paper" else {})}


THROUGHPUT_TASK = "RepeatPreviousEasy"


def memories(width: int, model_width: int, memory_length: int, htm_chunks: int, htm_k: int) -> dict:
    """memory -> its core: recurrent states ``width`` wide (an RMC row, the DNC's controller,
    the linear-recurrent states too), attention layers ``model_width`` wide with MLPs twice that,
    ``memory_length`` cached steps for the GTrXL and the Feedback Transformer, and HTM's store of
    ``htm_chunks`` chunks of 16 steps read ``htm_k`` at a time. The two gated memories that start
    by halving their state every step also run with a start that keeps it: the GRU as Cho et al. and
    PyTorch start it (POPGym's) and with its update gate's bias at 1.0 ("gru-bias1", the LSTM's
    forget-gate start), minGRU as its paper and with its gate's bias at -3 ("min-gru-bias-3"): each
    the smallest of 1 and 3 that solved MemoryChain on pilot seeds 100-102, where the halving starts
    stayed at chance (docs/results/benchmarks.md#memory-benchmark)."""
    layers = dict(num_heads=4, d_model=model_width, mlp_dim=2 * model_width)
    return {
        "lstm": LSTM(hidden=width),
        "gru": GRU(hidden=width),
        "gru-bias1": GRU(hidden=width, update_bias=1.0),
        "amrl-max": AMRL(aggregator="max", hidden=width),
        "dnc": DNC(hidden=width, output_size=width),
        "rmc": RelationalMemory(mem_slots=4, num_heads=4, head_size=width // 4),
        "htm": HierarchicalTransformerMemory(
            num_layers=2, **layers, window=16, chunk_size=16, num_chunks=htm_chunks, k=htm_k
        ),
        "tlb": TemporalLatentBottleneck(**layers, chunk_size=10, num_state=8),
        "gtrxl": TransformerXL(gated=True, num_layers=2, **layers, memory_length=memory_length),
        "feedback-transformer": FeedbackTransformer(num_layers=2, **layers, memory_length=memory_length),
        "lru": LRU(hidden=width, state=width),
        "s6": S6(hidden=width, channels=width, state=16),
        "ffm": FFM(hidden=width),
        "linear-attention": LinearAttention(hidden=width, num_heads=4, head_size=width // 4),
        "min-gru": MinGRU(hidden=width),
        "min-gru-bias-3": MinGRU(hidden=width, gate_bias=-3.0),
    }


MEMORIES = {
    "cpu": memories(width=128, model_width=64, memory_length=64, htm_chunks=8, htm_k=4),
    "paper": memories(width=256, model_width=256, memory_length=256, htm_chunks=64, htm_k=8),
}
"""about 128 units of memory in the cpu preset (the attention layers 64 wide, as popgym-suite's
GTrXL and htm-rl-control's HTM), POPGym's 256 in the paper's"""


def added_memories(width: int) -> dict:
    """The memories that version 2 adds (issue 83 §4): S5 with ``width`` // 2 complex states, and
    DeltaNet, Gated DeltaNet and the mLSTM with 4 heads over a ``width``-wide output."""
    heads = dict(hidden=width, num_heads=4, head_size=width // 4)
    return {
        "s5": S5(hidden=width, state=width // 2, blocks=4),
        "delta-net": DeltaNet(**heads),
        "gated-delta-net": DeltaNet(**heads, gated=True),
        "mlstm": MLSTM(**heads),
    }


ADDED_MEMORIES = {"cpu": added_memories(128), "paper": added_memories(256)}

LEARNER = {
    "cpu": dict(
        num_envs=16,
        rollout_len=128,
        num_minibatches=4,
        update_epochs=4,
        lr=5e-4,
        gamma=0.99,
        encoder_widths=(64,),
        head_widths=(64,),
        total_steps=64 * 2048,
        seeds=3,
    ),
    "paper": dict(
        num_envs=64,
        rollout_len=1024,
        num_minibatches=8,
        update_epochs=30,
        lr=5e-5,
        adam_eps=1e-8,
        gamma=0.99,
        gae_lambda=1.0,
        clip_epsilon=0.3,
        encoder_widths=(128,),
        head_widths=(128, 128),
        total_steps=229 * 65_536,  # POPGym's 15M in whole batches
        seeds=3,
    ),
}
"""recurrent PPO with the previous action as input (POPGym's ``PreviousAction`` wrapper) for every
memory and task; the cpu preset's batches those popgym-suite's pilot sized for 2 cores (16 envs x
128 steps, 4 epochs of 4 minibatches); the paper preset's batches are POPGym's (64 envs x 1,024 steps, minibatches of
8,192 steps) with RLlib's PPO defaults where ppo.py sets nothing (lr 5e-5, 30 SGD iterations,
lambda 1.0, clip 0.3) and torch's Adam ε (1e-8: RLlib's torch policies build ``torch.optim.Adam``
with the learning rate alone)"""

TUNED = {
    "lstm": (2e-3, 1e-5),
    "gru": (2e-3, 1e-5),
    "gru-bias1": (2e-3, 1e-5),
    "amrl-max": (5e-4, 1e-5),
    "dnc": (2e-3, 1e-5),
    "rmc": (1e-3, 1e-8),
    "htm": (5e-4, 1e-8),
    "tlb": (5e-4, 1e-8),
    "gtrxl": (5e-4, 1e-8),
    "feedback-transformer": (2e-3, 1e-8),
    "lru": (5e-4, 1e-5),
    "s6": (2e-3, 1e-8),
    "ffm": (2e-3, 1e-5),
    "linear-attention": (2e-3, 1e-8),
    "min-gru": (1e-3, 1e-8),
    "min-gru-bias-3": (2e-3, 1e-8),
    "s5": (2e-3, 1e-5),
    "delta-net": (1e-3, 1e-5),
    "gated-delta-net": (1e-3, 1e-5),
    "mlstm": (2e-3, 1e-8),
}
"""memory -> (learning rate, Adam ε) it runs at in version 2's cpu preset: its choice in memory-tuning
v1 (the highest mean normalised return over MemoryChain, RepeatPreviousEasy and
PositionOnlyCartPoleEasy on pilot seed 100, lr {5e-4, 1e-3, 2e-3} x ε {1e-5, 1e-8};
docs/results/benchmarks.md#memory-tuning; a test recomputes it from that record's kept pilots)"""

PARTS = {
    "chain": ("MemoryChain",),
    "repeat": ("RepeatPreviousEasy",),
    "count": ("CountRecallEasy",),
    "higher-lower": ("HigherLowerEasy",),
    "cards": ("AutoencodeEasy", "MineSweeperEasy"),
    "control": ("PositionOnlyCartPoleEasy", "T-L", "T-LN"),
}
"""the cpu preset's parts (``memrl reproduce memory-benchmark --runs PART``), each about 90 minutes
or less on 2 cores by version 1's times for its 16 memories scaled by 1.4 for version 2's 20
(docs/results/benchmarks.md#memory-benchmark)"""


def memory_benchmark_runs(preset: str) -> dict[str, PPOConfig]:
    """Version 1's runs "<task>/<memory>": every memory of ``MEMORIES`` on every task with the
    preset's learner at its one optimiser setting."""
    return {
        f"{name}/{memory}": PPOConfig(
            env=envs.make(task.env, **task.env_args),
            core=core,
            feed_prev_action=True,
            **LEARNER[preset],
        )
        for name, task in tasks_of(preset).items()
        for memory, core in MEMORIES[preset].items()
    }


def tuned_runs(preset: str) -> dict[str, PPOConfig]:
    """Version 2's runs "<task>/<memory>": every memory of ``MEMORIES`` and ``ADDED_MEMORIES`` on
    every task with the preset's learner, in the cpu preset at the memory's ``TUNED`` setting."""
    shared = memory_benchmark_runs(preset)
    return {
        f"{name}/{memory}": dataclasses.replace(
            shared[f"{name}/lstm"],
            core=core,
            **(dict(zip(("lr", "adam_eps"), TUNED[memory])) if preset == "cpu" else {}),
        )
        for name in tasks_of(preset)
        for memory, core in {**MEMORIES[preset], **ADDED_MEMORIES[preset]}.items()
    }


def random_play_return(task: Task, episodes: int = 1000, key: int = 0) -> float:
    """The mean return of uniformly random play over the first episode of ``episodes`` copies of
    ``task``'s environment (``Task.random``)."""
    from memrl import envs
    from memrl.envs.scripted_policy import random_play_returns

    return float(random_play_returns(envs.make(task.env, **task.env_args), episodes, key).mean())


def normalised(value: float, task: Task) -> float:
    """0 at random play's return, 1 at the best."""
    return (value - task.random) / (task.best - task.random)


def evaluate_benchmark(folders: dict, out: Path) -> dict:
    """Per run: each seed's final return normalised (``normalised``); per memory: the mean of
    those over the tasks it ran and its training throughput on ``THROUGHPUT_TASK``; the table and
    a figure (memories x tasks)."""
    import json

    scores = {}
    for run, folder in folders.items():
        task = tasks_of("paper")[run.split("/")[0]]  # the paper preset's columns hold every preset's
        finals = [seed["final"] for seed in json.loads((folder.path / "summary.json").read_text())["seeds"].values()]
        if all(f is not None for f in finals):
            scores[run] = seed_entry([normalised(f, task) for f in finals])
    throughput = {
        run.split("/", 1)[1]: steps_per_second(folder)
        for run, folder in folders.items()
        if run.split("/")[0] == THROUGHPUT_TASK
    }
    write_table(scores, throughput, out)
    return {"normalised": scores, "throughput": throughput}


def steps_per_second(folder, updates: int = 2) -> float:
    """The run's learner's environment steps per second on one core, after its compile."""
    from memrl.learn.learners import learner_for
    from memrl.run.timing import on_one_core, time_training

    with on_one_core():
        return time_training(learner_for(folder.load_config()), updates)[1]


def write_table(scores: dict, throughput: dict, out: Path) -> None:
    """The memories x tasks table (console) and heat map (``out/normalised_scores.png``)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from rich.table import Table

    from memrl.console import console

    tasks = list(dict.fromkeys(run.split("/")[0] for run in scores))
    memories = list(dict.fromkeys(run.split("/", 1)[1] for run in scores))
    grid = np.array([[scores.get(f"{t}/{m}", {}).get("mean", np.nan) for t in tasks] for m in memories])
    table = Table(title="normalised final return (0: random play, 1: best), mean over seeds")
    for column in ("memory", *tasks, "mean", f"env steps/s ({THROUGHPUT_TASK})"):
        table.add_column(column)
    for memory, row in zip(memories, grid):
        rate = throughput.get(memory)
        table.add_row(
            memory,
            *(f"{v:.2f}" for v in row),
            f"{np.nanmean(row):.2f}",
            "-" if rate is None else f"{rate:,.0f}",
        )
    console.print(table)
    fig, ax = plt.subplots(figsize=(1.1 * len(tasks) + 3, 0.4 * len(memories) + 1.5))
    image = ax.imshow(grid, vmin=0, vmax=1, cmap="viridis", aspect="auto")
    ax.set_xticks(range(len(tasks)), tasks, rotation=40, ha="right")
    ax.set_yticks(range(len(memories)), memories)
    for (i, j), value in np.ndenumerate(grid):
        ax.text(j, i, f"{value:.2f}", ha="center", va="center", fontsize=7, color="w" if value < 0.5 else "k")
    fig.colorbar(image, ax=ax, label="normalised return")
    fig.tight_layout()
    fig.savefig(out / "normalised_scores.png", dpi=120)
    plt.close(fig)


CPU_LEARNER = "cpu: popgym-suite's PPO (16 envs x 128 steps, 4 epochs x 4 minibatches), sized for 2 cores"
SETTINGS = (
    PaperSetting(
        "env steps per run",
        "15M (POPGym's runs; ppo.py reads POPGYM_STEPS, default 10M in the version read)",
        "total_steps",
        "paper: 229 whole batches of 65,536 (15.0M); cpu: what fits a part in 90 minutes",
    ),
    PaperSetting("parallel environments", "4 workers x 16 envs (ppo.py)", "num_envs", CPU_LEARNER),
    PaperSetting("rollout (BPTT) length", "1,024 (ppo.py's bptt_cutoff)", "rollout_len", CPU_LEARNER),
    PaperSetting("minibatches per batch", "8 (minibatches of 8 x 1,024 steps)", "num_minibatches", CPU_LEARNER),
    PaperSetting("SGD iterations", "RLlib's default, 30", "update_epochs", CPU_LEARNER),
    PaperSetting(
        "learning rate",
        "RLlib's default, 5e-5",
        "lr",
        "cpu: version 2 runs each memory at its choice of 5e-4, 1e-3 and 2e-3 (``TUNED``, from memory-tuning's pilots); version 1 all at 5e-4",
    ),
    PaperSetting(
        "Adam's ε",
        "not set in ppo.py: torch's Adam default, 1e-8 (RLlib's torch policies pass the learning rate alone)",
        "adam_eps",
        "cpu: version 2 runs each memory at its choice of 1e-5 (memrl's PPO default, CleanRL's) and 1e-8 (``TUNED``); "
        "version 1 all at 1e-5, which held S6 at its initialisation (issue 83)",
    ),
    PaperSetting("GAE lambda", "RLlib's default, 1.0", "gae_lambda", "cpu: memrl's default"),
    PaperSetting(
        "PPO clip", "RLlib's default, 0.3 (and a KL penalty memrl's PPO lacks)", "clip_epsilon", "cpu: memrl's default"
    ),
    PaperSetting("discount", "0.99 (ppo.py)", "gamma"),
    PaperSetting("memory width", "256 (ppo.py's h_memory)", "core.hidden", "cpu: 128"),
    PaperSetting(
        "encoder", "one 128-wide layer, LeakyReLU (ppo.py)", "encoder_widths", "memrl's MLP activation; cpu: 64"
    ),
    PaperSetting(
        "actor and critic heads",
        "two 128-wide layers each (ppo.py)",
        "head_widths",
        "memrl's activation; cpu: one of 64",
    ),
    PaperSetting("previous action as input", "yes (the PreviousAction wrapper)", "feed_prev_action"),
    PaperSetting("seeds", "3 trials per model and task", "seeds"),
)


def memory_benchmark(preset: str) -> Experiment:
    """The experiment's runs and checks in ``preset``."""
    runs = tuned_runs(preset)
    card_tasks = ("RepeatPreviousEasy", "CountRecallEasy")
    return Experiment(
        name="memory-benchmark",
        version=2,
        description="every vector-observation memory in memrl, one agent and one PPO learner, on POPGym, T-maze and MemoryChain tasks",
        reproduces="Morad et al. 2023 (POPGym) tasks and settings; Beck et al. 2020's T-mazes; bsuite's MemoryChain",
        finding="the memories side by side: normalised returns and throughput on one agent and learner",
        kind="benchmark",
        paper_steps=None,
        runs=runs,
        expectations=(
            Expectation(
                "RepeatPreviousEasy/gru",
                ">",
                1 / 3,
                "the GRU (POPGym's strongest kind) is a third of the way from random play to the best on "
                "RepeatPreviousEasy (a return above 0, popgym-suite's check)",
                evaluated=("normalised",),
                central=True,
                learning=True,
            ),
            *(
                Expectation(
                    f"{task}/{memory}",
                    ">",
                    0.0,
                    f"{memory} is above random play on {task} (memory-less agents are not)",
                    evaluated=("normalised",),
                )
                for task in card_tasks
                for memory in {**MEMORIES[preset], **ADDED_MEMORIES[preset]}
            ),
            Expectation(
                "MemoryChain/s6",
                ">",
                0.0,
                "S6 at its own optimiser setting is above random play on MemoryChain (v1, at the shared lr 5e-4 "
                "and ε 1e-5: 0.00, chance on every seed)",
                evaluated=("normalised",),
            ),
        ),
        optima={name: (("random play", task.random), ("best", task.best)) for name, task in tasks_of(preset).items()},
        evaluation=evaluate_benchmark,
        settings=SETTINGS,
        parts=PARTS if preset == "cpu" else {},
        keeps_results=True,
        changes="adds S5, DeltaNet, Gated DeltaNet and the mLSTM, and runs each memory in the cpu preset at its own "
        "learning rate and Adam ε (memory-tuning v1's choice on a pilot seed) where v1 ran all at lr 5e-4, ε 1e-5",
    )


register("memory-benchmark", memory_benchmark, presets=PRESETS)
