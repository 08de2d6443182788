"""What a lent GPU's minutes are spent on (DESIGN.md, "Deciding a finding on the CPU": the most
decisive paper-budget parts first), written once so that any session lent one runs the same plan:
``bash benchmarks/gpu_plan.sh MINUTES`` on the device machine (docs/clusters.md, "A lent GPU").

The plan is ``PLAN``, its steps in order of value. A sitting trains the first steps that have not
finished, each step's runs side by side on the one GPU (their seeds vmapped in one process each),
until its minutes are spent; it then stops them (what each checkpointed is kept: at most a chunk of
updates is lost), packs the plan's run folders (in parts the device tool returns) and writes where
each run stands. The next sitting unpacks them and goes on from the checkpoints. Once every run of an experiment has
finished, the sitting writes the experiment's record under ``out/records`` (``NAME/vN.json``, to be
copied into docs/results).

``smoke`` runs the same plan on any backend with every run cut to one seed, a few environments and
two updates (the tests run its first step on the CPU)."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import tarfile
import threading
from pathlib import Path

from memrl import experiments
from memrl.experiments.base import Experiment
from memrl.run.folder import RunFolder


@dataclasses.dataclass(frozen=True)
class PlanStep:
    """Runs of one experiment's preset that a lent GPU trains side by side."""

    experiment: str
    preset: str
    """the experiment's preset ("" for one without presets)"""
    runs: tuple[str, ...]
    """the runs ("<panel>/<label>") trained together"""
    why: str
    """the claim the runs decide, and how far a sitting gets (from earlier lent sessions' rates)"""
    smoke_envs: int = 4
    """environments per run in ``smoke`` mode (a multiple of what the runs' minibatches split)"""


PLAN = (
    PlanStep(
        "epn-memory-planning",
        "paper",
        ("4x4/epn", "4x4/lstm", "4x4/epn-nxk"),
        "EPN's frozen return on the 4x4 Memory&Planning Game above the within-trial explorer's, the LSTM's "
        "below, and EPN with one planner iteration over k steps (Fig. 2), at the paper's 1e8 steps: on an "
        "H200 the LSTM's 3 seeds made their 1e8 steps in the first sitting's first 3 minutes; EPN then made "
        "about 155k steps/s for its 3 seeds (about 26 minutes to go after that sitting); EPN-NxK trains "
        "beside it from the second sitting (side by side not yet timed)",
    ),
)
"""The plan, most decisive first. Left out, since a sitting can neither finish them nor carry their
state to the next (``CARRY_MB``): htm-ballet's gpu preset (170 MB of runner state per HTM seed,
about 1.5 hours for its three runs on an H100), amrl-minecraft's paper preset (49 MB per run of 5
seeds, about 70 minutes per run on an H200), rmc-nth-farthest's paper preset (13-18 MB per seed,
5 runs of 3 seeds, 2.6% of the budget in 8 minutes)."""

CARRY_MB = 48
"""the packed run folders a sitting can carry to the next: the device tool carries 64 MiB of working
tree in all, of which the repository takes about 14"""
PART_MB = 15
"""the packed run folders come back in parts of at most this size (the tool returns files of at most 16 MiB)"""


def experiment_of(step: PlanStep, smoke: bool = False) -> Experiment:
    """The runs of ``step`` as an experiment (in ``smoke`` mode: one seed, ``smoke_envs``
    environments where a run has environments, and two updates per run)."""
    experiment = experiments.get(step.experiment, step.preset or None).with_runs(step.runs)
    if not smoke:
        return experiment
    runs = {}
    for run, config in experiment.runs.items():
        if hasattr(config, "num_envs"):
            config = dataclasses.replace(config, num_envs=step.smoke_envs)
        runs[run] = dataclasses.replace(config, seeds=1, total_steps=2 * config.steps_per_update)
    return dataclasses.replace(experiment, runs=runs)


def out_of(step: PlanStep, runs_dir: Path) -> Path:
    """The output folder of ``step``'s experiment and preset (its other steps train into it too)."""
    return Path(runs_dir) / "-".join(filter(None, (step.experiment, step.preset)))


def standing(step: PlanStep, runs_dir: Path, smoke: bool = False) -> dict[str, str]:
    """run -> where it stands: "finished", "update N of M", or "not started"."""
    stands = {}
    for run, config in experiment_of(step, smoke).runs.items():
        folder = RunFolder(out_of(step, runs_dir) / run)
        if not folder.config_path.exists():
            stands[run] = "not started"
        elif folder.finished():
            stands[run] = "finished"
        else:
            done = min(folder.checkpoint_update(seed) for seed in config.seed_list())
            stands[run] = f"update {done} of {config.num_updates}"
    return stands


def is_finished(step: PlanStep, runs_dir: Path, smoke: bool = False) -> bool:
    return all(s == "finished" for s in standing(step, runs_dir, smoke).values())


def check_plan(plan: tuple[PlanStep, ...] = PLAN) -> None:
    """Refuse a plan whose steps name an experiment, preset or run that does not exist, or whose
    smoke sizes its runs refuse (each step's experiment is built at both sizes)."""
    for step in plan:
        experiment_of(step)
        experiment_of(step, smoke=True)


