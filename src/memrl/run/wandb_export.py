"""Weights & Biases logging: export of run folders (``memrl wandb RUN...``) and, with ``--wandb``, of a
run's metrics as it trains (each chunk's rows, offline unless ``WANDB_MODE=online``); optional:
``pip install "memrl[wandb]"``.

Each seed of each run folder becomes one W&B run: the folder's config as its config (with the
learner), every row of ``metrics.jsonl`` logged at the steps done after its update (environment
steps, or sequences for a supervised run; unmeasured values left out),
and the folder's ``curves.png``, if there is one, as the image ``curves``. Runs of one folder share
a W&B group named after the folder. Offline by default: W&B writes the runs under ``RUN/wandb/`` and
``wandb sync RUN/wandb/offline-run-*`` uploads them later; ``online`` uploads at once (after
``wandb login``). An export is a snapshot of the folder: exported again after more training, W&B
gets a new run holding everything up to then."""

from __future__ import annotations

import os
from pathlib import Path

from memrl.console import console
from memrl.run.folder import RunFolder


def require_wandb():
    """The wandb module, or a message that says how to install it (or, with ``WANDB_MODE=online``,
    that no API key is configured: ``check_online``)."""
    try:
        import wandb
    except ImportError:
        raise ImportError('memrl wandb and --wandb need the wandb package: pip install "memrl[wandb]"') from None
    if os.environ.get("WANDB_MODE") == "online":
        check_online(wandb)
    return wandb


def check_online(wandb) -> None:
    """Refuse an upload to W&B (``--online``, or ``WANDB_MODE=online`` with ``--wandb``) where no API
    key is configured, before anything is logged."""
    if not getattr(getattr(wandb, "api", None), "api_key", None):
        raise ValueError(
            "uploading to W&B needs an API key, and none is configured: run `wandb login` or set WANDB_API_KEY; "
            "or log offline (without --online, or WANDB_MODE unset) and upload later with `wandb sync`"
        )


def open_live_run(folder: RunFolder, config, seed: int):
    """The W&B run that ``--wandb`` logs ``seed`` of ``folder`` to as it trains: project
    ``WANDB_PROJECT`` (default memrl), entity ``WANDB_ENTITY``, offline (under the run folder, for
    ``wandb sync``) unless ``WANDB_MODE`` says otherwise (online, after ``wandb login``). A resumed
    run logs to a new W&B run, from the update after its checkpoint."""
    return open_run(
        require_wandb(),
        folder,
        config,
        seed,
        os.environ.get("WANDB_PROJECT", "memrl"),
        os.environ.get("WANDB_ENTITY"),
        os.environ.get("WANDB_MODE", "offline"),
    )


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
            raise FileNotFoundError(
                f"{path} holds no run folder (a folder with config.json, as memrl train and memrl reproduce write)"
            )
        folders += [RunFolder(p) for p in found]
    return folders


def open_run(wandb, folder: RunFolder, config, seed: int, project: str, entity: str | None, mode: str):
    """The W&B run of ``seed`` of ``folder`` (named RUN/seed_S, grouped by folder, the config with
    its learner and seed), writing under the folder."""
    return wandb.init(
        project=project,
        entity=entity,
        mode=mode,
        dir=str(folder.path),
        name=f"{folder.path.name}/seed_{seed}",
        group=str(folder.path),
        config={"learner": config.learner, **config.record(), "seed": seed},
        settings=wandb.Settings(quiet=True, console="off"),
    )


def log_rows(run, rows: list[dict], first_update: int, steps_per_update: int) -> None:
    """``rows`` (one per update from ``first_update`` on, counted from 1) at the steps done after
    each update; unmeasured (None) values are left out."""
    for update, row in enumerate(rows, first_update):
        run.log({key: value for key, value in row.items() if value is not None}, step=update * steps_per_update)


def export_folder(wandb, folder: RunFolder, project: str, entity: str | None, mode: str) -> list[str]:
    """One W&B run per seed of ``folder`` that has metrics; returns the W&B run names."""
    config = folder.load_config()  # refuses a config that is not memrl's, naming the file
    curves = folder.path / "curves.png"
    names = []
    for seed in config.seed_list():
        rows = folder.read_metrics(seed)
        if not rows:
            continue
        run = open_run(wandb, folder, config, seed, project, entity, mode)
        log_rows(run, rows, 1, config.steps_per_update)
        if curves.exists():
            run.log({"curves": wandb.Image(str(curves))}, step=len(rows) * config.steps_per_update)
        run.finish()
        names.append(f"{folder.path.name}/seed_{seed}")
    return names


def export(runs: list[Path], project: str = "memrl", entity: str | None = None, online: bool = False) -> None:
    """Export every run folder at or under ``runs`` (``memrl wandb``); offline unless ``online``."""
    wandb = require_wandb()
    if online:
        check_online(wandb)
    folders = run_folders(runs)
    mode = "online" if online else "offline"
    for folder in folders:
        names = export_folder(wandb, folder, project, entity, mode)
        what = f"{len(names)} W&B run(s)" if names else "nothing (no metrics yet)"
        console.print(
            f"{folder.path}: {what}" + (f", offline under {folder.path / 'wandb'}" if names and not online else "")
        )
    if not online:
        console.print("upload with: wandb sync <folder>/wandb/offline-run-*")
