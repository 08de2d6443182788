"""Experiments: named, versioned sets of runs that reproduce a paper's figure or table, with the
expected finding checked on the results. ``memrl reproduce NAME`` runs one."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from memrl.experiments.seed_statistics import OPS, decide, seed_note, undecided
from memrl.learn.run_config import ConfigRecord
from memrl.registry import Registry

EXPERIMENT_MODULES = (
    "amrl_minecraft",
    "amrl_minecraft_imitation",
    "amrl_tmaze",
    "continuous_control",
    "craftax_control",
    "epn_graph_nav",
    "epn_memory_planning",
    "epn_planning_imitation",
    "epn_rl_control",
    "epn_settings_sweep",
    "htm_ballet",
    "htm_copying_recall",
    "htm_graph_nav",
    "htm_object_permanence",
    "htm_pai",
    "htm_pvm",
    "htm_pvm_imitation",
    "htm_rl_control",
    "htm_word_learning",
    "htm_word_learning_imitation",
    "memory_benchmark",
    "memory_tuning",
    "popgym_suite",
    "r2d2_control",
    "rmc_boxworld",
    "rmc_boxworld_imitation",
    "rmc_language_model",
    "rmc_lte",
    "rmc_nth_farthest",
    "rmc_pacman",
    "tlb_babyai",
    "tlb_copying",
    "tlb_decision",
    "tlb_image",
    "tlb_listops",
    "xminigrid_control",
)
"""the modules that register experiments"""
EXPERIMENTS: Registry = Registry(
    "experiment", modules=tuple(f"memrl.experiments.{module}" for module in EXPERIMENT_MODULES)
)

KINDS = ("reproduction", "imitation analogue", "benchmark")
"""a reproduction tests a paper's claim as the paper trained it; an imitation analogue tests a memory
claim the paper made on an RL task with the task's oracle as a teacher (the agents clone its
actions: ``ImpalaConfig.teacher``), its rows and count apart from the RL row's; a benchmark
compares memrl's memories where no paper did"""
PRESETS = ("cpu", "gpu", "paper")
"""An experiment's presets: ``cpu`` sized for a 2-core CPU, ``paper`` the paper's settings wherever
it states them, ``gpu`` the paper's setup sized for one GPU where the paper's sizes are too slow."""