def run_plan(
    minutes: float,
    runs_dir: Path,
    out: Path,
    smoke: bool = False,
    plan: tuple[PlanStep, ...] = PLAN,
) -> dict:
    """Train ``plan``'s unfinished steps in order for at most ``minutes`` of wall time (a step's runs
    side by side), write the record of each experiment all of whose runs have finished (into
    ``out/records``), then pack ``runs_dir`` into ``out`` (``pack``) and write
    ``out/gpu-plan.json``: each step's runs and where they stand, and whether the packed folders fit
    what the next sitting can carry. Refuses to train on a CPU unless
    ``smoke``. Returns what ``gpu-plan.json`` holds."""
    import jax

    from memrl.experiments.runner import reproduce
    from memrl.run import interrupts

    if not smoke and jax.default_backend() == "cpu":
        raise RuntimeError(
            "the GPU plan trains paper-budget runs: this machine has no accelerator (smoke mode runs it anywhere)"
        )
    check_plan(plan)
    runs_dir, out = Path(runs_dir), Path(out)
    out.mkdir(parents=True, exist_ok=True)
    spent = threading.Event()

    def stop():
        spent.set()
        os.kill(os.getpid(), signal.SIGINT)

    timer = threading.Timer(minutes * 60, stop)
    records = []
    try:
        with interrupts.recorded():  # an interrupt dropped inside a JAX callback is raised again by the training loop
            timer.start()
            for step in plan:
                if spent.is_set():
                    break
                if is_finished(step, runs_dir, smoke):
                    continue
                reproduce(experiment_of(step, smoke), out_of(step, runs_dir), workers=len(step.runs), train_only=True)
                records += write_finished_records(plan, runs_dir, out / "records", smoke)
    except KeyboardInterrupt:
        if not spent.is_set():
            raise  # a person's Ctrl-C, not the sitting's timer
    finally:
        timer.cancel()
    stopped = f"stopped after {minutes} minutes" if spent.is_set() else None
    packed_mb = pack(runs_dir, out)
    report = {
        "minutes": minutes,
        "packed_mb": round(packed_mb, 1),
        "carry": "fits" if packed_mb <= CARRY_MB else f"over the {CARRY_MB} MB a sitting can carry",
        "smoke": smoke,
        "stopped": stopped,
        "records": [str(path) for path in records],
        "steps": [{"experiment": s.experiment, "preset": s.preset, "runs": standing(s, runs_dir, smoke)} for s in plan],
    }
    (out / "gpu-plan.json").write_text(json.dumps(report, indent=2))
    return report


def pack(runs_dir: Path, out: Path) -> float:
    """Pack ``runs_dir`` into ``out/gpu-plan-runs.tar.gz.NN``, parts of at most ``PART_MB`` (``cat``
    joins them); returns the megabytes packed."""
    packed = out / "gpu-plan-runs.tar.gz"
    with tarfile.open(packed, "w:gz") as tar:
        tar.add(runs_dir, arcname="gpu-plan-runs")
    data, size = packed.read_bytes(), PART_MB * 2**20
    packed.unlink()
    for i in range(max(1, -(-len(data) // size))):
        (out / f"{packed.name}.{i:02d}").write_bytes(data[i * size : (i + 1) * size])
    return len(data) / 2**20


def write_finished_records(plan: tuple[PlanStep, ...], runs_dir: Path, record_dir: Path, smoke: bool) -> list[Path]:
    """Write into ``record_dir`` the record of every experiment of ``plan`` whose runs have all
    finished and that has none from this plan yet (``reproduce`` then trains nothing: it evaluates
    and checks); returns the records written."""
    from memrl.experiments.runner import reproduce

    written = []
    for name, preset in dict.fromkeys((s.experiment, s.preset) for s in plan):
        steps = [s for s in plan if (s.experiment, s.preset) == (name, preset)]
        whole = experiments.get(name, preset or None)
        covered = {run for s in steps for run in s.runs}
        if covered != set(whole.runs) or (record_dir / name / f"v{whole.version}.json").exists():
            continue
        if not all(is_finished(s, runs_dir, smoke) for s in steps):
            continue
        if smoke:
            whole = experiment_of(dataclasses.replace(steps[0], runs=tuple(whole.runs)), smoke=True)
        reproduce(whole, out_of(steps[0], runs_dir), workers=1, record_dir=record_dir)
        written.append(record_dir / name / f"v{whole.version}.json")
    return written


def main(argv: list[str] | None = None) -> None:
    """``python -m memrl.experiments.gpu_plan MINUTES RUNS_DIR OUT [--smoke]``: run by
    benchmarks/gpu_plan.sh, where the device machine may lack the command line's packages."""
    import argparse

    parser = argparse.ArgumentParser(prog="gpu_plan", description=__doc__.split("\n\n")[0])
    parser.add_argument("minutes", type=float, help="wall minutes to train for")
    parser.add_argument("runs_dir", type=Path, help="the plan's run folders (unpacked from the last sitting)")
    parser.add_argument("out", type=Path, help="where the packed run folders and gpu-plan.json go")
    parser.add_argument("--smoke", action="store_true", help="every run at one seed and two updates, on any backend")
    args = parser.parse_args(argv)
    report = run_plan(args.minutes, args.runs_dir, args.out, args.smoke)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
