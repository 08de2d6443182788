"""HTM's central claim on a supervised analogue that two CPU cores decide: recall of a specific past
event after a delay beyond a TrXL's memory (Lampinen et al. 2021, Sec. 1 and 3; the claim of
Ballet Fig. 3, object permanence Fig. 4 and Passive Visual Match Fig. 6a).

Finding: HTM, whose store keeps every past chunk and whose top-k attention reads back the chunks
that matter, recalls what it saw long ago in detail, where a gated TrXL degrades "despite the fact
that the entire task is short enough to fit within a single TrXL attention window" (Sec. 3.1, Fig.
3b) and an LSTM fails.

The event is the copying task's 10 digits (``tasks/copying.py``): after a gap of blanks and the
indicator, the model must output the digits in order. This is memrl's analogue, not one of the
paper's tasks: the paper asks the question of RL agents in 3-D rooms, which no CPU trains (HTM's
RL experiments sit at chance at their cpu presets; the pilots of this experiment, in
docs/results.md, show the same for Passive Visual Match shrunk to 40 steps). What the claim is
about is kept: the three memories of the paper's comparisons at one width, trained in unrolls
shorter than the task (the paper's 64-128 steps, App. A) so that the digits lie in the region
where gradients are stopped, for the TrXL's cache and HTM's store alike ("The dances are largely
in the extra attention region, where gradients are stopped for the TrXL, but HTM has the same
limitation"), and a TrXL whose window holds the whole sequence. A control run puts the digits
within one unroll (gap 20), where the same TrXL must copy.

Version 1 gave the TrXL a reach of 2 layers x 32 steps, short of the digits: its failure there was
built in, and v1 tested that, not the paper's claim (issue 84 §3).

Each model is the shared sequence model (token embedding -> core -> linear readout), trained with
Adam on fresh batches; scored by the final models' per-digit accuracy on held-out sequences (chance
1/8: the digits are drawn from 1..8), with its standard error over batches of 100 sequences.
"""

from __future__ import annotations

from memrl.agents.paper_agents import HTM_SIZES
from memrl.experiments.base import Experiment, PaperSetting, register
from memrl.experiments.evaluations import held_out_evaluation, held_out_expectation
from memrl.experiments.paper_settings import HTM_ROOM_AGENT_SETTINGS
from memrl.learn.supervised_config import SupervisedConfig
from memrl.tasks.copying import Copying

PRESETS = ("cpu", "paper")
NUM_DIGITS = 10
CHUNK_SIZE = 16
SETUPS = {
    "cpu": dict(
        gap=100,
        control_gap=20,
        memory_length=128,
        unroll_length=64,
        k=2,
        batch_size=100,
        lr=1e-3,
        total_steps=40_000,
        seeds=5,
        seed=10,
    ),
    "paper": dict(
        gap=480,
        control_gap=40,
        memory_length=512,
        unroll_length=128,
        k=16,
        batch_size=32,
        lr=2e-4,
        total_steps=200_000,
        seeds=5,
        seed=10,
    ),
}
"""cpu: v1's sizes from the pilots in docs/results.md, with a TrXL window (128) that holds the whole
121-step sequence and unrolls of 64; paper: HTM's Table 1 memories (width 512, 4 layers, 8 heads, TrXL
extra length 512, k 16, Adam 2e-4, batch 32) on a 501-step sequence that fits one window, in unrolls
of 128. Five seeds (v1's three were 0-2), since a seed's accuracy is nearly 0/1 (v1: 0.97, 0.12, 0.96)"""
HELD_OUT_SEQUENCES, HELD_OUT_BATCH = 2_000, 100


def sequence_length(gap: int) -> int:
    """Steps of a copying sequence: the digits, the gap, the indicator and the answer's blanks."""
    return 2 * NUM_DIGITS + gap + 1


def recall_runs(preset: str) -> dict[str, SupervisedConfig]:
    """HTM, GTrXL and the LSTM at the long gap, and GTrXL at the control gap, in ``preset``."""
    setup = SETUPS[preset]
    size = HTM_SIZES[preset]
    training = dict(
        batch_size=setup["batch_size"],
        lr=setup["lr"],
        total_steps=setup["total_steps"],
        seeds=setup["seeds"],
        seed=setup["seed"],
        unroll_length=setup["unroll_length"],
        embed_dim=size.width,
        updates_per_chunk=10,
    )

    def memories(gap: int) -> dict:
        return size.memories(
            setup["memory_length"],
            chunk_size=CHUNK_SIZE,
            num_chunks=sequence_length(gap) // CHUNK_SIZE + 1,
            k=setup["k"],
        )

    def run(gap: int, core) -> SupervisedConfig:
        return SupervisedConfig(task=Copying(gap=gap, num_digits=NUM_DIGITS), core=core, **training)

    gap, control = setup["gap"], setup["control_gap"]
    return {f"gap {gap}/{name}": run(gap, core) for name, core in memories(gap).items()} | {
        f"gap {control}/gtrxl": run(control, size.gtrxl(setup["memory_length"]))
    }


