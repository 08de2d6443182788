"""Launching seeds: one worker process per job (``worker.py``, which trains its seeds with
``seed_training.train_seeds``), at most one per core.

On a CPU each seed of each run is a job, and at most one job per core runs at a time, each process
pinned to its own core: one process keeps one core busy, and ``jit(vmap(train))`` over 2+ seeds
was seen to deadlock on 2-core machines (docs/architecture.md). On a GPU all seeds of a run are one job,
vmapped in one program.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from memrl.learn.run_config import ConfigRecord
from memrl.run.cores_in_use import least_used_cores
from memrl.run.folder_lock import held_descriptors
from memrl.run.hosts import Hosts
from memrl.run.interrupts import raise_if_requested
from memrl.run.worker import PARENT


@dataclasses.dataclass(frozen=True)
class Job:
    run_dir: Path
    seeds: tuple[int, ...]  # empty: all seeds of the run, read from its folder by the worker
    pipelined: bool = False  # acts beside learning (a run with a policy lag, ``pipeline.py``): a second core pays


def cores_for(job: Job, free: Sequence[int], waiting: int) -> tuple[int, ...]:
    """The cores a starting CPU job is pinned to: one, or two of the ``free`` ones for a pipelined
    job when no other job is ``waiting`` for a core (then the second would idle)."""
    return tuple(free[: 2 if job.pipelined and not waiting and len(free) >= 2 else 1])


class TrainingFailed(ChildProcessError):
    """A training job (worker process) ended with an error; the message holds the end of its log."""


def jobs_for(run_dirs: Sequence[Path], configs: Sequence[ConfigRecord], on_cpu: bool, workers: int = 1) -> list[Job]:
    """On a GPU one job per run (its seeds vmapped). On a CPU one job per seed, ordered so that the
    first seeds of ``workers`` runs start together and their other seeds follow: a run's later seeds
    then load its program from the compilation cache instead of compiling it alongside seed one."""
    if not on_cpu:
        return [Job(Path(run_dir), tuple(config.seed_list())) for run_dir, config in zip(run_dirs, configs)]
    runs = [
        [Job(Path(run_dir), (seed,), getattr(config, "policy_lag", 0) > 0) for seed in config.seed_list()]
        for run_dir, config in zip(run_dirs, configs)
    ]
    jobs = []
    for group in range(0, len(runs), workers):
        seeds = runs[group : group + workers]
        jobs += [run[0] for run in seeds] + [job for run in seeds for job in run[1:]]
    return jobs


NO_SPACE = "o space left on device"
"""what a full disk's OSError says (strerror "No space left on device")"""
RESUME_AFTER_FULL_DISK = (
    "the checkpoints are whole (each written atomically): free some space and run the same command again to resume"
)


def failure_reason(log: Path) -> str:
    """The end of a failed worker's log; where the log is empty (nothing could be written), the
    free space of its file system, the likeliest reason."""
    tail = log.read_text(errors="replace")[-3000:].strip() if log.exists() else ""
    if NO_SPACE in tail:
        return f"{tail.splitlines()[-1]}; {RESUME_AFTER_FULL_DISK}"
    if tail:
        return "\n" + tail
    free = shutil.disk_usage(log.parent).free
    return f"its log {log} is empty; {free:,} bytes are free on its file system" + (
        " (no space left on device)" if free < 1 << 20 else ""
    )


def run_jobs(
    jobs: Sequence[Job],
    workers: int,
    pin: bool = True,
    on_progress: Callable[[], None] | None = None,
    on_job_done: Callable[[], None] | None = None,
    poll: float = 1.0,
    tensorboard: bool = False,
    devices: int = 1,
    hosts: Hosts = Hosts(),
    wandb: bool = False,
) -> None:
    """Run jobs, at most ``workers`` at once, each in its own process (pinned, if ``pin``, to one of
    the ``workers`` cores that other memrl workers use least, ``least_used_cores``, or two of them:
    ``cores_for``;
    logging TensorBoard scalars if ``tensorboard``; on ``devices`` local devices; joining the
    other processes of ``hosts``). ``on_progress`` is called while waiting (it reads the metrics
    files), ``on_job_done`` after each job that finished. A failed job stops the others and raises
    with the end of its log."""
    free = least_used_cores(workers)
    pending = list(jobs)
    running: dict[tuple[int, ...], tuple[subprocess.Popen, Job, Path]] = {}
    try:
        while pending or running:
            while free and pending:
                job = pending.pop(0)
                cores = cores_for(job, free, len(pending))
                free = [core for core in free if core not in cores]
                job.run_dir.mkdir(parents=True, exist_ok=True)  # a process other than 0 may start before 0 made it
                log = job.run_dir / (
                    f"worker_seeds_{'_'.join(map(str, job.seeds))}.log"
                    if job.seeds
                    else f"worker_process_{hosts.process_id}.log"
                )
                seeds = ",".join(map(str, job.seeds))
                pinned = ",".join(map(str, cores)) if pin else "-1"
                cmd = [sys.executable, "-m", "memrl.run.worker", str(job.run_dir), seeds, pinned]
                cmd += [f"devices={devices}"] + (["tensorboard"] if tensorboard else []) + (["wandb"] if wandb else [])
                cmd += [hosts.option()] if hosts.several else []
                with log.open("w") as f:
                    proc = subprocess.Popen(
                        cmd,
                        stdout=f,
                        stderr=subprocess.STDOUT,
                        pass_fds=held_descriptors(),
                        env={**os.environ, PARENT: str(os.getpid())},
                    )
                running[cores] = (proc, job, log)
            time.sleep(poll)
            raise_if_requested()
            if on_progress:
                on_progress()
            for cores, (proc, job, log) in list(running.items()):
                if proc.poll() is not None:
                    del running[cores]
                    free = sorted(free + list(cores))
                    if proc.returncode != 0:
                        raise TrainingFailed(
                            f"training job {job.run_dir} seeds {job.seeds} failed (exit {proc.returncode}): {failure_reason(log)}"
                        )
                    if on_job_done:
                        on_job_done()
    finally:
        for proc, _, _ in running.values():
            proc.kill()
