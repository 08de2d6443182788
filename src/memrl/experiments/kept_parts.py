"""The parts of an experiment trained in different sittings (``Experiment.keeps_results``): each
sitting keeps every run it finished in its panel's ``RECORD_DIR/NAME/kept/PRESET/PANEL.json`` (the
runs' results without their parameters, ``run/kept_results.py``: small enough to commit), and a later
sitting restores them into its output folder before it trains, so that its table, figure, checks
and record cover every part. A kept run is restored only into a run folder that holds nothing yet
and only where it trained with the config asked for; otherwise it trains again, and says why. An
experiment whose evaluation acts with the final agents (``Experiment.evaluation_reads_agents``)
evaluates each run as it is kept and keeps its entries beside its results, since a restored run
has no parameters to evaluate."""

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


def restore_panels(experiment: Experiment, folders: dict[str, RunFolder], record_dir: Path) -> dict[str, dict]:
    """Restore the kept results of every run whose folder holds nothing yet; returns the kept
    evaluation entries of the runs restored (run -> table -> entry)."""
    evaluations = {}
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
            if "evaluation" in kept["runs"][run]:
                evaluations[run] = kept["runs"][run]["evaluation"]
            console.print(f"{run}: restored from {path}")
    return evaluations


def kept_wall_time(experiment: Experiment, record_dir: Path) -> float:
    """The training time of every sitting named in the kept files of the experiment's panels, each
    counted once, at the most its files hold (a sitting's files hold its time so far as it kept each)."""
    sittings = {}
    for panel in experiment.panels():
        path = kept_file(record_dir, experiment, panel)
        for sitting, wall in (json.loads(path.read_text())["sittings"] if path.exists() else {}).items():
            sittings[sitting] = max(wall, sittings.get(sitting, 0.0))
    return sum(sittings.values())


def keep_panels(
    experiment: Experiment,
    folders: dict[str, RunFolder],
    record_dir: Path,
    sitting: str,
    wall_time_s: float,
    out: Path,
) -> tuple[list[Path], dict[str, dict]]:
    """Keep every finished run (trained, or restored) that its panel's kept file lacks or holds with
    another config, beside the runs the file holds already (a part may be some of a panel's runs);
    ``sitting`` names this invocation and ``wall_time_s`` is its training time so far, added to the
    sittings the file names (so the largest of a sitting's files is its time). Where the evaluation
    reads the agents, each run kept is evaluated now (``out``: the evaluation's output folder) and
    its entries kept with it. Returns the files written and those entries (run -> table -> entry)."""
    written, evaluations = [], {}
    for panel, runs in experiment.panels().items():
        path = kept_file(record_dir, experiment, panel)
        earlier = json.loads(path.read_text()) if path.exists() else {"sittings": {}, "runs": {}}
        new = [  # read only these runs' metrics: this is called as each worker's job ends
            run
            for run in runs
            if folders[run].finished()
            and (
                run not in earlier["runs"]
                or earlier["runs"][run]["config"] != json.loads(folders[run].config_path.read_text())
            )
        ]
        kept = {run: keep_run(folders[run]) for run in new}
        if not kept:
            continue
        if experiment.evaluation_reads_agents:
            evaluated = experiment.evaluation({run: folders[run] for run in kept}, out)
            for run, result in kept.items():
                result["evaluation"] = evaluations[run] = entries_of(evaluated, run)
        record = {"sittings": {**earlier["sittings"], sitting: round(wall_time_s, 1)}, "runs": earlier["runs"] | kept}
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, json.dumps(record).encode())
        written.append(path)
    return written, evaluations


def entries_of(evaluation: dict, run: str) -> dict:
    """``run``'s entry in each table of an evaluation's results ({table: {run: entry}})."""
    return {table: rows[run] for table, rows in evaluation.items() if isinstance(rows, dict) and run in rows}


def evaluation_with_kept(experiment: Experiment, folders: dict[str, RunFolder], out: Path, kept: dict) -> dict:
    """The experiment's evaluation of the runs without ``kept`` entries (run -> table -> entry),
    those entries merged into its tables."""
    rest = {run: folder for run, folder in folders.items() if run not in kept}
    results = experiment.evaluation(rest, out) if rest else {}
    for run, tables in kept.items():
        for table, entry in tables.items():
            results.setdefault(table, {})[run] = entry
    return results


def sittings_wall_time(out: Path, sitting: str, seconds: float) -> float:
    """The training time of every sitting that trained in ``out`` (``out/sittings.json``, sitting ->
    seconds), this one's ``seconds`` added where it trained at all: an experiment that keeps no
    parts resumes its runs in its output folder, and its record counts every sitting's time."""
    path = out / "sittings.json"
    sittings = json.loads(path.read_text()) if path.exists() else {}
    if seconds > 0:
        sittings[sitting] = round(seconds, 1)
        atomic_write(path, json.dumps(sittings, indent=2).encode())
    return sum(sittings.values())


def sitting_now() -> str:
    """This sitting's name: when it started, to the second (UTC)."""
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
