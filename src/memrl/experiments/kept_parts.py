"""The parts of an experiment trained in different sittings (``Experiment.keeps_results``): each
sitting keeps every panel it finished in ``RECORD_DIR/NAME/kept/PRESET/PANEL.json`` (the runs'
results without their parameters, ``run/kept_results.py``: small enough to commit), and a later
sitting restores them into its output folder before it trains, so that its table, figure, checks
and record cover every part. A kept run is restored only into a run folder that holds nothing yet
and only where it trained with the config asked for; otherwise it trains again, and says why."""

from __future__ import annotations

import datetime
import json
from pathlib import Path

from memrl.console import console
from memrl.experiments.base import Experiment
from memrl.experiments.record import KEPT
from memrl.run.folder import RunFolder, atomic_write, differences
from memrl.run.kept_results import keep_run, kept_config, restore_run


def kept_file(record_dir: Path, experiment: Experiment, panel: str) -> Path:
    """Where ``panel``'s kept results of ``experiment`` (in its preset) are."""
    return Path(record_dir) / experiment.name / KEPT / (experiment.preset or "default") / f"{panel}.json"


def restore_panels(experiment: Experiment, folders: dict[str, RunFolder], record_dir: Path) -> float:
    """Restore the kept results of every run whose folder holds nothing yet; returns the wall time
    of the sittings that trained them (each counted once, at the most its files hold)."""
    sittings = {}
    for panel, runs in experiment.panels().items():
        path = kept_file(record_dir, experiment, panel)
        kept = json.loads(path.read_text()) if path.exists() else {"runs": {}}
        for run in runs:
            if folders[run].config_path.exists() or run not in kept["runs"]:
                continue
            config, asked = kept_config(kept["runs"][run], path), experiment.runs[run]
            if config != asked:
                console.print(
                    f"[yellow]{run}: the results kept in {path} trained with another config "
                    f"({differences(config.record(), asked.record())}); it trains here[/]"
                )
                continue
            restore_run(folders[run], kept["runs"][run], path)
            for sitting, wall in kept["sittings"].items():  # a sitting's panels hold its time so far
                sittings[sitting] = max(wall, sittings.get(sitting, 0.0))
            console.print(f"{run}: restored from {path}")
    return sum(sittings.values())


def keep_panels(
    experiment: Experiment, folders: dict[str, RunFolder], record_dir: Path, sitting: str, wall_time_s: float
) -> list[Path]:
    """Keep every panel whose runs have all finished (trained, or restored) where its kept file
    lacks one of them or holds another config; ``sitting`` names this invocation and
    ``wall_time_s`` is its training time so far, added to the sittings the file names (so the
    largest of a sitting's files is its time). Returns the files written."""
    written = []
    for panel, runs in experiment.panels().items():
        if not all(folders[run].finished() for run in runs):
            continue
        path = kept_file(record_dir, experiment, panel)
        earlier = json.loads(path.read_text()) if path.exists() else {"sittings": {}, "runs": {}}
        kept = {run: keep_run(folders[run]) for run in runs}
        if all(run in earlier["runs"] and earlier["runs"][run]["config"] == kept[run]["config"] for run in runs):
            continue
        record = {"sittings": {**earlier["sittings"], sitting: round(wall_time_s, 1)}, "runs": kept}
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, json.dumps(record).encode())
        written.append(path)
    return written


def sitting_now() -> str:
    """This sitting's name: when it started, to the second (UTC)."""
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
