"""Experiments: named, versioned sets of runs that reproduce a paper's figure or table, with the
expected finding checked on the results. ``memrl reproduce NAME`` runs one."""

from __future__ import annotations

import dataclasses
import json
import math
import operator
from pathlib import Path
from typing import Any, Callable, Sequence

from memrl.learn.run_config import ConfigRecord
from memrl.registry import Registry

EXPERIMENTS: Registry = Registry("experiment")

_OPS = {">=": operator.ge, "<=": operator.le, ">": operator.gt, "<": operator.lt}

PRESETS = ("cpu", "gpu", "paper")
"""An experiment's presets: ``cpu`` sized for a 2-core CPU, ``paper`` the paper's settings wherever
it states them, ``gpu`` the paper's setup sized for one GPU where the paper's sizes are too slow."""


@dataclasses.dataclass(frozen=True)
class Expectation:
    """``run``'s value must be ``op`` ``threshold``, or, with ``against``, ``op`` the value of the run
    ``against`` at the same measure (``threshold`` None).

    The value is the run's mean final value over seeds (its config's final metric: the return, or
    the held-out accuracy of a supervised run), or with ``evaluated`` = (table, *keys) the value at
    ``evaluation[table][run][*keys]`` of the experiment's evaluation results.

    Where the values are averages over episodes, a check must hold beyond the noise of those
    episodes: by ``STANDARD_ERRORS`` standard errors of the value (of the difference, with
    ``against``): ">" means above by that margin, ">=" not below by more than it ("<", "<="
    likewise). A fraction of episodes (an entry {"correct", "episodes"}, as
    ``fraction_correct_by_level`` writes) has its binomial standard error, with the fraction taken as
    (correct + 1) / (episodes + 2) so that 0/n and n/n have one, and needs ``MIN_EPISODES``
    episodes of each run; a final return has the standard error its run's summary carries
    (``final_standard_error``, over the episodes of its final updates), and an evaluated average
    entry {"mean", "standard_error", "episodes"} its own. A value without one (a supervised run's
    accuracy, a run recorded before returns carried their spread, an evaluated number) is checked
    without a margin, and the note says so."""

    run: str
    op: str
    threshold: float | None
    why: str
    evaluated: tuple[str, ...] = ()
    against: str = ""
    central: bool = False
    """whether the check states the paper's headline claim for its figure or table (the scoreboard's
    verdict counts the central checks); the others support it"""

    def __post_init__(self):
        if self.op not in _OPS:
            raise ValueError(f"op must be one of {tuple(_OPS)}, got {self.op!r}")
        if (self.threshold is None) == (not self.against):
            raise ValueError("an expectation has either a threshold or a run to compare against (threshold None), not both")

    @property
    def measure(self) -> str:
        return "/".join(self.evaluated) if self.evaluated else "final"

    def entry(self, summaries: dict, evaluation: dict | None, run: str | None = None) -> Any:
        """What the expectation reads for ``run`` (default: its own): a number, a fraction entry
        {"correct", "episodes"}, an average entry {"mean", "standard_error", "episodes"} (a final
        value is one), or None if absent."""
        run = run or self.run
        if not self.evaluated:
            summary = summaries[run]
            return {"mean": summary["final_mean"], "standard_error": summary.get("final_standard_error"), "episodes": summary.get("final_episodes")}
        table, *keys = self.evaluated
        value = (evaluation or {}).get(table, {}).get(run)
        for key in keys:
            if not isinstance(value, dict) or key not in value:
                return None
            value = value[key]
        return value

    def value(self, summaries: dict, evaluation: dict | None, run: str | None = None) -> float | None:
        """The checked value of ``run`` (default: the expectation's) from the runs' summaries and
        the evaluation results (None if absent): a fraction entry's fraction, an average's mean."""
        entry = self.entry(summaries, evaluation, run)
        return entry["correct"] if is_fraction(entry) else entry["mean"] if is_average(entry) else entry

    def bound(self, summaries: dict, evaluation: dict | None) -> float | None:
        """The threshold, or the value of the run ``against``."""
        return self.threshold if not self.against else self.value(summaries, evaluation, self.against)

    def check(self, value: float | None, bound: float | None = None) -> bool:
        bound = self.threshold if bound is None else bound
        return value is not None and bound is not None and _OPS[self.op](value, bound)

    def outcome(self, summaries: dict, evaluation: dict | None) -> dict:
        """{"value", "threshold" (the bound), "margin", "passed", "reversed", "note"}: the check on the
        results, beyond the noise of the episodes behind the values (see the class). ``margin`` is
        None where the values carry no standard error; ``reversed`` says that a comparison failed
        with the opposite ordering holding beyond the margin (never without a margin)."""
        value, bound = self.value(summaries, evaluation), self.bound(summaries, evaluation)
        result = lambda passed, note="", margin=None, reversed=False: {  # noqa: E731
            "value": value, "threshold": bound, "margin": margin, "passed": passed, "reversed": reversed, "note": note,
        }
        entries = [self.entry(summaries, evaluation, run) for run in [self.run] + ([self.against] if self.against else [])]
        if value is None or bound is None:
            return result(False)
        counts = " and ".join(str(e["episodes"]) for e in entries if is_fraction(e) or is_average(e))
        if any(is_fraction(e) and e["episodes"] < MIN_EPISODES for e in entries):
            return result(False, f"on {counts} episodes: too few (at least {MIN_EPISODES} needed)")
        errors = [standard_error(e) for e in entries]
        if None in errors:
            return result(self.check(value, bound), "no margin: no standard error of the value")
        margin = STANDARD_ERRORS * math.sqrt(sum(e**2 for e in errors))
        passed = self.check(value, bound + {">": margin, ">=": -margin, "<": -margin, "<=": margin}[self.op])
        above = self.op in (">", ">=")
        reversed = bool(self.against) and not passed and (value < bound - margin if above else value > bound + margin)
        return result(passed, f"on {counts} episodes, by a margin of {STANDARD_ERRORS} standard errors ({margin:.3f})", margin, reversed)


