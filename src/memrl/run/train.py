"""Training run folders: every seed of every folder, as worker processes (one per CPU core, or one
per run on an accelerator), with live progress; and one run from its config, as ``memrl train*`` does
(also as one of several processes that train a run together: ``hosts.py``)."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from pathlib import Path

import jax

from memrl.console import console
from memrl.learn.learners import learner_for
from memrl.learn.run_config import ConfigRecord
from memrl.run.curves import save_curves
from memrl.run.devices import check_devices, check_fits_memory, check_workers, default_devices
from memrl.run.final_agents import check_starting_params
from memrl.run.folder import RunFolder
from memrl.run.folder_lock import check_output_folder, writing
from memrl.run.hosts import Hosts
from memrl.run.launch import Job, jobs_for, run_jobs
from memrl.run.progress import TrainingProgress
from memrl.run.tensorboard import require_tensorboard, write_figure
from memrl.run.wandb_export import require_wandb


def default_workers() -> int:
    """One job per core on a CPU; one job at a time on an accelerator (it vmaps the seeds)."""
    return len(os.sched_getaffinity(0)) if jax.default_backend() == "cpu" else 1


class RunInterrupted(KeyboardInterrupt):
    """Training stopped by Ctrl-C; the message says where the checkpoints stand."""


def saved_updates(folders: list[RunFolder]) -> str:
    """Where the seeds' checkpoints stand: "update N of M" per folder (a range where its seeds differ)."""
    parts = []
    for folder in folders:
        config = folder.load_config()
        updates = sorted({folder.checkpoint_update(seed) for seed in config.seed_list()})
        at = str(updates[0]) if len(updates) == 1 else f"{updates[0]}-{updates[-1]}"
        parts.append(f"update {at} of {config.num_updates}" + (f" in {folder.path}" if len(folders) > 1 else ""))
    return "; ".join(parts)


def announce_discarded_rows(folders: list[RunFolder]) -> None:
    """Say which seeds' metrics hold more updates than their checkpoints (a checkpoint deleted, or
    a kill between the two writes): training goes on from the checkpoint and drops those rows; and
    which hold fewer (the metrics file deleted or cut): training goes on, their curve missing the
    updates before. Refuses an unreadable checkpoint (``checkpoint_update``) before any worker starts."""
    for folder in folders:
        for seed in folder.load_config().seed_list():
            saved, rows = folder.checkpoint_update(seed), len(folder.read_metrics(seed))
            if rows < saved:
                console.print(
                    f"[yellow]seed {seed} of {folder.path} has a checkpoint at update {saved} and metrics of "
                    f"{rows} updates ({folder.metrics_path(seed)} was removed or cut): it goes on from update "
                    f"{saved + 1}, its metrics and curve without updates {rows + 1}-{saved}[/]"
                )
            if rows > saved:
                start = (
                    "has no checkpoint: it starts over"
                    if saved == 0
                    else f"has a checkpoint at update {saved}: it goes on from there"
                )
                console.print(
                    f"[yellow]seed {seed} of {folder.path} {start}, and drops the {rows - saved} metrics rows after it[/]"
                )


def train_folders(
    folders: list[RunFolder],
    workers: int | None = None,
    tensorboard: bool = False,
    devices: int = 1,
    hosts: Hosts = Hosts(),
    wandb: bool = False,
    on_job_done: Callable[[], None] | None = None,
) -> float:
    """Train every seed of every folder (already prepared, by process 0 of ``hosts``) on ``devices``
    local devices, logging TensorBoard scalars too if ``tensorboard`` and W&B runs if ``wandb``,
    calling ``on_job_done`` as each worker's job finishes; returns the wall time in seconds. Ctrl-C
    raises ``RunInterrupted``, whose message says where the checkpoints stand. A process of several
    trains all seeds of its one folder in one worker, unpinned."""
    on_cpu = jax.default_backend() == "cpu"
    if hosts.owns_folder:
        announce_discarded_rows(folders)
    workers = workers or default_workers()
    if hosts.several:
        jobs, workers, pin = (
            [Job(f.path, ()) for f in folders],
            1,
            False,
        )  # the worker reads the seeds once the folder is there
    else:
        jobs, pin = jobs_for([f.path for f in folders], [f.load_config() for f in folders], on_cpu, workers), on_cpu
        jobs = [job for job in jobs if not RunFolder(job.run_dir).finished(job.seeds)]  # no worker for them
        if not jobs:
            return 0.0
    workers = min(workers, len(jobs))
    start = time.time()
    progress = TrainingProgress(folders) if hosts.owns_folder else None  # the others may start before the folder exists
    try:
        with progress or contextlib.nullcontext():
            run_jobs(
                jobs,
                workers,
                pin=pin,
                on_progress=progress and progress.update,
                tensorboard=tensorboard,
                devices=devices,
                hosts=hosts,
                wandb=wandb,
                on_job_done=on_job_done,
            )
    except KeyboardInterrupt:
        if not hosts.owns_folder:
            raise
        raise RunInterrupted(f"saved at {saved_updates(folders)}") from None
    return time.time() - start


