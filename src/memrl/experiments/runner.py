"""``memrl reproduce``: run an experiment's runs (resumable), then write its table, figure and checks."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import os
import time
from pathlib import Path

import jax
from rich.table import Table

from memrl.console import console
from memrl.experiments.base import Experiment
from memrl.experiments.kept_parts import (
    evaluation_with_kept,
    keep_panels,
    kept_wall_time,
    restore_panels,
    sitting_now,
    sittings_wall_time,
)
from memrl.experiments.record import make_record, write_record
from memrl.learn.learners import learner_for
from memrl.run.curves import save_curves
from memrl.run.devices import check_devices, check_workers, default_devices
from memrl.run.final_agents import check_starting_params
from memrl.run.folder import RunFolder
from memrl.run.folder_lock import check_output_folder, writing
from memrl.run.tensorboard import require_tensorboard, write_figure
from memrl.run.train import train_folders
from memrl.run.wandb_export import require_wandb


def reproduce(
    experiment: Experiment,
    out: Path,
    workers: int | None = None,
    tensorboard: bool = False,
    devices: int | None = None,
    record_dir: Path | None = None,
    wandb: bool = False,
    train_only: bool = False,
    configs_only: bool = False,
) -> dict:
    """Train every run of ``experiment`` in ``out`` (each on ``devices`` local devices; default: the
    most that every run can take), then write its table, figure, checks and record (``out/record.json``,
    and into ``record_dir`` where given: ``docs/results`` keeps the project's), logging W&B runs too if ``wandb``. Holds the writer
    lock of ``out`` and of every run folder in it throughout. ``train_only``: stop after training
    (the GPU plan's sittings), returning ``{"wall_time_s": ...}``. ``configs_only``: write every run's
    folder and config.json (and ``out/experiment.json``) and stop, returning {}: a run's config to read
    or to give an analysis that builds its agent afresh (``memrl analyze decision-probe``)."""
    check_workers(workers)
    if configs_only and record_dir is not None:
        raise ValueError("--configs-only trains nothing, so it writes no record: leave out --record-dir")
    if tensorboard:
        require_tensorboard()
    if wandb:
        require_wandb()
    devices = min(default_devices(c) for c in experiment.runs.values()) if devices is None else devices
    for config in experiment.runs.values():
        check_devices(devices, config)
    check_output_folder(Path(out), holds="experiment")
    if record_dir is not None:
        check_output_folder(Path(record_dir), "--record-dir")
        if experiment.subset and not experiment.keeps_results:
            raise ValueError(
                f"--record-dir writes {experiment.name}'s record, which some of its runs cannot make: give it "
                "without --runs (in the same --out, the runs trained so far are not trained again)"
            )
    with contextlib.ExitStack() as locks:
        for folder in [out, *(out / run for run in experiment.runs)]:
            locks.enter_context(writing(folder))
        return _reproduce_checked(
            with_sources_in(experiment, out),
            out,
            workers,
            tensorboard,
            devices,
            record_dir,
            wandb,
            train_only,
            configs_only,
        )


def with_sources_in(experiment: Experiment, out: Path) -> Experiment:
    """``experiment`` with each run's relative ``init_params`` (a run of the same experiment, e.g.
    "3x3/clone-8": a curriculum's earlier stage) made its folder in ``out``."""
    runs = {
        run: config
        if not config.init_params or Path(config.init_params).is_absolute()
        else dataclasses.replace(config, init_params=str(out / config.init_params))
        for run, config in experiment.runs.items()
    }
    return dataclasses.replace(experiment, runs=runs)


def stages(experiment: Experiment, out: Path) -> list[list[str]]:
    """The experiment's runs in the order they can train: each stage's runs start from the
    parameters (``init_params``) of runs of earlier stages or of folders trained before."""
    waiting = dict(experiment.runs)
    order = []
    while waiting:
        folders = {str(out / run) for run in waiting}
        ready = [run for run, config in waiting.items() if config.init_params not in folders]
        if not ready:
            raise ValueError(f"the runs {sorted(waiting)} start from each other's parameters (init_params) in a circle")
        order.append(ready)
        waiting = {run: config for run, config in waiting.items() if run not in ready}
    return order


def _reproduce_checked(
    experiment: Experiment,
    out: Path,
    workers: int | None,
    tensorboard: bool,
    devices: int,
    record_dir: Path | None,
    wandb: bool,
    train_only: bool,
    configs_only: bool,
) -> dict:
    folders = {run: RunFolder(out / run) for run in experiment.runs}
    sitting, keeps = sitting_now(), record_dir is not None and experiment.keeps_results
    evaluated = restore_panels(experiment, folders, record_dir) if keeps else {}
    for run, config in experiment.runs.items():
        folders[run].prepare(config)
    (out / "experiment.json").write_text(json.dumps(experiment.describe(), indent=2))
    if configs_only:
        console.print(f"{experiment.name}: the configs of {len(folders)} runs written in {out}, nothing trained")
        return {}
    preset = f", preset {experiment.preset!r}" if experiment.preset else ""
    console.print(f"[bold]{experiment.name}[/] v{experiment.version}{preset}: {experiment.description}")
    seeds = ", ".join(str(s) for s in sorted({c.seeds for c in experiment.runs.values()}))
    console.print(f"reproduces {experiment.reproduces}; {len(experiment.runs)} runs of {seeds} seed(s) each, in {out}")
    for run, config in experiment.runs.items():
        if note := config.rounding_note():
            console.print(f"{run}: {note}")
    wall = 0.0

    def keep_finished(wall_before: float, started: float) -> None:
        """Keep every run finished so far (the sitting's training time: ``wall_before`` and the time
        since ``started``), so that a sitting cut short loses only the runs it was training."""
        written, evaluated_now = keep_panels(
            experiment, folders, record_dir, sitting, wall_before + time.time() - started, out
        )
        evaluated.update(evaluated_now)
        for path in written:
            console.print(f"kept: {path}")

    training_since = None  # when the stage training now started
    try:
        for stage in stages(experiment, out):
            for run in stage:
                config = experiment.runs[run]
                if config.init_params:  # a stage trained before (another part): refused clearly if it has not
                    check_starting_params(
                        config, jax.eval_shape(learner_for(config).init, jax.random.PRNGKey(0)).params
                    )
            training_since = time.time()
            trained = train_folders(
                [folders[run] for run in stage],
                workers,
                tensorboard,
                devices,
                wandb=wandb,
                on_job_done=functools.partial(keep_finished, wall, training_since) if keeps else None,
            )
            training_since = None
            wall += trained
            if keeps:  # and the runs finished before this sitting that its files lack
                keep_finished(wall, time.time())
    finally:  # a sitting cut short counts too: its runs resume from their checkpoints
        if not keeps:
            wall = sittings_wall_time(out, sitting, wall + (time.time() - training_since if training_since else 0.0))
    if keeps:  # every sitting's, this one's included (kept with its runs), wherever its runs are now
        wall = kept_wall_time(experiment, record_dir)
    if train_only:
        return {"wall_time_s": wall}

    summaries = {run: folders[run].write_summary(config) for run, config in experiment.runs.items()}
    configs = list(experiment.runs.values())
    names = lambda label: " / ".join(dict.fromkeys(getattr(c, label) for c in configs))
    table = Table(
        title=f"{experiment.name}: {names('final_label')} (mean over the last 10% of the updates that measured it)"
    )
    for column in (
        "panel",
        "run",
        f"{names('step_label')} / seed",
        f"{names('final_label')} ± std over seeds",
        "per seed",
        "standard error (episodes)",
    ):
        table.add_column(column)
    for run, summary in summaries.items():
        panel, label = run.split("/", 1)
        per_seed = ", ".join("-" if v["final"] is None else f"{v['final']:.2f}" for v in summary["seeds"].values())
        mean, error = summary["final_mean"], summary["final_standard_error"]
        table.add_row(
            panel,
            label,
            f"{summary['steps_per_seed']:,}",
            "-" if mean is None else f"{mean:.2f} ± {summary['final_std']:.2f}",
            per_seed,
            "-" if error is None else f"{error:.2f} ({summary['final_episodes']})",
        )
    console.print(table)

    figure = save_curves(
        out / "curves.png",
        {panel: {run.split("/", 1)[1]: folders[run] for run in runs} for panel, runs in experiment.panels().items()},
        experiment.optima,
    )
    if tensorboard:
        write_figure(
            out / "tensorboard",
            "curves",
            figure,
            max(c.num_updates * c.steps_per_update for c in experiment.runs.values()),
        )
    results = {
        "experiment": experiment.name,
        "version": experiment.version,
        "preset": experiment.preset,
        "wall_time_s": wall,
        "backend": jax.default_backend(),
        "cpu_cores": len(os.sched_getaffinity(0)),
        "summaries": summaries,
        "checks": [],
        "figure": str(figure),
    }
    if experiment.evaluation is not None:
        results["evaluation"] = evaluation_with_kept(experiment, folders, out, evaluated)
    rounded = lambda x: x if x is None else round(x, 3)
    for e in experiment.expectations:
        outcome = e.outcome(summaries, results.get("evaluation"))
        results["checks"].append(
            {
                "description": e.why,
                "central": e.central,
                "learning": e.learning,
                "run": e.run,
                "measure": e.measure,
                "op": e.op,
                "against": e.against,
                "paired": e.paired,
                **({"parity": e.parity} if e.parity else {}),
                **({"shared_episodes": e.shared_episodes} if e.shared_episodes else {}),
                **outcome,
            }
        )
        than = f"{rounded(outcome['threshold'])} ({e.against})" if e.against else f"{e.threshold}"
        state = (
            "[green]DECIDED"
            if outcome["decided"]
            else "[yellow]PASS (not decided)"
            if outcome["passed"]
            else "[red]FAIL"
        )
        console.print(
            f"{state}[/] {e.run} {e.measure}: {rounded(outcome['value'])} {e.op} {than}  ({e.why}; {outcome['note']})"
        )
    (out / "results.json").write_text(json.dumps(results, indent=2))
    record = make_record(experiment, results["checks"], wall)
    records = [write_record(record, out, "record.json")] + (
        [write_record(record, record_dir)] if record_dir is not None and not experiment.subset else []
    )
    console.print(f"figure: {figure}\nresults: {out / 'results.json'} (wall time {wall / 60:.1f} min)")
    console.print(f"verdict: [bold]{record['verdict']}[/]; record: {', '.join(map(str, records))}")
    if record_dir is not None and experiment.subset:
        console.print(f"(some runs only: the record in {record_dir} is written by an invocation without --runs)")
    return results
