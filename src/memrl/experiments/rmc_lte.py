"""RMC and LSTM on Learning to Execute (Santoro et al. 2018, Sec. 5.2, Table 1, App. A.2).

Finding (Table 1, per-character test accuracy at literal length 5 and nesting 2): the RMC is at
least as good as the LSTM on every program-evaluation and memorisation task; the gap is largest
on full programs. The published Table 1 reads (LSTM / RMC): addition 99.8 / 99.9, control
97.4 / 99.6, full program 66.1 / 79.0, copy 99.8 / 100, reverse 99.7 / 100, double 99.7 / 99.8
(the published values, from the paper's PDF).

Each model is the paper's encoder/decoder as one stream (``tasks/learn_to_execute``: the program,
then decoding steps fed ``_null_``, the non-auto-regressive regime the paper found strongest),
then a 4-layer MLP of 256 ReLU units and the softmax over characters; Adam, the "mix"
curriculum (each sequence's L and N uniform up to the target), batches of 128 in the paper.
Scored by the final model's per-character accuracy on 12,800 held-out programs at the target level
(the paper reports the best such score over training). Presets:
- ``paper``: Table 1's six tasks at literal length 5 and nesting 2, batches of 128 for 200K
  iterations, the paper's model sizes, one seed.
- ``cpu``: full programs, the program evaluation where Table 1's gap is largest, at literal length 2
  and nesting 1, batches of 128 for 3,000 updates (384K programs), 3 seeds (3-5); the paper's smallest RMC
  (4 memories × 4 heads of 64) against a 2-layer LSTM of 256, which has more parameters (1.13M
  against 0.82M with the output MLP; see ``SETTINGS``).
"""

from __future__ import annotations

from memrl.cores.lstm import StackedLSTM
from memrl.cores.rmc import RelationalMemory
from memrl.experiments.base import Experiment, PaperSetting, register
from memrl.experiments.evaluations import above_chance, held_out_evaluation, held_out_expectation
from memrl.learn.supervised_config import SupervisedConfig
from memrl.tasks.learn_to_execute import LearnToExecute

PRESETS = ("cpu", "paper")
TABLE_1 = {"addition": 2, "control": 2, "full program": 2, "copy": 1, "reverse": 1, "double": 1}
"""Table 1's tasks -> nesting at the target (memorisation tasks have nesting 1)"""
TASKS = {
    "paper": {task: dict(max_length=5, max_nesting=nesting) for task, nesting in TABLE_1.items()},
    "cpu": {"full program": dict(max_length=2, max_nesting=1)},
}
"""preset -> task -> its target level (literal length, nesting)"""
PROGRAM = {"full program": "all"}
"""Table 1's name -> the task's ``program`` setting, where they differ"""
HEAD = (256, 256, 256, 256)
TEST_PROGRAMS = 12_800
"""held-out programs that score each final model (App. A.2's evaluation batch)"""

SMALLEST_RMC = RelationalMemory(mem_slots=4, num_heads=4, head_size=64, num_blocks=1, gate_style="memory")
"""the paper's smallest RMC (A.2): 4 memories × 4 heads of 64, memory gates, one attention pass"""
MODELS = {
    "paper": {"lstm": StackedLSTM(hidden=1024, layers=2), "rmc": SMALLEST_RMC},
    "cpu": {"rmc": SMALLEST_RMC, "lstm": StackedLSTM(hidden=256, layers=2)},
}
"""run label -> core; in the cpu preset the RMC comes first, as the longer run, so
that two workers finish close together"""
TRAINING = {
    "paper": dict(batch_size=128, lr=1e-3, max_grad_norm=None, updates=200_000, seeds=1, updates_per_chunk=1000),
    "cpu": dict(batch_size=128, lr=1e-3, max_grad_norm=None, updates=3_000, seed=3, seeds=3, updates_per_chunk=250),
}
"""the cpu preset's seeds are 3-5 from version 5: versions 3 and 4 ran 0-2, which deterministic runs would repeat"""
PARITY = 0.01
"""the non-inferiority bound of "at least as well": one point of per-character accuracy, the size of
the shortfall the paper still counts as "at least as well" (Sec. 4.2: the RMC "is marginally surpassed
by a small fraction of performance on the double memorization task")"""


def lte_runs(preset: str) -> dict[str, SupervisedConfig]:
    training = dict(TRAINING[preset])
    updates = training.pop("updates")
    return {
        f"{task}/{label}": SupervisedConfig(
            task=LearnToExecute(program=PROGRAM.get(task, task), **level, curriculum="mix"),
            core=core,
            head_widths=HEAD,
            total_steps=updates * training["batch_size"],
            **training,
        )
        for label, core in MODELS[preset].items()
        for task, level in TASKS[preset].items()
    }