@dataclasses.dataclass(frozen=True)
class Expectation:
    """``run``'s value must be ``op`` ``threshold`` (a level), or, with ``against``, ``op`` the value
    of the run ``against`` at the same measure (an ordering; ``threshold`` None).

    The value is the mean over seeds of each seed's own value (``seed_statistics``): its final
    metric (the return, or the held-out accuracy of a supervised run) from the runs' summaries, or
    with ``evaluated`` = (table, *keys) the entry at ``evaluation[table][run][*keys]`` of the
    experiment's evaluation results, whose ``per_seed`` list holds each seed's value. It is decided
    by a one-sided test over the seeds (``seed_statistics``); an entry's own standard error over
    episodes or batches (within the seeds) is shown beside it, never used in the test. A value without per-seed values
    (a number pooled over seeds) is checked for its direction only and is never decided. A fraction
    of episodes {"correct", "episodes", "per_seed"} on fewer than ``MIN_EPISODES`` episodes in all is
    not decided either."""

    run: str
    op: str
    threshold: float | None
    why: str
    evaluated: tuple[str, ...] = ()
    against: str = ""
    central: bool = False
    """whether the check states the paper's headline claim for its figure or table (the scoreboard's
    verdict counts the central checks); the others support it"""
    learning: bool = False
    """whether the check says that the model the claim is about left its memoryless or chance level;
    an experiment with such checks is *not trained* (``record.VERDICTS``) where one is not decided"""
    paired: bool = False
    """for an ordering: whether seed i of both runs saw the same data and held-out sets, so that the
    margin is over the seeds' differences (else Welch's, over the two runs' seeds)"""
    parity: float = 0.0
    """for "at least as good as" (``>=``/``<=`` against another run): the non-inferiority bound delta
    > 0, stated before the runs with its reason in ``why``; the difference is tested against -delta"""
    shared_episodes: int = 0
    """where every seed of both runs is evaluated on one held-out set of this many episodes (the
    values fractions of them): the set's sampling noise is counted in the test"""

    def __post_init__(self):
        if self.op not in OPS:
            raise ValueError(f"op must be one of {tuple(OPS)}, got {self.op!r}")
        if (self.threshold is None) == (not self.against):
            raise ValueError(
                "an expectation has either a threshold or a run to compare against (threshold None), not both"
            )
        if self.paired and not self.against:
            raise ValueError("only an ordering (against another run) can be paired over seeds")
        if self.parity and (not self.against or self.op not in (">=", "<=")):
            raise ValueError("a parity bound is for an ordering claimed as at least (>=) or at most (<=) another run's")
        if self.parity < 0 or self.shared_episodes < 0:
            raise ValueError(f"parity and shared_episodes are >= 0, got {self.parity} and {self.shared_episodes}")

    @property
    def measure(self) -> str:
        return "/".join(self.evaluated) if self.evaluated else "final"

    def entry(self, summaries: dict, evaluation: dict | None, run: str | None = None) -> Any:
        """What the expectation reads for ``run`` (default: its own): a number, a fraction entry
        {"correct", "episodes", "per_seed"}, an average entry {"mean", "standard_error", "episodes",
        "per_seed"} (a final value is one), or None if absent."""
        run = run or self.run
        if not self.evaluated:
            summary = summaries[run]
            finals = [seed["final"] for seed in summary.get("seeds", {}).values() if seed["final"] is not None]
            return {
                "mean": summary["final_mean"],
                "standard_error": summary.get("final_standard_error"),
                "episodes": summary.get("final_episodes"),
                "per_seed": finals,
            }
        table, *keys = self.evaluated
        value = (evaluation or {}).get(table, {}).get(run)
        for key in keys:
            if not isinstance(value, dict) or key not in value:
                return None
            value = value[key]
        return value

    def value(self, summaries: dict, evaluation: dict | None, run: str | None = None) -> float | None:
        """The checked value of ``run`` (default: the expectation's), the mean over its seeds (None if absent)."""
        entry = self.entry(summaries, evaluation, run)
        return entry["correct"] if is_fraction(entry) else entry["mean"] if is_average(entry) else entry

    def bound(self, summaries: dict, evaluation: dict | None) -> float | None:
        """The threshold, or the value of the run ``against``."""
        return self.threshold if not self.against else self.value(summaries, evaluation, self.against)

    def outcome(self, summaries: dict, evaluation: dict | None) -> dict:
        """The check on the results (``seed_statistics.decide``): {"value", "threshold" (the bound),
        "margin", "seeds", "test", "passed", "decided", "reversed", "per_seed", "against_per_seed",
        "note"}, the note naming what kept a check undecided and the noise within the seeds."""
        runs = [self.run] + ([self.against] if self.against else [])
        entries = [self.entry(summaries, evaluation, run) for run in runs]
        seeds = [per_seed(entry) for entry in entries]
        within = "; ".join(f"{run}: {within_seeds(entry)}" for run, entry in zip(runs, entries) if within_seeds(entry))
        too_few = [e["episodes"] for e in entries if is_fraction(e) and e["episodes"] < MIN_EPISODES]
        extra = {}
        if None in seeds:
            result, note = (
                undecided(self.op, self.value(summaries, evaluation), self.bound(summaries, evaluation)),
                "no per-seed values: not decided",
            )
        elif too_few:
            extra["undecided_because"] = f"on {too_few[0]} episodes: too few (at least {MIN_EPISODES} needed)"
            result, note = (
                undecided(self.op, self.value(summaries, evaluation), self.bound(summaries, evaluation)),
                extra["undecided_because"],
            )
        else:
            result = decide(
                self.op,
                seeds[0],
                self.threshold,
                seeds[1] if self.against else None,
                self.paired,
                self.parity,
                self.shared_episodes,
            )
            note = seed_note(result)
        note += f" (within seeds: {within})" if within else ""
        return {
            **result,
            "per_seed": seeds[0],
            "against_per_seed": seeds[1] if self.against else None,
            "note": note,
            **extra,
        }