MIN_EPISODES = 16
"""the fewest episodes a fraction of episodes is checked on"""
STANDARD_ERRORS = 2.0
"""the margin, in standard errors of the value (or of the difference), by which a check must hold"""


def is_fraction(entry: Any) -> bool:
    """Whether an evaluated entry is a fraction of episodes {"correct", "episodes"}."""
    return isinstance(entry, dict) and {"correct", "episodes"} <= entry.keys()


def is_average(entry: Any) -> bool:
    """Whether an entry is a mean over episodes with its standard error {"mean", "standard_error",
    "episodes"} (the standard error None where unknown)."""
    return isinstance(entry, dict) and {"mean", "standard_error", "episodes"} <= entry.keys()


def standard_error(entry: Any) -> float | None:
    """The standard error of a fraction or average entry over its episodes (None for anything else)."""
    if is_fraction(entry):
        return math.sqrt(fraction_variance(entry))
    return entry["standard_error"] if is_average(entry) else None


def fraction_variance(entry: dict) -> float:
    """The binomial variance of a fraction of episodes, p (1 - p) / n with p = (correct·n + 1) / (n + 2)."""
    n = entry["episodes"]
    p = (entry["correct"] * n + 1) / (n + 2)
    return p * (1 - p) / n


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
    preset: str = ""
    """the preset these runs are (empty for an experiment without presets)"""
    presets: tuple[str, ...] = ()
    """every preset of the experiment (see ``PRESETS``)"""
    settings: Sequence["PaperSetting"] = ()
    """the settings compared with the paper's in the experiment's settings table"""
    finding: str = ""
    """the paper's finding that the central checks state, in about a dozen words (the scoreboard's)"""
    paper_steps: int | None = None
    """the paper's budget per run, in the runs' step unit (None where the paper does not state it)"""

    def with_run_settings(self, **settings) -> "Experiment":
        """The same experiment with these config fields set in every run (e.g. ``total_steps``, the
        budget in env steps per run, or ``num_envs``), all at once so that they are checked together."""
        for field in settings:
            lacking = sorted(name for name, config in self.runs.items() if not hasattr(config, field))
            if lacking:
                raise ValueError(f"experiment {self.name!r} has runs without a {field!r} setting ({', '.join(lacking)})")
        runs = {name: dataclasses.replace(config, **settings).validate() for name, config in self.runs.items()}
        return dataclasses.replace(self, runs=runs)

    def with_runs(self, runs: Sequence[str]) -> "Experiment":
        """The same experiment with only ``runs`` (run names "<panel>/<label>") and the checks
        between them; their run folders are the full experiment's, so the rest can run later in
        the same output folder."""
        unknown = [run for run in runs if run not in self.runs]
        if unknown or not runs:
            raise ValueError(f"experiment {self.name!r} has runs {', '.join(self.runs)}; got {', '.join(runs) or 'none'}")
        kept = [e for e in self.expectations if e.run in runs and (not e.against or e.against in runs)]
        return dataclasses.replace(self, runs={run: self.runs[run] for run in self.runs if run in runs}, expectations=tuple(kept))

    def panels(self) -> dict[str, list[str]]:
        panels: dict[str, list[str]] = {}
        for run in self.runs:
            panels.setdefault(run.split("/")[0], []).append(run)
        return panels

    def describe(self) -> dict:
        return {
            "name": self.name, "version": self.version, "preset": self.preset, "description": self.description,
            "reproduces": self.reproduces,
            "runs": {k: json.loads(v.to_json()) for k, v in self.runs.items()},
            "expectations": [dataclasses.asdict(e) for e in self.expectations],
        }


