"""A decision transformer with and without TLB on offline T-maze episodes (Didolkar et al. 2022, Sec.
3.2, Table 3, App. 7.5), an analogue of its Atari experiment.

Finding (Table 3): adding the bottleneck to the decision transformer raises the score on all four
Atari games (Breakout 71.5 -> 87.6, Pong 13.7 -> 14.7, Qbert 3268 -> 5020, Seaquest 1039 -> 1248).

Atari's DQN-replay data cannot be had here. The analogue (``tasks.tmaze_returns``): offline episodes
of a behaviour that guesses at the T-LN junction (half succeed), learned as the decision transformer
learns, the action from (return to come, observation, previous action); then each final model plays
fresh mazes asked for the success return (+4: it must recall the indicator from the first step) and
for the failure return (−3). The decision transformer reads a context of its last 30 steps (Chen et
al. 2021's Atari setting); memrl's ``transformer`` reads blocks of 30 steps, and a maze of 50 cells
puts the indicator out of its reach for the decision, as a long Atari episode puts most of the past
out of DT's; a Transformer over the whole episode is the reference. TLB uses the paper's Breakout
settings (chunks of 12, R = 2, 6 state vectors) and reaches back only through its state.
"""

from __future__ import annotations

from pathlib import Path

from memrl.cores.tlb import TemporalLatentBottleneck
from memrl.experiments.base import Expectation, Experiment, PaperSetting, register
from memrl.experiments.evaluations import seed_entry
from memrl.learn.supervised_config import SupervisedConfig
from memrl.tasks.tmaze_returns import TMazeReturns

PRESETS = ("cpu", "paper")
DT_CONTEXT = 30
ANALOGUE = (
    "reach beyond the decision transformer's context to a cue further back (which a Transformer over the whole"
    " episode also reaches), not TLB's gain on Atari"
)
"""what the T-maze analogue tests in place of Table 3's claim (issue 82 §7)"""
EVAL_EPISODES = 500
TARGETS = {"success": 4.0, "failure": -3.0}
MEMORYLESS = (TARGETS["success"] + TARGETS["failure"]) / 2
"""the mean return of a model that reaches the junction and guesses its turn (0.5): the learning
check's level"""

TASK = {
    "paper": dict(maze_length=100, episodes=5_000, test_episodes=200),
    "cpu": dict(maze_length=50, episodes=5_000, test_episodes=200),
}
MODEL = {"paper": dict(d_model=128, num_heads=8, mlp_dim=512), "cpu": dict(d_model=64, num_heads=4, mlp_dim=256)}
TLB = dict(chunk_size=12, num_state=6, num_reads=3, self_per_read=2)  # 6 layers, a read after every 2 (Breakout)
TRANSFORMER = dict(num_reads=6, self_per_read=1)  # 6 layers
TRAINING = dict(batch_size=64, lr=6e-4, weight_decay=0.1, updates_per_chunk=50)
EPOCHS = {"paper": 10, "cpu": 10}
SEEDS = {"paper": 10, "cpu": 3}


def decision_runs(preset: str) -> dict[str, SupervisedConfig]:
    task_args, model = TASK[preset], MODEL[preset]
    length = task_args["maze_length"]
    cores = {
        "tlb": TemporalLatentBottleneck(**model | TLB),
        "transformer": TemporalLatentBottleneck(**model | TRANSFORMER, num_state=0, chunk_size=DT_CONTEXT),
        "transformer, whole episode": TemporalLatentBottleneck(**model | TRANSFORMER, num_state=0, chunk_size=length),
    }
    total = EPOCHS[preset] * task_args["episodes"]
    return {
        f"T-LN {length}/{label}": SupervisedConfig(
            task=TMazeReturns(**task_args),
            core=core,
            embed_dim=model["d_model"],
            total_steps=total - total % TRAINING["batch_size"],
            seeds=SEEDS[preset],
            **TRAINING,
        )
        for label, core in cores.items()
    }


def final_returns(folder, episodes: int) -> dict[str, list[float]]:
    """Per target ("success", "failure"): the mean return of each seed's final model playing
    ``episodes`` fresh mazes asked for that return (greedy)."""
    import jax

    from memrl.learn.learners import learner_for
    from memrl.run.final_agents import final_params

    learner = learner_for(folder.load_config())
    play = jax.jit(
        lambda params, target: learner.task.play(
            lambda inputs: learner.model.apply(params, inputs), jax.random.PRNGKey(7), episodes, target
        )
    )
    return {
        name: [float(play(params, target).mean()) for params in final_params(folder)]
        for name, target in TARGETS.items()
    }