MIN_EPISODES = 16
"""the fewest episodes, over all seeds, a fraction of episodes is decided on"""


def is_fraction(entry: Any) -> bool:
    """Whether an evaluated entry is a fraction of episodes {"correct", "episodes", ...}."""
    return isinstance(entry, dict) and {"correct", "episodes"} <= entry.keys()


def is_average(entry: Any) -> bool:
    """Whether an entry is a mean with its standard error over episodes or batches {"mean",
    "standard_error", "episodes", ...} (the standard error None where unknown)."""
    return isinstance(entry, dict) and {"mean", "standard_error", "episodes"} <= entry.keys()


def per_seed(entry: Any) -> list[float] | None:
    """The per-seed values of an entry (None where it has none: a pooled number, or absent)."""
    values = entry.get("per_seed") if isinstance(entry, dict) else None
    return [float(v) for v in values] if values else None


def within_seeds(entry: Any) -> str:
    """ "±0.012 over 3840 episodes": an entry's standard error within its seeds, "" where it has none."""
    if is_average(entry) and entry["standard_error"] is not None:
        return f"±{entry['standard_error']:.3f} over {entry['episodes']} episodes"
    return f"{entry['episodes']} episodes" if is_fraction(entry) else ""


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
    settings: Sequence[PaperSetting] = ()
    """the settings compared with the paper's in the experiment's settings table"""
    finding: str = ""
    """the paper's finding that the central checks state, in about a dozen words (the scoreboard's)"""
    paper_steps: int | None = None
    """the paper's budget per run, in the runs' step unit (None where the paper does not state it)"""
    analogue: str = ""
    """for an analogue that can only test another property than the paper's claim: that property
    ("reach beyond the decision transformer's context"); its verdict is *analogue*, outside the reproduced"""
    part_of: str = ""
    """the benchmark whose runs these are (the scoreboard names it with that one, its runs not counted twice)"""
    kind: str = "reproduction"
    """"reproduction" of a paper's finding, or "benchmark": a measurement of memrl's memories that no
    paper's finding is compared with, a comparison no paper made or a positive control (its own table
    on the scoreboard, outside the papers' counts)"""
    changes: str = ""
    """for a version that changes the setup after an earlier version failed or reversed: what
    changed and why (its record carries it; required there)"""
    parts: dict[str, tuple[str, ...]] = dataclasses.field(default_factory=dict)
    """part name -> panels: named pieces of the experiment that each fit one sitting
    (``memrl reproduce NAME --runs PART``); every panel in at most one part"""
    subset: bool = False
    """some of the experiment's runs only (``with_runs``): their record is not the experiment's"""
    keeps_results: bool = False
    """with ``--record-dir``, each finished run's results (metrics, not parameters) are kept there
    and restored in a later sitting (``kept_parts.py``), so that parts trained in different sittings
    make one record"""
    evaluation_reads_agents: bool = False
    """the evaluation acts with the runs' final parameters (frozen agents), and gives tables keyed by
    run ({table: {run: entry}}): an experiment that ``keeps_results`` then evaluates each run as it
    is kept and keeps its entries beside its metrics (a restored run has no parameters)"""

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"an experiment's kind must be one of {KINDS}, got {self.kind!r}")
        parted = [panel for chosen in self.parts.values() for panel in chosen]
        if len(parted) != len(set(parted)) or not set(parted) <= set(self.panels()):
            raise ValueError(f"experiment {self.name!r}: its parts must name each of its panels at most once")
        if self.evaluation_reads_agents and self.evaluation is None:
            raise ValueError(
                f"experiment {self.name!r} reads its agents in an evaluation (evaluation_reads_agents) it lacks"
            )

    def with_run_settings(self, **settings) -> Experiment:
        """The same experiment with these config fields set in every run (e.g. ``total_steps``, the
        budget in env steps per run, or ``num_envs``), all at once so that they are checked together;
        a setting of a component is named after it, ``env.grid_size`` (its registry remakes it
        with that setting over its own, ``changed``)."""
        fields = {field.split(".")[0] for field in settings}
        for field in fields:
            lacking = sorted(name for name, config in self.runs.items() if not hasattr(config, field))
            if lacking:
                raise ValueError(
                    f"experiment {self.name!r} has runs without a {field!r} setting ({', '.join(lacking)})"
                )

        def changed(config):
            components = {}
            for field in sorted(f for f in fields if any(k.startswith(f + ".") for k in settings)):
                made = getattr(config, field)
                own = {k.split(".", 1)[1]: v for k, v in settings.items() if k.startswith(field + ".")}
                components[field] = type(config).registry_of(field, made).changed(made, **own)
            return dataclasses.replace(config, **{k: v for k, v in settings.items() if "." not in k}, **components)

        return dataclasses.replace(self, runs={name: changed(config) for name, config in self.runs.items()})

    def with_runs(self, names: Sequence[str]) -> Experiment:
        """The same experiment with only the runs ``names`` name (a run "<panel>/<label>", a panel:
        all its runs, or one of ``parts``: all its panels' runs) and the checks between them; their
        run folders are the full experiment's, so the rest can run later in the same output folder."""
        panels = self.panels()
        named = {**{run: [run] for run in self.runs}, **panels}
        named |= {part: [run for panel in chosen for run in panels[panel]] for part, chosen in self.parts.items()}
        unknown = [name for name in names if name not in named]
        if unknown or not names:
            listed = f"runs {', '.join(self.runs)}" if len(self.runs) <= 20 else f"{len(self.runs)} runs"
            parts = f"; parts {', '.join(self.parts)}" if self.parts else ""
            raise ValueError(
                f"experiment {self.name!r} has {listed} (<panel>/<label>); panels {', '.join(panels)}{parts}; "
                f"got {', '.join(names) or 'none'}"
            )
        runs = {run for name in names for run in named[name]}
        kept = [e for e in self.expectations if e.run in runs and (not e.against or e.against in runs)]
        whole = {panel for panel, members in panels.items() if set(members) <= runs}
        return dataclasses.replace(
            self,
            runs={run: self.runs[run] for run in self.runs if run in runs},
            expectations=tuple(kept),
            parts={part: chosen for part, chosen in self.parts.items() if set(chosen) <= whole},
            subset=self.subset or runs != set(self.runs),
        )

    def panels(self) -> dict[str, list[str]]:
        panels: dict[str, list[str]] = {}
        for run in self.runs:
            panels.setdefault(run.split("/")[0], []).append(run)
        return panels

    def describe(self) -> dict:
        return {
            "name": self.name,
            "version": self.version,
            "preset": self.preset,
            "description": self.description,
            "reproduces": self.reproduces,
            "runs": {k: json.loads(v.to_json()) for k, v in self.runs.items()},
            "expectations": [dataclasses.asdict(e) for e in self.expectations],
        }


@dataclasses.dataclass(frozen=True)
class PaperSetting:
    """One row of an experiment's settings table: a setting, the paper's value (with where it is
    stated), the config field that holds memrl's value in each preset (``core.k`` for a core
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


def register(
    name: str, build: Callable[..., Experiment], presets: Sequence[str] = (), optional_cores: Sequence[str] = ()
) -> None:
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
            raise ValueError(
                f"experiment {name!r} has no presets; experiments with presets: {', '.join(with_presets())}"
            )
        return entry.build(**extra)
    preset = chosen_preset(preset, entry.presets)
    return dataclasses.replace(entry.build(preset, **extra), preset=preset, presets=entry.presets)


def default_out(name: str) -> Path:
    return Path("runs") / "reproduce" / name