MEMORY_ROWS = tuple(row for row in HTM_ROOM_AGENT_SETTINGS if row.field.startswith("core."))
"""Table 1's memory rows that HTM's RL analogues share: width, layers, heads, chunks, window, LSTM size"""
SETTINGS = (
    PaperSetting(
        "task",
        "RL tasks in 3-D rooms: Ballet, object permanence, Passive Visual Match (Figs. 3, 4, 6a)",
        "task",
        "memrl's supervised analogue (copying): no CPU trains the RL tasks to the point where memory matters",
    ),
    PaperSetting(
        "delay (gap of blanks)",
        "Ballet: up to 48 steps between dances; PVM: 30 s",
        "task.gap",
        "the whole sequence (cpu: 121 steps; paper: 501) fits one TrXL window, as Fig. 3b's 8 dances do; "
        "the digits lie beyond the unroll that recalls them",
    ),
    PaperSetting(
        "unroll length",
        "64-128 steps (App. A)",
        "unroll_length",
        "cpu: 64, so the digits (steps 0-9) and the recall (steps 111-120) fall in different unrolls",
    ),
    *MEMORY_ROWS,
    PaperSetting("HTM chunk size", "16 (Table 1, PVM and object permanence)", "core.chunk_size"),
    PaperSetting("HTM top-k", "16 (Table 1)", "core.k", "cpu: 2 of the 8 chunks of a sequence"),
    PaperSetting(
        "TrXL memory (extra length)",
        "256 or 512 (Table 1)",
        "core.memory_length",
        "cpu: 128, the whole sequence in one layer's window (v1's 32 fell short of the digits by construction)",
    ),
    PaperSetting(
        "optimiser, learning rate",
        "Adam, 2e-4 (Table 1)",
        "lr",
        "cpu: 1e-3, which the pilots showed HTM learning with in the budget",
    ),
    PaperSetting(
        "batch",
        "32 trajectories (Table 1)",
        "batch_size",
        "cpu: 100 sequences, the copying task's usual batch (TLB 7.6)",
    ),
    PaperSetting(
        "sequences per run",
        "not applicable (RL: 1e9 steps, not in the text)",
        "total_steps",
        "cpu: about 10 minutes of HTM per seed on one core",
    ),
    PaperSetting("seeds", "3-6 (Figs. 3, 6)", "seeds", "5: a seed's accuracy is nearly 0 or 1"),
    PaperSetting(
        "auxiliary reconstruction loss",
        "every agent reconstructs its inputs (Sec. 2, App. D.4)",
        "",
        fixed="none: the sequence model has no reconstruction head; a token's embedding tells the digits apart at any training",
    ),
    PaperSetting(
        "score",
        "reward of the recall choice",
        "",
        fixed="per-digit accuracy of the final models on 2,000 held-out sequences per seed",
    ),
)


def htm_copying_recall(preset: str) -> Experiment:
    """The experiment's runs and checks in ``preset``."""
    setup = SETUPS[preset]
    long, control = f"gap {setup['gap']}", f"gap {setup['control_gap']}"
    recall = lambda run, op, threshold, why, **kw: held_out_expectation(
        run, op, threshold, why, measure="token_accuracy", **kw
    )
    return Experiment(
        name="htm-copying-recall",
        version=2,
        changes=(
            "the TrXL's window holds the whole sequence and every model trains in unrolls shorter than the task, the "
            "paper's condition for 'TrXL degrades despite the task fitting one window'; v1's TrXL could not reach the "
            "digits at all (issue 84 §3); 5 fresh seeds"
        ),
        description=f"HTM, GTrXL and LSTM recalling 10 digits across a gap, the TrXL's window holding the whole sequence (copying analogue), preset {preset!r}",
        reproduces="Lampinen et al. 2021, Sec. 3.1, Fig. 3b (HTM recalls past events in detail where TrXL degrades although the task fits its window, and LSTM fails), as a supervised analogue",
        finding="HTM recalls events in the gradient-stopped past better than a TrXL whose window holds them, and than an LSTM",
        paper_steps=None,
        runs=recall_runs(preset),
        expectations=(
            recall(f"{long}/htm", ">=", 0.9, "HTM recalls the digits across the gap reliably", central=True),
            recall(f"{long}/htm", ">", 1 / 8, "HTM recalls the digits above chance (1/8)", learning=True),
            recall(
                f"{long}/htm",
                ">",
                None,
                "HTM recalls better than a TrXL whose window holds the whole sequence",
                against=f"{long}/gtrxl",
                central=True,
            ),
            recall(f"{long}/htm", ">", None, "HTM recalls better than the LSTM", against=f"{long}/lstm", central=True),
            recall(
                f"{control}/gtrxl",
                ">=",
                0.9,
                "the same GTrXL copies when the digits lie within the unroll that recalls them (the control)",
            ),
        ),
        optima={f"gap {gap}": [("recall", 1.0), ("chance", 1 / 8)] for gap in (setup["gap"], setup["control_gap"])},
        evaluation=held_out_evaluation(HELD_OUT_SEQUENCES, batch_size=HELD_OUT_BATCH),
        settings=SETTINGS,
    )


register("htm-copying-recall", htm_copying_recall, presets=PRESETS)