def evaluate_returns(folders: dict, out: Path) -> dict:
    """An experiment's ``evaluation``: each run's mean return asked for success and for failure
    (mean over seeds), as ``{"returns": {run: {"success": entry, "failure": entry}}}`` (``seed_entry``);
    prints a table."""
    from rich.table import Table

    from memrl.console import console

    rows = {}
    table = Table(
        title=f"returns of the final models, {EVAL_EPISODES} fresh mazes (optimum 4, memory-less {MEMORYLESS})"
    )
    for column in ("run", "asked for +4", "asked for -3", "per seed (+4)"):
        table.add_column(column)
    for run, folder in folders.items():
        returns = final_returns(folder, EVAL_EPISODES)
        if returns["success"]:
            rows[run] = {
                name: seed_entry(values, episodes=EVAL_EPISODES * len(values)) for name, values in returns.items()
            }
            table.add_row(
                run,
                f"{rows[run]['success']['mean']:.2f}",
                f"{rows[run]['failure']['mean']:.2f}",
                ", ".join(f"{v:.2f}" for v in returns["success"]),
            )
    console.print(table)
    return {"returns": rows}


SETTINGS = (
    PaperSetting(
        "data",
        "1% of Atari's DQN-replay data, 500K transitions per game (7.5)",
        "",
        "cannot be had here: T-LN episodes of a guessing behaviour (half succeed)",
        fixed="T-LN, 5,000 episodes",
    ),
    PaperSetting("episode length", "Atari episodes", "task.maze_length", "cpu: 50 cells; paper preset: AMRL's 100"),
    PaperSetting(
        "inputs",
        "return to come, state, action as three tokens per step (DT)",
        "",
        "the shared sequence model reads one vector per step",
        fixed="one vector: observation, return to come / 4, previous action",
    ),
    PaperSetting(
        "layers, width, heads, FFN",
        "6, 128, 8, 512 (7.5)",
        "core.d_model",
        "cpu: 6, 64, 4, 256 (a quarter of the compute)",
    ),
    PaperSetting("TLB chunk, R, state vectors", "12, 2, 6 (Breakout, Seaquest; 7.5)", "core.chunk_size"),
    PaperSetting(
        "DT context",
        "30 steps, a sliding window (Chen et al. 2021)",
        "",
        "memrl's transformer attends within fixed blocks",
        fixed="blocks of 30 steps; and a whole-episode Transformer as a reference",
    ),
    PaperSetting("optimiser, learning rate", "AdamW, 6e-4 (7.5)", "lr"),
    PaperSetting("weight decay", "0.1 (7.5)", "weight_decay"),
    PaperSetting("batch", "128 windows of 30 steps (Chen et al. 2021)", "batch_size", "64 whole episodes"),
    PaperSetting(
        "training", "10 epochs (7.5)", "total_steps", fixed="10 epochs' worth of episodes, drawn with replacement"
    ),
    PaperSetting("seeds", "10 (Table 3)", "seeds", "cpu: 3"),
    PaperSetting(
        "evaluation",
        "game score, target return as in DT",
        "",
        fixed="mean return over 500 fresh mazes, asked for +4 and for -3",
    ),
)


def tlb_decision(preset: str) -> Experiment:
    """The experiment's runs and checks in ``preset``."""
    runs = decision_runs(preset)
    tlb, transformer = (next(run for run in runs if run.endswith(label)) for label in ("/tlb", "/transformer"))
    return Experiment(
        name="tlb-decision",
        version=3,  # 3: a learning check (above the memory-less guess); "above", as Table 3 says
        description="decision transformer with and without TLB on offline T-maze episodes (an analogue of Atari)",
        reproduces="Didolkar et al. 2022, Table 3 (DT + TLB above DT)",
        finding="a decision transformer with TLB scores above the plain decision transformer",
        analogue=ANALOGUE,
        paper_steps=None,
        runs=runs,
        expectations=(
            Expectation(
                tlb,
                ">",
                MEMORYLESS,
                f"DT + TLB asked for success returns more than a memory-less guess at the junction ({MEMORYLESS})",
                evaluated=("returns", "success"),
                learning=True,
            ),
            Expectation(
                tlb,
                ">",
                None,
                "DT + TLB above DT (Table 3)",
                evaluated=("returns", "success"),
                against=transformer,
                central=True,
            ),
        ),
        evaluation=evaluate_returns,
        settings=SETTINGS,
    )


register("tlb-decision", tlb_decision, presets=PRESETS)
