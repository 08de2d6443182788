"""Experiments: named, versioned sets of runs that reproduce a paper's figure or table, with the
expected finding checked on the results. ``memrl reproduce NAME`` runs one."""

from __future__ import annotations

import dataclasses
import inspect
import json
import operator
from pathlib import Path
from typing import Any, Callable, Sequence

from memrl.learn.run_config import ConfigRecord
from memrl.registry import Registry

EXPERIMENTS: Registry = Registry("experiment")

_OPS = {">=": operator.ge, "<=": operator.le}


@dataclasses.dataclass(frozen=True)
class Expectation:
    """``run``'s mean final value over seeds (its config's final metric: the return, or the held-out
    accuracy of a supervised run), or with ``evaluated`` the value at that path of the experiment's
    evaluation results, must be ``op`` ``threshold``."""

    run: str
    op: str
    threshold: float
    why: str
    evaluated: tuple[str, ...] = ()

    @property
    def measure(self) -> str:
        return "/".join(self.evaluated) if self.evaluated else "final"

    def value(self, summaries: dict, evaluation: dict | None) -> float | None:
        """The checked value from the runs' summaries and the evaluation results (None if absent)."""
        if not self.evaluated:
            return summaries[self.run]["final_mean"]
        value = evaluation
        for key in self.evaluated:
            if not isinstance(value, dict) or key not in value:
                return None
            value = value[key]
        return value

    def check(self, value: float | None) -> bool:
        return value is not None and _OPS[self.op](value, self.threshold)


@dataclasses.dataclass(frozen=True)
class Experiment:
    name: str
    version: int
    description: str
    reproduces: str
    runs: dict[str, ConfigRecord]
    """run name ("<panel>/<label>") -> config (any learner's)"""
    expectations: Sequence[Expectation] = ()
    optima: dict[str, Sequence[tuple[str, float]]] = dataclasses.field(default_factory=dict)
    """panel -> reference lines (label, return) for the figure"""
    evaluation: Callable[[dict[str, Any], Path], dict] | None = None
    """after training: (run name -> RunFolder, output folder) -> extra results (may write figures)"""

    def with_run_settings(self, **settings) -> "Experiment":
        """The same experiment with these config fields set in every run (e.g. ``total_steps``, the
        budget in env steps per run, or ``num_envs``), all at once so that they are checked together."""
        for field in settings:
            lacking = sorted(name for name, config in self.runs.items() if not hasattr(config, field))
            if lacking:
                raise ValueError(f"experiment {self.name!r} has runs without a {field!r} setting ({', '.join(lacking)})")
        runs = {name: dataclasses.replace(config, **settings) for name, config in self.runs.items()}
        return dataclasses.replace(self, runs=runs)

    def panels(self) -> dict[str, list[str]]:
        panels: dict[str, list[str]] = {}
        for run in self.runs:
            panels.setdefault(run.split("/")[0], []).append(run)
        return panels

    def describe(self) -> dict:
        return {
            "name": self.name, "version": self.version, "description": self.description,
            "reproduces": self.reproduces,
            "runs": {k: json.loads(v.to_json()) for k, v in self.runs.items()},
            "expectations": [dataclasses.asdict(e) for e in self.expectations],
        }


register = EXPERIMENTS.register  # register(name, factory): the factory builds the experiment (with ``preset`` if it has presets)
names = EXPERIMENTS.names


def with_presets() -> list[str]:
    """The experiments whose factory takes a ``preset``."""
    return [name for name in names() if "preset" in inspect.signature(EXPERIMENTS.factory(name)).parameters]


def get(name: str, preset: str | None = None) -> Experiment:
    """The experiment ``name``, with ``preset`` for those that have presets."""
    if preset is None:
        return EXPERIMENTS.make(name)
    if name in names() and name not in with_presets():
        raise ValueError(f"experiment {name!r} has no presets; experiments with presets: {', '.join(with_presets())}")
    return EXPERIMENTS.make(name, preset=preset)


def default_out(name: str) -> Path:
    return Path("runs") / "reproduce" / name