def train_run(
    config: ConfigRecord,
    out: Path | str,
    workers: int | None = None,
    tensorboard: bool = False,
    devices: int | None = None,
    hosts: Hosts = Hosts(),
    wandb: bool = False,
) -> dict | None:
    """Train (or resume) the run of ``config`` in ``out`` on ``devices`` local devices (default:
    ``default_devices``) of each of ``hosts``' processes, with TensorBoard scalars if
    ``tensorboard`` and W&B runs if ``wandb``; write its summary and curve; return the summary
    (None on processes other than 0, which write nothing). The config was checked when it was made;
    here its model is traced before the folder is made (shapes that clash are refused then);
    process 0 then holds ``out``'s writer lock throughout."""
    check_workers(workers)
    devices = default_devices(config) if devices is None else devices
    check_devices(devices, config, hosts.num_processes)
    if tensorboard:
        require_tensorboard()
    if wandb:
        require_wandb()
    # Traced, not run: settings that only clash once shapes meet (a core's width against its input)
    # are refused here with their message, before a folder or a worker exists.
    shapes = jax.eval_shape(learner_for(config).init, jax.random.PRNGKey(0))
    check_fits_memory(shapes)
    if config.init_params:
        check_starting_params(config, shapes.params)
    check_output_folder(Path(out), holds="run")
    with writing(out) if hosts.owns_folder else contextlib.nullcontext():
        return _train_prepared(config, RunFolder(Path(out)), workers, tensorboard, devices, hosts, wandb)


def _train_prepared(
    config: ConfigRecord,
    folder: RunFolder,
    workers: int | None,
    tensorboard: bool,
    devices: int,
    hosts: Hosts,
    wandb: bool,
) -> dict | None:
    if hosts.owns_folder:
        folder.prepare(config)
        console.print(
            f"run folder {folder.path}: {config.learner}, {config.num_updates} updates x {config.steps_per_update} "
            f"{config.step_label}, {config.seeds} seed(s)"
            + (f", {hosts.num_processes} processes" if hosts.several else "")
        )
        if note := config.rounding_note():
            console.print(note)
    wall = train_folders([folder], workers, tensorboard, devices, hosts, wandb)
    if not hosts.owns_folder:
        return None
    summary = folder.write_summary(config)
    save_curves(folder.path / "curves.png", {config.trained_on: {config.core_name: folder}})
    if tensorboard:
        write_figure(
            folder.path / "tensorboard",
            "curves",
            folder.path / "curves.png",
            config.num_updates * config.steps_per_update,
        )
    rounded = lambda value: "-" if value is None else f"{value:.4g}"  # float32 digits say nothing
    finals = ", ".join(f"seed {seed}: {rounded(v['final'])}" for seed, v in summary["seeds"].items())
    error = summary["final_standard_error"]
    noise = "" if error is None else f"; standard error {error:.3f} over {summary['final_episodes']} episodes"
    console.print(
        f"{config.final_label} {rounded(summary['final_mean'])} ({finals}{noise}; each seed's mean over its "
        f"last 10% of updates), {wall:.0f} s; curve {folder.path / 'curves.png'}"
    )
    return summary
