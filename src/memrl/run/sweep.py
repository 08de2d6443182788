"""Hyperparameter sweeps on Ray Tune (``memrl sweep SPEC.yaml``; ``pip install "memrl[sweep]"``).

A spec names a learner, the config fields every trial shares, and a search space over any config
field (``core.hidden`` sets a setting of the core, ``task.gap`` of the task, ``env.maze_length`` of the environment);
``config: RUN/config.json`` starts the shared fields (and the learner) from a saved run, as
``memrl train --config`` does::

    learner: ppo                     # ppo | impala | supervised
    base: {env: tmaze/T-LN, core: gru, total_steps: 100000}
    space:
      lr: {loguniform: [1.0e-4, 1.0e-2]}
      core.hidden: {grid: [32, 64]}
    samples: 4                       # draws of the random dimensions (each grid point gets them all)
    scheduler: asha                  # fifo (default) or asha: stops trials that trail at a rung

Each trial is a normal memrl run folder ``OUT/trials/<trial>`` (resumable, ``memrl eval``-able),
trained in its Ray worker; after every chunk it reports the mean over seeds of the run's
``final_metric`` (or ``metric``) to Tune. At the end ``OUT/sweep.csv`` and ``sweep.json`` hold one
row per trial (its settings, last reported value, steps, folder), best first, and ``sweep.png``
every trial's learning curve. Ray runs locally unless ``address`` names a cluster (then OUT must be
on storage all nodes share). On a CPU a trial trains its seeds one after another (docs/architecture.md: vmap
over seeds deadlocked on 2-core machines); on an accelerator vmapped together.
"""

from __future__ import annotations

import copy
import csv
import dataclasses
import json
import socket
from pathlib import Path
from typing import Annotated

import numpy as np
import tyro

from memrl.learn.parsed_components import RunComponents
from memrl.learn.run_config import ConfigRecord
from memrl.run.config_upgrade import components_merged
from memrl.run.folder_lock import check_output_folder, writing

SPACES = ("grid", "choice", "uniform", "loguniform", "randint")
"""how a field varies: grid (every value, crossed with the other grids), choice (one value drawn
per sample), uniform / loguniform (a float in [low, high]), randint (an integer in [low, high))"""
SCHEDULERS = ("fifo", "asha")
SPEC_KEYS = (
    "config",
    "learner",
    "base",
    "space",
    "samples",
    "scheduler",
    "metric",
    "mode",
    "cpus_per_trial",
    "gpus_per_trial",
    "address",
)


def address_parts(address: str) -> tuple[str, int] | None:
    """``address`` (a Ray cluster: ``HOST:PORT``, ``ray://HOST:PORT`` for Ray Client, or ``auto``,
    the cluster this machine has joined) as (host, port); None for ``auto``. Refuses another form."""
    if address == "auto":
        return None
    host, colon, port = address.removeprefix("ray://").rpartition(":")
    if not colon or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(
            f"sweep address {address!r} is not a Ray cluster's address: give HOST:PORT (ray://HOST:PORT for Ray Client) or auto"
        )
    return host, int(port)


def check_reachable(address: str, timeout_s: float = 10.0) -> None:
    """Refuse a cluster ``address`` that nothing answers at within ``timeout_s`` (Ray itself would
    wait for minutes without naming it)."""
    parts = address_parts(address)
    if parts is None:
        return
    try:
        socket.create_connection(parts, timeout=timeout_s).close()
    except OSError as err:
        raise ValueError(
            f"sweep address {address}: nothing answers there ({err.strerror or err}); start the cluster's head "
            "(ray start --head) or give the address it printed"
        ) from None


def require_ray() -> None:
    """Refuse a sweep where Ray Tune is not installed."""
    try:
        import ray.tune  # noqa: F401
        import yaml  # noqa: F401
    except ImportError:
        raise ImportError('memrl sweep needs Ray Tune: pip install "memrl[sweep]"') from None


