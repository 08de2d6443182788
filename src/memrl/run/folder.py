"""Run folders: the resolved config, per-seed metrics (JSONL) and checkpoints (msgpack, no pickle).

    RUN/config.json
    RUN/seed_<s>/metrics.jsonl       one line per update
    RUN/seed_<s>/checkpoint.msgpack  the RunnerState after the last finished chunk
    RUN/seed_<s>/kept.json           instead of a checkpoint, in a run restored from kept results
    RUN/metrics.csv, RUN/summary.json, RUN/curves.png   written when the run finishes

The metrics are the learner's (its config names the step, score and final metrics).

Checkpoints are written atomically, and a resumed run first cuts each metrics file back to its
checkpoint, so a run killed at any moment continues without losing or repeating an update.
"""

from __future__ import annotations

import csv
import dataclasses
import functools
import json
import math
import os
from pathlib import Path

import jax
import numpy as np
from flax import serialization

from memrl.learn.run_config import ConfigRecord
from memrl.run.config_upgrade import upgrade


class ConfigMismatch(ValueError):
    """A run folder holds a run of another config."""

    @classmethod
    def between(cls, path: Path, what: str, there: dict, asked: dict) -> ConfigMismatch:
        """The error for ``path`` holding ``what`` whose settings ``there`` differ from ``asked``."""
        return cls(
            f"{path} holds {what} ({differences(there, asked)}); choose another --out or the same settings to resume"
        )


def atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so that a kill leaves either the old file or the new one."""
    tmp = path.with_suffix(path.suffix + ".tmp")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, path)
    except BaseException:  # a full disk or a kill: no partial file left behind
        tmp.unlink(missing_ok=True)
        raise


def differences(there: dict, asked: dict) -> str:
    """'name: value there, value asked' for every setting in which ``there`` and ``asked`` differ."""
    names = dict.fromkeys([*there, *asked])
    return "; ".join(
        f"{k}: {there.get(k)!r} there, {asked.get(k)!r} asked" for k in names if there.get(k) != asked.get(k)
    )


def restore_msgpack(path: Path, template):
    """The pytree saved at ``path`` with flax msgpack, checked to have ``template``'s structure and
    shapes. Top-level fields that the checkpoint holds empty and the template no longer has are
    dropped (IMPALA's ``behaviour_params``, None without a policy lag, left the shared runner state),
    and those the template holds empty and the checkpoint predates are empty (a supervised run's
    ``task_state``, from 2026-11-25)."""
    try:
        saved = serialization.msgpack_restore(path.read_bytes())
        if isinstance(saved, dict):
            fields = serialization.to_state_dict(template)
            saved = {k: v for k, v in saved.items() if v is not None or k in fields}
            saved |= {k: None for k, v in fields.items() if v is None and k not in saved}
        restored = serialization.from_state_dict(template, saved)
    except (ValueError, KeyError, TypeError) as err:  # a cut or foreign file: msgpack raises ValueErrors
        raise ConfigMismatch(f"checkpoint {path} is unreadable or does not fit this run's config: {err!r}") from None
    shapes = lambda tree: jax.tree.map(lambda x: (np.shape(x), np.asarray(x).dtype), tree)
    if shapes(restored) != shapes(template):
        raise ConfigMismatch(f"checkpoint {path} does not fit this run's config: its arrays have other shapes")
    return restored


def resume_training(checkpoint_dir: Path, settings: dict, initial, what: str):
    """The training state saved in ``checkpoint_dir/checkpoint.msgpack`` by ``what`` (e.g. "a
    planner-distance run") with the same ``settings``, else ``initial`` (after recording
    ``settings`` in ``checkpoint_dir/settings.json``). Other settings there are refused."""
    settings_path, checkpoint_path = checkpoint_dir / "settings.json", checkpoint_dir / "checkpoint.msgpack"
    if settings_path.exists():
        existing = json.loads(settings_path.read_text())
        if existing != settings:
            raise ConfigMismatch.between(checkpoint_dir, f"{what} with other settings", existing, settings)
        if checkpoint_path.exists():
            return restore_msgpack(checkpoint_path, initial)
    checkpoint_dir.mkdir(parents=True, exist_ok=True)
    atomic_write(settings_path, json.dumps(settings, indent=2).encode())
    return initial


def read_config(path: Path) -> ConfigRecord:
    """The config saved in ``path``: a run folder's ``config.json``, or the run folder itself;
    checked as it is constructed, once per version of the file in a process (configs are frozen:
    the launcher, its progress bar and the curves read one folder's several times)."""
    path = Path(path)
    file = path / "config.json" if path.is_dir() else path
    if not file.exists():
        raise FileNotFoundError(f"{path} is neither a run folder nor a run's config.json")
    stat = file.stat()
    return read_config_file(file.resolve(), stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=256)
def read_config_file(file: Path, mtime_ns: int, size: int) -> ConfigRecord:
    """``read_config`` of ``file`` as it was at ``mtime_ns`` with ``size`` bytes."""
    try:
        record = json.loads(file.read_text())
    except ValueError as err:  # JSONDecodeError is a ValueError
        raise ValueError(f"{file} {NOT_A_CONFIG}: {err!r}") from None
    return config_from_record(record, str(file))


NOT_A_CONFIG = "is not a readable memrl run config (cut short, edited, or from another version)"


def config_from_record(record, where: str) -> ConfigRecord:
    """The config of a config.json record ``{"learner": ..., "config": {...}}`` read from ``where``,
    in any format memrl has written (``config_upgrade.upgrade``)."""
    from memrl.learn.learners import LEARNERS

    try:
        config_class = LEARNERS.factory(record["learner"]).config_class
        return config_class.from_dict(upgrade(config_class, record["config"]))
    except (ValueError, KeyError, TypeError) as err:
        raise ValueError(f"{where} {NOT_A_CONFIG}: {err!r}") from None


def is_metric_value(value) -> bool:
    """A number, or None where an update did not measure the metric."""
    return value is None or (isinstance(value, (int, float)) and not isinstance(value, bool))


@dataclasses.dataclass(frozen=True)
class RunFolder:
    path: Path

    @property
    def config_path(self) -> Path:
        return self.path / "config.json"

    def seed_dir(self, seed: int) -> Path:
        return self.path / f"seed_{seed}"

    def checkpoint_path(self, seed: int) -> Path:
        return self.seed_dir(seed) / "checkpoint.msgpack"

    def metrics_path(self, seed: int) -> Path:
        return self.seed_dir(seed) / "metrics.jsonl"

    def load_config(self) -> ConfigRecord:
        if not self.config_path.exists():
            raise FileNotFoundError(f"{self.path} is not a run folder (no config.json)")
        return read_config(self.config_path)

    def prepare(self, config: ConfigRecord) -> None:
        """Create the folder for ``config``, or check that an existing run has the same config."""
        if self.config_path.exists():
            existing = self.load_config()
            if existing.learner != config.learner:
                raise ConfigMismatch(
                    f"{self.path} holds a {existing.learner} run, not a {config.learner} run; choose another --out"
                )
            if existing != config:
                raise ConfigMismatch.between(self.path, "a run with another config", existing.record(), config.record())
            return
        self.path.mkdir(parents=True, exist_ok=True)
        record = {"learner": config.learner, "config": config.record()}
        atomic_write(self.config_path, json.dumps(record, indent=2, sort_keys=True).encode())

    def save_checkpoint(self, seed: int, runner) -> None:
        self.seed_dir(seed).mkdir(parents=True, exist_ok=True)
        atomic_write(self.checkpoint_path(seed), serialization.to_bytes(runner))

    def kept_params_path(self, seed: int, update: int) -> Path:
        """Where ``seed``'s parameters after ``update`` updates are kept (``ConfigRecord.keep_every``)."""
        return self.seed_dir(seed) / "kept_params" / f"update_{update:09d}.msgpack"

    def keep_params(self, seed: int, update: int, params) -> None:
        path = self.kept_params_path(seed, update)
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, serialization.to_bytes(params))

    def kept_params(self, seed: int, template) -> dict[int, object]:
        """``seed``'s kept parameters by update (shaped like ``template``, a runner's params), in
        update order; empty where the run keeps none."""
        paths = sorted(self.kept_params_path(seed, 0).parent.glob("update_*.msgpack"))
        return {int(path.stem.removeprefix("update_")): restore_msgpack(path, template) for path in paths}

    def load_checkpoint(self, seed: int, template):
        """The saved RunnerState of ``seed`` (shaped like ``template``), or None if there is none.
        Refuses a seed restored from kept results: they hold no parameters."""
        path = self.checkpoint_path(seed)
        if not path.exists() and self.kept_path(seed).exists():
            kept_in = json.loads(self.kept_path(seed).read_text())["kept_in"]
            raise ConfigMismatch(
                f"seed {seed} of {self.path} holds the results kept in {kept_in} (its metrics), not its parameters: "
                "train the run again in another folder to use its agent"
            )
        return restore_msgpack(path, template) if path.exists() else None

    def finished(self, seeds=None) -> bool:
        """Whether every one of ``seeds`` (default: all the run's) has trained all its updates
        (checkpointed, or restored from kept results)."""
        config = self.load_config()
        return all(self.checkpoint_update(seed) >= config.num_updates for seed in seeds or config.seed_list())

    def kept_path(self, seed: int) -> Path:
        """Where a seed restored from kept results (``run/kept_results.py``) notes its finished update."""
        return self.seed_dir(seed) / "kept.json"

    def checkpoint_update(self, seed: int) -> int:
        """The updates ``seed``'s checkpoint holds (0 without one; a seed restored from kept results:
        the update it finished at), read without building its model."""
        path = self.checkpoint_path(seed)
        if not path.exists():
            kept = self.kept_path(seed)
            return int(json.loads(kept.read_text())["update"]) if kept.exists() else 0
        try:
            return int(serialization.msgpack_restore(path.read_bytes())["update"])
        except (ValueError, KeyError, TypeError) as err:  # a cut or foreign file: msgpack raises ValueErrors
            raise ConfigMismatch(
                f"checkpoint {path} is unreadable ({err!r}): remove it to train seed {seed} from the start"
            ) from None

    def append_metrics(self, seed: int, rows: list[dict]) -> None:
        self.seed_dir(seed).mkdir(parents=True, exist_ok=True)
        with self.metrics_path(seed).open("a") as f:
            for row in rows:
                f.write(json.dumps(row) + "\n")
            f.flush()
            os.fsync(f.fileno())

    def truncate_metrics(self, seed: int, updates_done: int) -> None:
        """Keep only the rows of updates that the checkpoint includes."""
        rows = self.read_metrics(seed)[:updates_done]
        path = self.metrics_path(seed)
        if path.exists():
            atomic_write(path, "".join(json.dumps(r) + "\n" for r in rows).encode())

    def read_metrics(self, seed: int) -> list[dict]:
        path = self.metrics_path(seed)
        if not path.exists():
            return []
        text = path.read_text(errors="replace")
        lines = text.split("\n")[:-1]  # a last line without its newline was cut by a kill mid-write: not a row
        rows = []
        for number, line in enumerate(lines, 1):
            try:
                row = json.loads(line)
            except json.JSONDecodeError as err:
                row, why = None, f"not JSON: {err.msg}"
            else:
                why = "not an object of metrics"
                if isinstance(row, dict) and (named := [k for k, v in row.items() if not is_metric_value(v)]):
                    row, why = None, f"{named[0]!r} is {row[named[0]]!r}, not a number"
            if not isinstance(row, dict):
                raise ValueError(
                    f"{path} line {number} is not a metrics row ({why}): {line[:80]!r}; the file was edited or "
                    "is not memrl's: remove that line (or the run folder) and run again"
                )
            rows.append(row)
        return rows

    def seeds(self) -> list[int]:
        return self.load_config().seed_list()

    def write_summary(self, config: ConfigRecord, final_fraction: float = 0.1) -> dict:
        """metrics.csv for all seeds and summary.json with each seed's final value: the mean of
        ``config.final_metric`` over the last ``final_fraction`` of the updates that measured it.

        Where those updates also recorded the spread of the episodes they averaged (``<metric>_std``
        and ``episodes``, as actor-critic learners do), the final value carries its standard error
        over those episodes, sqrt(sum_u std_u^2 / (n_u - 1)) / U over the U updates (None where an
        update averaged fewer than two episodes), and the number of episodes; the summary's
        ``final_standard_error`` is that of the mean over seeds."""
        per_seed = {}
        rows_all = []
        for seed in config.seed_list():
            rows = self.read_metrics(seed)
            rows_all += [{"seed": seed, **r} for r in rows]
            measured = measured_rows(rows, config.final_metric)
            tail = measured[-max(1, int(len(measured) * final_fraction)) :] if measured else []
            per_seed[seed] = {
                "final": float(np.mean([r[config.final_metric] for r in tail])) if tail else None,
                "updates": len(rows),
                **episode_noise(tail, config.final_metric),
            }
        if rows_all:
            with (self.path / "metrics.csv").open("w", newline="") as f:
                writer = csv.DictWriter(f, fieldnames=list(dict.fromkeys(k for r in rows_all for k in r)))
                writer.writeheader()
                writer.writerows(rows_all)
        finals = [v["final"] for v in per_seed.values() if v["final"] is not None]
        summary = {
            "env": config.trained_on,
            "core": config.core_name,
            "metric": config.final_metric,
            "step_metric": config.step_metric,
            "steps_per_seed": config.num_updates * config.steps_per_update,
            "final_mean": float(np.mean(finals)) if finals else None,
            "final_std": float(np.std(finals)) if finals else None,
            **{f"final_{k}": v for k, v in mean_over_seeds_noise(list(per_seed.values())).items()},
            "seeds": per_seed,
        }
        atomic_write(self.path / "summary.json", json.dumps(summary, indent=2).encode())
        return summary


def measured_rows(rows: list[dict], metric: str) -> list[dict]:
    """The metrics rows whose update measured ``metric`` (not None or NaN)."""
    return [r for r in rows if r.get(metric) is not None and not math.isnan(r[metric])]


def episode_noise(tail: list[dict], metric: str) -> dict:
    """{"episodes", "standard_error"} of the mean of ``metric`` over the updates ``tail``, from each
    update's ``<metric>_std`` and ``episodes`` (both None where an update lacks them, the standard
    error None where an update averaged fewer than two episodes)."""
    spreads = [(r.get(f"{metric}_std"), r.get("episodes")) for r in tail]
    if not tail or any(std is None or n is None for std, n in spreads):
        return {"episodes": None, "standard_error": None}
    episodes = int(sum(n for _, n in spreads))
    if any(n < 2 for _, n in spreads):
        return {"episodes": episodes, "standard_error": None}
    return {"episodes": episodes, "standard_error": math.sqrt(sum(std**2 / (n - 1) for std, n in spreads)) / len(tail)}


def mean_over_seeds_noise(seeds: list[dict]) -> dict:
    """{"episodes", "standard_error"} of the mean over seeds of values with each seed's episode
    noise (``episode_noise``; None unless every seed has it)."""
    errors = [s["standard_error"] for s in seeds]
    episodes = [s["episodes"] for s in seeds]
    return {
        "episodes": None if not episodes or None in episodes else sum(episodes),
        "standard_error": None if not errors or None in errors else math.sqrt(sum(e**2 for e in errors)) / len(errors),
    }