@dataclasses.dataclass(frozen=True)
class PaperSetting:
    """One row of an experiment's settings table: a setting, the paper's value (with where it is
    stated), the config field that holds memrl's value in each preset (``core_args.k`` for a core
    setting; runs without the field are skipped) or, for what no config sets, memrl's ``fixed``
    value, and why memrl's presets differ from the paper."""

    setting: str
    paper: str
    field: str
    why: str = ""
    fixed: str = ""


@dataclasses.dataclass(frozen=True)
class Registration:
    """How an experiment is built: ``build(preset)`` for each of ``presets`` (``build()`` for an
    experiment without presets), with ``add_cores`` passed on where the experiment offers
    ``optional_cores`` (its runs on more baselines)."""

    build: Callable[..., Experiment]
    presets: tuple[str, ...] = ()
    optional_cores: tuple[str, ...] = ()


def register(name: str, build: Callable[..., Experiment], presets: Sequence[str] = (), optional_cores: Sequence[str] = ()) -> None:
    """Register the experiment ``name``: ``build(preset)`` gives it for each preset of ``presets``
    (see ``PRESETS``; none: ``build()``), and ``build(preset, add_cores)`` with some of
    ``optional_cores``. ``get`` checks the preset and the cores before it builds."""
    unknown = [preset for preset in presets if preset not in PRESETS]
    if unknown:
        raise ValueError(f"experiment {name!r}: presets must be among {PRESETS}, got {unknown}")
    EXPERIMENTS.register(name, Registration(build, tuple(presets), tuple(optional_cores)))


names = EXPERIMENTS.names


def registration(name: str) -> Registration:
    return EXPERIMENTS.factory(name)


def with_presets() -> list[str]:
    """The experiments that have presets."""
    return [name for name in names() if registration(name).presets]


def chosen_preset(preset: str | None, presets: tuple[str, ...]) -> str:
    """``preset`` (checked against ``presets``), or without one the current JAX backend's: "cpu" on
    a CPU; on an accelerator "gpu" where the experiment has it, else "paper"."""
    import jax

    if preset is None:
        preset = "cpu" if jax.default_backend() == "cpu" else ("gpu" if "gpu" in presets else "paper")
    if preset not in presets:
        raise ValueError(f"preset must be one of {presets}, got {preset!r}")
    return preset


def takes_cores() -> list[str]:
    """The experiments that can add cores (``add_cores``)."""
    return [name for name in names() if registration(name).optional_cores]


def get(name: str, preset: str | None = None, add_cores: tuple[str, ...] = ()) -> Experiment:
    """The experiment ``name``, with ``preset`` for those that have presets (default: the backend's)
    and the optional cores ``add_cores`` for those that offer them."""
    entry = registration(name)
    extra = {}
    if add_cores:
        if not entry.optional_cores:
            raise ValueError(f"experiment {name!r} adds no cores; experiments that do: {', '.join(takes_cores())}")
        unknown = [core for core in add_cores if core not in entry.optional_cores]
        if unknown:
            raise ValueError(f"{name} can add the cores {', '.join(entry.optional_cores)}, not {', '.join(unknown)}")
        extra["add_cores"] = tuple(dict.fromkeys(add_cores))
    if not entry.presets:
        if preset is not None:
            raise ValueError(f"experiment {name!r} has no presets; experiments with presets: {', '.join(with_presets())}")
        return entry.build(**extra)
    preset = chosen_preset(preset, entry.presets)
    return dataclasses.replace(entry.build(preset, **extra), preset=preset, presets=entry.presets)


def default_out(name: str) -> Path:
    return Path("runs") / "reproduce" / name