@dataclasses.dataclass(frozen=True)
class SweepSpec:
    """A sweep (see the module docstring); built by ``load_spec``, which checks every part."""

    learner: str
    base: dict
    space: dict
    samples: int = 1
    scheduler: str = "fifo"
    metric: str | None = None  # default: the learner's final_metric
    mode: str = "max"
    cpus_per_trial: float = 1.0
    gpus_per_trial: float = 0.0
    address: str | None = None

    def __post_init__(self):
        from memrl.learn.learners import LEARNERS

        if self.address is not None:
            address_parts(self.address)
        if self.learner not in LEARNERS.names():
            raise ValueError(f"sweep learner must be one of {', '.join(LEARNERS.names())}, got {self.learner!r}")
        if not isinstance(self.space, dict) or not self.space:
            raise ValueError("a sweep's space must map at least one config field to {KIND: VALUES}")
        for field, values in self.space.items():
            if not isinstance(values, dict) or len(values) != 1 or next(iter(values)) not in SPACES:
                raise ValueError(
                    f"space field {field!r} must be one {{KIND: VALUES}} with KIND one of {', '.join(SPACES)}, got {values!r}"
                )
            kind, arg = next(iter(values.items()))
            if kind in ("grid", "choice") and (not isinstance(arg, list) or not arg):
                raise ValueError(f"space field {field!r}: {kind} takes a non-empty list of values, got {arg!r}")
            words = [a for a in arg if isinstance(a, str)] if isinstance(arg, list) else []
            if kind in ("uniform", "loguniform", "randint") and words:
                raise ValueError(
                    f"space field {field!r}: {kind} takes two numbers [low, high], got the string {words[0]!r}"
                    + (" (YAML reads 1e-4 as a string: write 1.0e-4)" if is_number_text(words[0]) else "")
                )
            if kind in ("uniform", "loguniform", "randint") and (
                not isinstance(arg, list) or len(arg) != 2 or not arg[0] < arg[1]
            ):
                raise ValueError(f"space field {field!r}: {kind} takes [low, high] with low < high, got {arg!r}")
            if kind == "loguniform" and arg[0] <= 0:
                raise ValueError(f"space field {field!r}: loguniform needs low > 0, got {arg[0]!r}")
        if not isinstance(self.samples, int) or self.samples < 1:
            raise ValueError(f"sweep samples must be an integer >= 1, got {self.samples!r}")
        if self.scheduler not in SCHEDULERS:
            raise ValueError(f"sweep scheduler must be one of {', '.join(SCHEDULERS)}, got {self.scheduler!r}")
        if self.mode not in ("max", "min"):
            raise ValueError(f"sweep mode must be max or min, got {self.mode!r}")
        if not self.cpus_per_trial > 0 or self.gpus_per_trial < 0:
            raise ValueError(
                f"cpus_per_trial must be > 0 and gpus_per_trial >= 0, got {self.cpus_per_trial!r} and {self.gpus_per_trial!r}"
            )
        examples = {field: next(iter(values.values()))[0] for field, values in self.space.items()}
        for field, values in self.space.items():  # unknown fields and bad values fail here, before Ray starts
            kind, arg = next(iter(values.items()))
            for value in arg if kind != "randint" else arg[:1]:
                trial_config(self, {**examples, field: value})
        object.__setattr__(self, "metric", self.metric or trial_config(self, examples).final_metric)


def is_number_text(text: str) -> bool:
    """Whether ``text`` spells a number (as "1e-4" does, which YAML 1.1 reads as a string)."""
    try:
        float(text)
    except ValueError:
        return False
    return True


def load_spec(path: Path) -> SweepSpec:
    """The sweep spec in the YAML (or JSON) file ``path``, checked."""
    require_ray()
    import yaml

    try:
        data = yaml.safe_load(Path(path).read_text())
    except FileNotFoundError:
        raise FileNotFoundError(f"sweep spec {path} does not exist") from None
    except yaml.YAMLError as err:
        raise ValueError(f"sweep spec {path} is not readable YAML: {err}") from None
    if not isinstance(data, dict):
        raise ValueError(f"sweep spec {path} must be a mapping with the keys {', '.join(SPEC_KEYS)}")
    unknown = sorted(set(data) - set(SPEC_KEYS))
    if unknown:
        raise ValueError(f"sweep spec {path} has unknown keys {', '.join(unknown)}; its keys: {', '.join(SPEC_KEYS)}")
    saved = data.pop("config", None)
    if saved is not None:
        data = with_saved_base(data, Path(saved), path)
    for key in ("learner", "space"):
        if key not in data:
            raise ValueError(f"sweep spec {path} lacks {key!r}")
    return SweepSpec(**{"base": {}, **data})


