"""A finished run's results without its parameters: its config and, per seed, the metrics columns
that its summary and curve read. An experiment trained in parts over several sittings (or on
several machines) keeps each part's results this way, small enough to commit, and a later sitting
restores them into a run folder that then counts as trained: its summary, curve and table are as
if it had trained there; only what needs the parameters (``memrl eval``, an evaluation of the
agents) refuses its seeds (``RunFolder.load_checkpoint``)."""

from __future__ import annotations

import json
from pathlib import Path

from memrl.learn.run_config import ConfigRecord
from memrl.run.folder import RunFolder, atomic_write, config_from_record


def kept_columns(folder: RunFolder) -> list[str]:
    """The metrics a run's summary and curve read: its step, score and final metrics, the spread of
    the episodes behind the final one, and each row's wall time."""
    config = folder.load_config()
    final = config.final_metric
    return list(
        dict.fromkeys([config.step_metric, config.score_metric, final, f"{final}_std", "episodes", "wall_time"])
    )


def keep_run(folder: RunFolder) -> dict:
    """``folder``'s results to keep: its config record and each seed's rows of ``kept_columns``
    (numbers to 9 significant digits: every float32 metric exactly). Refuses a run with an
    unfinished seed."""
    config, wanted = folder.load_config(), kept_columns(folder)
    seeds = {}
    for seed in config.seed_list():
        if not folder.finished((seed,)):
            raise ValueError(
                f"seed {seed} of {folder.path} is at update {folder.checkpoint_update(seed)} of {config.num_updates}: "
                "only a finished run's results are kept"
            )
        rows = folder.read_metrics(seed)
        columns = [c for c in wanted if any(c in row for row in rows)]
        seeds[str(seed)] = {"columns": columns, "rows": [[_short(row.get(c)) for c in columns] for row in rows]}
    return {"config": json.loads(folder.config_path.read_text()), "seeds": seeds}


def _short(value):
    return float(f"{value:.9g}") if isinstance(value, float) else value


def kept_config(kept: dict, source: Path) -> ConfigRecord:
    """The config a kept run trained with (``keep_run``), checked as it is read."""
    return config_from_record(kept["config"], f"the run kept in {source}")


def restore_run(folder: RunFolder, kept: dict, source: Path) -> None:
    """Write a kept run (``keep_run``) into the empty run folder ``folder``: its config, each seed's
    metrics and a note (``RunFolder.kept_path``) that the seed finished where ``source`` kept it."""
    config = kept_config(kept, source)
    folder.prepare(config)
    for seed, saved in kept["seeds"].items():
        folder.append_metrics(int(seed), [dict(zip(saved["columns"], row)) for row in saved["rows"]])
        atomic_write(
            folder.kept_path(int(seed)), json.dumps({"update": config.num_updates, "kept_in": str(source)}).encode()
        )
