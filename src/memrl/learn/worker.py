"""Worker process of ``launch.run_jobs``: ``python -m memrl.learn.worker RUN_DIR SEEDS CORE``.

It pins itself to CORE (unless -1) before JAX starts, so XLA sizes its thread pool to that core.
"""

import os
import sys


def main(run_dir: str, seeds: str, core: str) -> None:
    if int(core) >= 0:
        os.sched_setaffinity(0, {int(core)})
    from pathlib import Path

    from memrl.learn.launch import train_seeds
    from memrl.learn.run_folder import RunFolder

    folder = RunFolder(Path(run_dir))
    train_seeds(folder.load_config(), folder, [int(s) for s in seeds.split(",")])


if __name__ == "__main__":
    main(*sys.argv[1:4])