def with_saved_base(data: dict, saved_path: Path, path: Path) -> dict:
    """The spec ``data`` with its ``config`` (a saved run's config.json or run folder, as ``memrl
    train --config`` takes it) as the base: the saved run's learner and settings, under the spec's
    own ``base`` (``core_args``, ``env_args``, ``task_args`` set settings of the saved component key by
    key; another component, or the same by its name, starts from its own defaults)."""
    from memrl.run.folder import read_config

    saved = read_config(saved_path)
    if data.get("learner", saved.learner) != saved.learner:
        raise ValueError(f"sweep spec {path}: its config holds a {saved.learner} run, not {data['learner']!r}")
    base = data.get("base") or {}
    return {**data, "learner": saved.learner, "base": saved.record() | base}


def base_config(spec: SweepSpec) -> ConfigRecord:
    """The config of the spec's ``base`` alone (its learner's defaults for every field it does not set)."""
    return trial_config(spec, {})


def with_components(spec: SweepSpec, components: dict) -> SweepSpec:
    """``spec`` with the components ``components`` (field -> component) in its base in place of its
    own (recorded as config.json records them), checked again."""
    given = dataclasses.replace(base_config(spec), **components)
    replaced = {field: given.component_record(field) for field in components}
    base = {k: v for k, v in spec.base.items() if k not in {f"{field}_args" for field in components}}
    return dataclasses.replace(spec, base=base | replaced)


def trial_config(spec: SweepSpec, params: dict) -> ConfigRecord:
    """The config of the trial with ``params`` (field -> value; ``outer.inner`` sets a setting of the
    core or a key of a dict field), checked."""
    from memrl.learn.learners import LEARNERS

    fields = copy.deepcopy(spec.base)
    for field, value in params.items():
        outer, _, inner = field.partition(".")
        if inner:
            held = fields.get(outer, {})
            fields[outer] = {**({"kind": held} if isinstance(held, str) else held), inner: value}
        else:
            fields[field] = value
    config_class = LEARNERS.factory(spec.learner).config_class
    known = {f.name for f in dataclasses.fields(config_class)} | {f"{c}_args" for c in config_class.COMPONENTS}
    unknown = sorted(set(fields) - known)
    if unknown:
        raise ValueError(
            f"{spec.learner} configs have no field {', '.join(map(repr, unknown))}; their fields: {', '.join(sorted(known))}"
        )
    return config_class.from_dict(components_merged(config_class, fields))


def latest_score(folder, config: ConfigRecord, metric: str) -> float | None:
    """The mean over seeds of each seed's latest measured ``metric`` (None before any)."""
    values = []
    for seed in config.seed_list():
        measured = [r[metric] for r in folder.read_metrics(seed) if r.get(metric) is not None]
        if measured:
            values.append(measured[-1])
    return float(np.mean(values)) if values else None


def run_trial(params: dict, spec: SweepSpec, out: Path) -> None:
    """Ray Tune's trainable: train the trial's run folder, reporting after every chunk."""
    import jax
    from ray import tune

    from memrl.run.folder import RunFolder
    from memrl.run.seed_training import train_seeds

    config = trial_config(spec, params)
    folder = RunFolder(out / "trials" / tune.get_context().get_trial_name())
    folder.prepare(config)
    steps = {"done": 0}

    def report(steps_done: int) -> None:
        score = latest_score(folder, config, spec.metric)
        if score is not None and steps_done > steps["done"]:
            steps["done"] = steps_done
            tune.report({"score": score, "steps": steps_done, "run": str(folder.path)})

    seeds = config.seed_list()
    groups = [[s] for s in seeds] if jax.default_backend() == "cpu" else [seeds]
    for i, group in enumerate(groups):  # on a CPU steps count on across the seeds trained one after another
        offset = i * config.num_updates * config.steps_per_update
        train_seeds(config, folder, group, on_chunk=lambda done, offset=offset: report(offset + done))
    folder.write_summary(config)


def search_space(spec: SweepSpec) -> dict:
    from ray import tune

    make = {
        "grid": tune.grid_search,
        "choice": tune.choice,
        "uniform": lambda a: tune.uniform(*a),
        "loguniform": lambda a: tune.loguniform(*a),
        "randint": lambda a: tune.randint(*a),
    }
    return {field: make[kind](arg) for field, values in spec.space.items() for kind, arg in values.items()}


