"""Weights & Biases export of run folders (``memrl wandb RUN...``; optional: ``pip install "memrl[wandb]"``).

Each seed of each run folder becomes one W&B run: the folder's config as its config (with the
learner), every row of ``metrics.jsonl`` logged at its update number (unmeasured values left out),
and the folder's ``curves.png``, if there is one, as the image ``curves``. Runs of one folder share
a W&B group named after the folder. Offline by default: W&B writes the runs under ``RUN/wandb/`` and
``wandb sync RUN/wandb/offline-run-*`` uploads them later; ``online`` uploads at once (after
``wandb login``). An export is a snapshot of the folder: exported again after more training, W&B
gets a new run holding everything up to then."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from memrl.console import console
from memrl.run.folder import RunFolder


def require_wandb():
    """The wandb module, or a message that says how to install it."""
    try:
        import wandb
    except ImportError:
        raise ImportError('memrl wandb needs the wandb package: pip install "memrl[wandb]"') from None
    return wandb


def run_folders(paths: list[Path]) -> list[RunFolder]:
    """The run folders at or under ``paths`` (a run folder holds config.json), in path order."""
    if not paths:
        raise ValueError("name at least one run folder, or a folder holding run folders")
    folders = []
    for path in paths:
        if not path.exists():
            raise FileNotFoundError(f"{path} does not exist")
        found = sorted(p.parent for p in path.rglob("config.json") if "wandb" not in p.relative_to(path).parts)
        if not found:
            raise FileNotFoundError(f"{path} holds no run folder (a folder with config.json, as memrl train and memrl reproduce write)")
        folders += [RunFolder(p) for p in found]
    return folders


def export_folder(wandb, folder: RunFolder, project: str, entity: str | None, mode: str) -> list[str]:
    """One W&B run per seed of ``folder`` that has metrics; returns the W&B run names."""
    config = folder.load_config()  # refuses a config that is not memrl's, naming the file
    settings = {"learner": config.learner, **dataclasses.asdict(config)}
    curves = folder.path / "curves.png"
    names = []
    for seed in config.seed_list():
        rows = folder.read_metrics(seed)
        if not rows:
            continue
        name = f"{folder.path.name}/seed_{seed}"
        run = wandb.init(
            project=project, entity=entity, mode=mode, dir=str(folder.path), name=name, group=str(folder.path),
            config={**settings, "seed": seed},
            settings=wandb.Settings(quiet=True, console="off"),
        )
        for update, row in enumerate(rows, 1):
            run.log({key: value for key, value in row.items() if value is not None}, step=update)
        if curves.exists():
            run.log({"curves": wandb.Image(str(curves))}, step=len(rows))
        run.finish()
        names.append(name)
    return names


def export(runs: list[Path], project: str = "memrl", entity: str | None = None, online: bool = False) -> None:
    """Export every run folder at or under ``runs`` (``memrl wandb``); offline unless ``online``."""
    wandb = require_wandb()
    folders = run_folders(runs)
    mode = "online" if online else "offline"
    for folder in folders:
        names = export_folder(wandb, folder, project, entity, mode)
        what = f"{len(names)} W&B run(s)" if names else "nothing (no metrics yet)"
        console.print(f"{folder.path}: {what}" + (f", offline under {folder.path / 'wandb'}" if names and not online else ""))
    if not online:
        console.print("upload with: wandb sync <folder>/wandb/offline-run-*")