SETTINGS = (
    PaperSetting(
        "tasks",
        "addition, control, full program, copy, reverse, double (Table 1)",
        "task.program",
        "cpu: full program, the program evaluation with Table 1's largest gap (66.1 / 79.0); version 1's cpu runs learned "
        "the memorisation tasks with both models, addition's 99.9 / 99.8 leaves no gap to decide, and control (version 3, "
        "with a quarter-size RMC: reversed) does not fit the 90 minutes beside full programs at the RMC's paper size",
    ),
    PaperSetting(
        "literal length at the target",
        "5 (Table 1)",
        "task.max_length",
        "cpu: 2; at 5 (version 1) and at 3 with nesting 2 (a pilot) both models stayed at 0.2-0.4 per character, "
        "learning the output format and digit frequencies, within the CPU budget",
    ),
    PaperSetting(
        "nesting at the target",
        "2; memorisation 1 (Table 1)",
        "task.max_nesting",
        "cpu: 1 (one operation per program), which halves the program length again",
    ),
    PaperSetting("curriculum", "mix: L and N uniform up to the target per sequence (A.2)", "task.curriculum"),
    PaperSetting(
        "decoder inputs",
        "model predictions / none (non-auto-regressive, A.2)",
        "",
        fixed="the token _null_ at every decoding step",
    ),
    PaperSetting("batch", "128 (A.2)", "batch_size"),
    PaperSetting(
        "sequences trained on",
        "200K iterations of 128 = 25.6M (A.2)",
        "total_steps",
        "cpu: 3,000 updates, what 3 seeds of both models on full programs fit in about 65 minutes on 2 cores (72 measured) "
        "(pilots at L 2, N 1 on one core: 1.8 updates/s for the RMC, 3.9 for the LSTM)",
    ),
    PaperSetting("optimiser, learning rate", "Adam, 1e-3 (A.2)", "lr"),
    PaperSetting(
        "gradient clipping",
        "none stated (A.2)",
        "max_grad_norm",
        "none (v1 clipped at memrl's default global norm 1.0: the median gradient norm of its first 300 updates on control was 1.2-2.3)",
    ),
    PaperSetting("output MLP", "4 layers of 256 (A.2)", "head_widths"),
    PaperSetting("RMC memories, heads", "2 or 4 each, swept (A.2)", "core.mem_slots"),
    PaperSetting(
        "RMC units per head",
        "1024 or 2048 in all over the memories and heads (A.2): 64 with 4 and 4",
        "core.head_size",
        "cpu: the paper's smallest, 4 memories x 4 heads of 64 (version 3's quarter size, 2 heads of 32, ended below "
        "the LSTM; pilots of this size were above it on full programs)",
    ),
    PaperSetting("RMC gating", "scalar memory gating, one attention pass (A.2)", "core.gate_style"),
    PaperSetting(
        "LSTM",
        "2 layers of 1024 or 2048, skip connections, layer outputs concatenated (A.2)",
        "core.hidden",
        "memrl's stacked LSTM has no skip connections; cpu: 256 units (1.13M parameters with the output MLP, the RMC 0.82M)",
    ),
    PaperSetting("held-out programs", "12,800 at the target level (A.2)", "task.test_programs"),
    PaperSetting(
        "score",
        "best test accuracy over training (A.2)",
        "",
        fixed="the final model's accuracy on 12,800 held-out programs",
    ),
    PaperSetting(
        "seeds",
        "not stated (the best setting of a sweep)",
        "seeds",
        "cpu: 3 (3-5 from version 5; 0-2 before), for checks beyond the noise of seeds",
    ),
)


def rmc_lte(preset: str) -> Experiment:
    """The experiment's runs and checks in ``preset``."""
    runs = lte_runs(preset)
    return Experiment(
        name="rmc-lte",
        version=5,  # 2: no clipping, as the paper states none (A.2); 3: cpu at L 2, N 1, batch 128, 3 seeds; 4: cpu full programs, the paper's smallest RMC; 5: a parity bound and a learning check
        changes=(
            "the claim 'at least as good as' is tested against a non-inferiority bound of 0.01 per-character"
            " accuracy stated before the runs (issue 82 §2; version 4 tested it as superiority, decided only by a win), on 3"
            " fresh seeds (3-5; version 4 ran 0-2)"
        ),
        description=f"RMC and a 2-layer LSTM on Learning to Execute: {', '.join(TASKS[preset])}",
        reproduces="Santoro et al. 2018, Table 1 (per-character accuracy; RMC at least as good as the LSTM on every task)",
        finding="the RMC executes programs at least as well as an LSTM, the gap largest on full programs (and memorises as well: paper preset)",
        paper_steps=25_600_000,
        runs=runs,
        expectations=tuple(
            check
            for task in TASKS[preset]
            for check in (
                above_chance(f"{task}/rmc", runs[f"{task}/rmc"].task, "the RMC"),
                held_out_expectation(
                    f"{task}/rmc",
                    ">=",
                    None,
                    f"the RMC at least as good as the LSTM on {task} (Table 1), within {PARITY:g} per-character accuracy",
                    against=f"{task}/lstm",
                    central=True,
                    parity=PARITY,
                ),
            )
        ),
        evaluation=held_out_evaluation(TEST_PROGRAMS),
        settings=SETTINGS,
    )


register("rmc-lte", rmc_lte, presets=PRESETS)