def run_sweep(spec: SweepSpec, out: Path) -> list[dict]:
    """Run the sweep into ``out``; returns the trials' rows (best first), also in sweep.csv/json and sweep.png."""
    import ray
    from ray import tune
    from ray.tune.schedulers import ASHAScheduler, FIFOScheduler

    from memrl.run.curves import save_curves
    from memrl.run.folder import RunFolder

    out = Path(out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    if not ray.is_initialized():
        if spec.address is not None:
            check_reachable(spec.address)
        ray.init(address=spec.address, include_dashboard=False, configure_logging=False)
    scheduler = ASHAScheduler(time_attr="steps") if spec.scheduler == "asha" else FIFOScheduler()
    trainable = tune.with_resources(
        tune.with_parameters(run_trial, spec=spec, out=out), {"cpu": spec.cpus_per_trial, "gpu": spec.gpus_per_trial}
    )
    tuner = tune.Tuner(
        trainable,
        param_space=search_space(spec),
        tune_config=tune.TuneConfig(metric="score", mode=spec.mode, scheduler=scheduler, num_samples=spec.samples),
        run_config=tune.RunConfig(name="tune", storage_path=str(out / "ray"), verbose=1),
    )
    results = tuner.fit()
    rows = []
    for result in results:
        if result.error is not None:
            raise RuntimeError(f"sweep trial {result.path} failed: {result.error}")
        metrics = result.metrics or {}
        rows.append(
            {
                **{f: result.config[f] for f in spec.space},
                spec.metric: metrics.get("score"),
                "steps": metrics.get("steps"),
                "run": metrics.get("run"),
            }
        )
    rows.sort(
        key=lambda r: (r[spec.metric] is None, -(r[spec.metric] or 0) if spec.mode == "max" else (r[spec.metric] or 0))
    )
    with (out / "sweep.csv").open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    (out / "sweep.json").write_text(json.dumps({"spec": dataclasses.asdict(spec), "trials": rows}, indent=2))
    label = lambda row: ", ".join(
        f"{f}={row[f]:.3g}" if isinstance(row[f], float) else f"{f}={row[f]}" for f in spec.space
    )
    save_curves(
        out / "sweep.png",
        {f"sweep of {spec.learner} ({spec.metric})": {label(r): RunFolder(Path(r["run"])) for r in rows if r["run"]}},
    )
    return rows


def command(
    spec: tyro.conf.Positional[Path],
    out: Path = Path("runs/sweep"),
    address: str | None = None,
    *,
    components: Annotated[RunComponents, tyro.conf.arg(name="")] = RunComponents(),
) -> None:
    """Sweep config fields on Ray Tune: every trial a memrl run folder, one table and figure at the end.

    The components of the spec's base are subcommands after SPEC, as memrl train takes them, each
    the base's unless given: memrl sweep SPEC core:lstm --core.hidden 64 env:tmaze/T-LS sweeps the
    spec's space over that core and environment (the space's core.SETTING over them).

    Args:
        spec: YAML file: learner, base (shared config fields), space (field: {grid|choice|uniform|
            loguniform|randint: values}), samples, scheduler (fifo|asha), metric, mode,
            cpus_per_trial, gpus_per_trial, address.
        out: folder for the trials' run folders, Ray's records, sweep.csv/json and sweep.png.
        address: a Ray cluster to run on (overrides the spec's; default: a local Ray).
        components: the base's components as given (the command line reads them for the spec).
    """
    from rich.table import Table

    from memrl.console import console

    loaded = load_spec(spec)
    if components.parsed:
        loaded = with_components(loaded, components.made())
    if address is not None:
        loaded = dataclasses.replace(loaded, address=address)
    check_output_folder(out)
    with writing(out):
        rows = run_sweep(loaded, out)
    table = Table(title=f"sweep {spec} ({len(rows)} trials, best first)")
    for column in rows[0]:
        table.add_column(column)
    for row in rows:
        table.add_row(*(f"{v:.4g}" if isinstance(v, float) else str(v) for v in row.values()))
    console.print(table)
    console.print(f"table {Path(out) / 'sweep.csv'}, curves {Path(out) / 'sweep.png'}")
