"""Worker process of ``launch.run_jobs``: ``python -m memrl.run.worker RUN_DIR SEEDS CORES [devices=N] [tensorboard] [wandb]
[hosts=COORDINATOR,PROCESSES,ID]``.

It pins itself to CORES (one core, or a comma-separated list; -1: none) and turns on JAX's disk
compilation cache before JAX starts, so XLA sizes its thread pool to those cores, and every job after the first of a run (each seed is a job
on a CPU, and all of a run's seeds compile the same program) loads the program instead of compiling
it: 10-25 s saved per job of ``amrl-tmaze``. ``JAX_COMPILATION_CACHE_DIR`` chooses the cache folder.
With ``hosts=``, it first joins the run's other processes (``hosts.py``); SEEDS is then empty (all
of the run's seeds), read from the folder, which process 0 has prepared by the time all have joined.
"""

import ctypes
import errno
import os
import signal
import sys
from pathlib import Path

PARENT = "MEMRL_LAUNCHER_PID"
"""the environment variable in which the launcher gives its process id to its workers"""
PR_SET_PDEATHSIG = 1  # Linux's prctl option: a signal for this process when its parent dies


def default_cache_dir() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "memrl" / "xla"


def end_with_launcher() -> None:
    """On Linux, end this worker when the memrl process that launched it dies (a SIGKILL of the
    launcher alone): it would otherwise train on unseen, holding the run folder's lock under a dead
    process's name. Its checkpoints are written atomically, so nothing saved is lost."""
    if sys.platform != "linux" or PARENT not in os.environ:
        return
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != int(os.environ[PARENT]):  # the launcher died before prctl took effect
        os.kill(os.getpid(), signal.SIGTERM)


def main(run_dir: str, seeds: str, cores: str, *options: str) -> None:
    end_with_launcher()
    if cores != "-1":
        os.sched_setaffinity(0, {int(core) for core in cores.split(",")})
    os.environ.setdefault("JAX_COMPILATION_CACHE_DIR", str(default_cache_dir()))
    from memrl.run.folder import RunFolder
    from memrl.run.hosts import Hosts

    settings = dict(o.split("=", 1) for o in options if "=" in o)
    if "hosts" in settings:  # before anything starts JAX's backend (importing the learners does)
        Hosts.from_option(settings["hosts"]).join()
    from memrl.run.seed_training import train_seeds

    folder = RunFolder(Path(run_dir))
    config = folder.load_config()
    seeds = [int(s) for s in seeds.split(",")] if seeds else config.seed_list()
    try:
        train_seeds(
            config,
            folder,
            seeds,
            tensorboard="tensorboard" in options,
            devices=int(settings.get("devices", 1)),
            wandb="wandb" in options,
        )
    except FloatingPointError as err:  # a diverged run: the message says all (the launcher shows this log's end)
        print(err, file=sys.stderr)
        raise SystemExit(1) from None
    except OSError as err:
        if err.errno != errno.ENOSPC:
            raise
        print(f"no space left on device (writing {err.filename or run_dir})", file=sys.stderr)
        raise SystemExit(1) from None


if __name__ == "__main__":
    main(*sys.argv[1:])
