"""The ``memrl`` command line: list, train (ppo, impala, supervised), eval, plot, reproduce, results, analyze, bench, sweep."""

from __future__ import annotations

import dataclasses
import difflib
import errno
import functools
import inspect
import itertools
import re
import shlex
import sys
import typing
from pathlib import Path
from typing import Annotated

import tyro

from memrl.component_subcommands import Subcommands, component_flags_spelled
from memrl.learn.learners import LEARNERS
from memrl.learn.parsed_components import RunComponents, made
from memrl.learn.run_config import ConfigRecord, import_modules
from memrl.learn.supervised_config import SupervisedConfig
from memrl.run import interrupts, sweep
from memrl.run.folder_lock import FolderBusy, check_output_folder
from memrl.run.hosts import Hosts
from memrl.settings import OUTPUT_FOLDER, allowed_of, flag_of


def list_all(
    core: str | None = None, env: str | None = None, task: str | None = None, experiment: str | None = None
) -> None:
    """List the registered cores, environments, supervised tasks, task models and experiments; or
    every setting of one core, environment or task, with its type, default and meaning; or an
    experiment's settings in each preset against its paper's (a markdown table).

    Args:
        core: a core (or a supervised task model) whose settings to show (core:NAME --core.SETTING VALUE).
        env: an environment whose settings to show (env:NAME --env.SETTING VALUE).
        task: a supervised task whose settings to show (task:NAME --task.SETTING VALUE; its batch size
            is the run's --batch-size).
        experiment: an experiment whose settings table to show (memrl reproduce NAME --preset P).
    """
    from rich.table import Table

    from memrl import cores, envs, experiments, tasks
    from memrl.agents.supervised_models import TASK_MODELS, registry_of
    from memrl.console import console
    from memrl.envs.scripted_policy import policies_of
    from memrl.registry import type_name
    from memrl.settings import described, help_of, settings_of

    if experiment is not None:
        from memrl.experiments.settings_table import settings_table

        print(settings_table(experiment))
    chosen = [
        (registry, name)
        for registry, name in ((cores.CORES, core), (envs.ENVS, env), (tasks.TASKS, task))
        if name is not None
    ]
    if not chosen and experiment is None:
        console.print("[bold]cores[/]        " + ", ".join(cores.names()))
        console.print("[bold]envs[/]         " + envs.ENVS.known())
        console.print("[bold]tasks[/]        " + ", ".join(tasks.names()))
        console.print("[bold]task models[/]  " + ", ".join(TASK_MODELS.names()) + "  (train supervised --core)")
        console.print("[bold]experiments[/]  " + ", ".join(experiments.names()))
        return
    for registry, name in chosen:
        registry = registry_of(name) if registry is cores.CORES else registry
        by_the_run = SupervisedConfig.set_by_the_run("task") if registry is tasks.TASKS else ()
        rows = settings_of(registry, name, by_the_run)
        if not rows:  # a family member (gymnasium/<id>): its own library takes its settings
            console.print(
                f"{registry.kind} {name}: no settings of memrl's. {described(registry, name)}", highlight=False
            )
            continue
        small = registry.small(name)
        sized = (
            f" Its defaults are the paper's sizes; the column small is a size that trains in minutes on a CPU "
            f"(Python: {registry.kind}s.make({name!r}, **{registry.kind}s.small({name!r})))."
            if small
            else ""
        )
        table = Table(title=f"{registry.kind} {name}: settings", caption=described(registry, name) + sized)
        for column in ("setting", "type", "default", *(["small"] if small else []), "meaning"):
            table.add_column(column)
        for setting in rows:
            shown = [repr(small[setting.name]) if setting.name in small else ""] if small else []
            table.add_row(setting.name, type_name(setting.type), repr(setting.default), *shown, help_of(setting))
        console.print(table)
        if registry is envs.ENVS and (policies := policies_of(name)):
            console.print(
                f"scripted policies of {name}: {', '.join(policies)} (a teacher to clone: "
                f"memrl train impala env:{name} --teacher NAME --clone-updates N)",
                highlight=False,
            )


LEARNER_CLASSES = {name: LEARNERS.factory(name).config_class for name in LEARNERS.names()}
"""``memrl train``'s learners (``learn.learners.LEARNERS``): name -> its config class"""


DEFAULT_LEARNER = "ppo"
"""``memrl train`` without a learner named (nor a saved run's: ``--config``) is ``memrl train ppo``"""
FOLDER_SUFFIX = {name: "" if name == DEFAULT_LEARNER else f"-{name}" for name in LEARNER_CLASSES}
ALIASES = {"train-impala": ["train", "impala"], "train-supervised": ["train", "supervised"]}
"""the earlier spellings of ``memrl train impala`` and ``memrl train supervised``"""


IMAGE_SUFFIXES = (".png", ".pdf", ".svg", ".jpg", ".jpeg")
"""the figure files ``memrl plot`` writes"""


def refuse_repeated_settings(argv: list[str]) -> None:
    """Refuse a flag given twice, or a setting given twice in one ``--*-args`` list (the command
    line would keep the last without a word)."""
    flags = [a.split("=", 1)[0] for a in argv if a.startswith("--")]
    repeated = sorted({f for f in flags if flags.count(f) > 1})
    if repeated:
        raise ValueError(f"{', '.join(repeated)} given more than once; give each flag once")
    for i, flag in enumerate(argv):
        if flag.startswith("--") and flag.endswith("-args"):
            values = list(itertools.takewhile(lambda a: not a.startswith("--"), argv[i + 1 :]))
            keys = values[::2]
            twice = sorted({k for k in keys if keys.count(k) > 1})
            if twice:
                raise ValueError(f"{flag} gives {', '.join(twice)} more than once; give each setting once")


def train(
    out: Path | None = None,
    workers: int | None = None,
    tensorboard: bool = False,
    wandb: bool = False,
    devices: int | None = None,
    hosts: Annotated[Hosts, tyro.conf.arg(name="")] = Hosts(),
    config: Path | None = None,
    *,
    learner_config: Annotated[ConfigRecord, tyro.conf.arg(name="")],
) -> None:
    """Train a memory core with one of memrl's learners (resumes if OUT holds this run): ppo
    (recurrent PPO) or impala (IMPALA-style V-trace actor-critic) on an environment,
    supervised (any core inside the sequence model, or a task model) on a sequence task.

    Args:
        out: run folder (default runs/<env or task>/<core>, with -impala or -supervised appended).
        workers: processes at once (default: one per CPU core, one on a GPU).
        tensorboard: also write each seed's metrics as TensorBoard scalars to OUT/seed_<s>/tensorboard
            (needs pip install "memrl[tensorboard]").
        wandb: also log each seed's metrics to a Weights & Biases run as it trains (offline under OUT/wandb
            unless WANDB_MODE=online; project WANDB_PROJECT, default memrl; needs pip install "memrl[wandb]").
        devices: local devices to split the environments over (default: all accelerators that divide
            num_envs; 1 on a CPU and for supervised runs); with several processes, on each of them.
        hosts: with --coordinator HOST:PORT --num-processes P --process-id I, this command is process
            I of P that train the run together (one command per process, the same arguments; process 0
            writes OUT, on a file system all of them share; ppo and impala runs).
        config: a saved run's config.json (or its run folder) to train again: the learner is the saved
            run's and its settings are the defaults, which the flags given change (--core.SETTING,
            --env.SETTING and --task.SETTING replace the saved settings one by one; another core, env or
            task starts from its own defaults).

    The core and the environment are subcommands after the learner's, with their settings as flags:
    memrl train ppo core:lstm --core.hidden 128 env:tmaze/T-LN --env.maze-length 120 (or --core lstm
    --core-args hidden 128 --env tmaze/T-LN --env-args maze_length 120); a gymnasium environment is
    env:gymnasium --env.id CartPole-v1 (or --env gymnasium/CartPole-v1). memrl train ppo core:lstm
    --help (env:NAME --help) lists their settings.
    """
    from memrl.run.train import train_run

    run = made(learner_config)  # as tyro parsed it, checked (or refused) then
    if run.init_params:  # saved as a path that any directory reads, as a resumed or copied run needs it
        run = dataclasses.replace(run, init_params=str(Path(run.init_params).absolute()))
    folder = out or Path("runs") / run.trained_on.replace("/", "_") / f"{run.core_name}{FOLDER_SUFFIX[run.learner]}"
    train_run(run, folder, workers, tensorboard, devices, hosts, wandb)


def given_path(argv: list[str], holds) -> Path | None:
    """The first word of ``argv`` after the command that is a path for which ``holds`` (the run
    folder ``memrl eval`` evaluates, the spec ``memrl sweep`` runs), or None."""
    return next((Path(w) for w in argv[1:] if not w.startswith("-") and holds(Path(w))), None)


COMPONENT_WORD = re.compile(r"(--)?(core|env|task)(:|\.|-args$|$)")
"""a word that names or sets a component: ``core:NAME``, ``--core.SETTING``, ``--core-args``, ``--core``"""


def component_of_word(word: str) -> str | None:
    """The component (core, env, task) that ``word`` of a command names or sets (``COMPONENT_WORD``), or None."""
    named = COMPONENT_WORD.match(word)
    return named.group(2) if named else None


def evaluated_run(argv: list[str]) -> tuple[list[str], ConfigRecord | None]:
    """For ``memrl eval``: ``argv`` with the earlier spelling of its components' settings
    (``--core-args K V``, ``--env-args``, ``--task-args``) written as the subcommands', and the
    config of the run folder it names (None where it names none: the command refuses it then)."""
    from memrl.run.folder import RunFolder

    run = given_path(argv, lambda path: (path / "config.json").is_file())
    if run is None:
        given = next((w for w in argv if component_of_word(w)), None)
        named = next((w for w in argv[1:] if not w.startswith("-") and ":" not in w), None)
        if given is not None and named is not None:  # else the command itself says what is missing
            raise ValueError(
                f"{named} is not a run folder (no config.json): {given} changes a run's {component_of_word(given)}"
            )
        return argv, None
    saved = RunFolder(run).load_config()
    trained_on = "task" if "task" in saved.COMPONENTS else "env"
    given = next((w for w in argv if component_of_word(w) in {"env", "task"} - {trained_on}), None)
    if given is not None:
        article = "an" if saved.learner[0] in "aeiou" else "a"
        raise ValueError(
            f"{given} does not apply to {article} {saved.learner} run; it trained on "
            f"{'a sequence task' if trained_on == 'task' else 'an environment'}: "
            f"give its settings with {trained_on}:NAME --{trained_on}.SETTING VALUE (or --{trained_on}-args)"
        )
    return component_flags_spelled(argv, type(saved), saved), saved


def saved_config(argv: list[str]) -> ConfigRecord | None:
    """The saved config of ``memrl train ... --config FILE`` (a learner given must be its learner,
    which ``memrl train`` takes where none is given), or None."""
    from memrl.run.folder import read_config

    given = [i for i, a in enumerate(argv) if a == "--config" or a.startswith("--config=")]
    if argv[:1] != ["train"] or not given:
        return None
    flag = argv[given[0]]
    path = flag.split("=", 1)[1] if "=" in flag else (argv[given[0] + 1] if given[0] + 1 < len(argv) else None)
    if not path or path.startswith("--"):
        raise ValueError("--config takes a saved run's config.json or run folder")
    saved = read_config(Path(path))
    learners = [a for a in argv[1:] if a in FOLDER_SUFFIX]
    if learners and learners[0] != saved.learner:
        raise ValueError(
            f"{path} holds a {saved.learner} run; train it with memrl train {saved.learner} (or no learner)"
        )
    return saved


def given_imports(argv: list[str]) -> list[str]:
    """The modules ``--imports`` names in ``argv``."""
    if "--imports" not in argv:
        return []
    return list(itertools.takewhile(lambda a: not a.startswith("-"), argv[argv.index("--imports") + 1 :]))


def spelled_out(argv: list[str]) -> list[str]:
    """``argv`` with the earlier spellings of ``memrl train`` (``ALIASES``) written as ``memrl train LEARNER``."""
    return ALIASES[argv[0]] + argv[1:] if argv[:1] and argv[0] in ALIASES else argv


def evaluate(
    run: tyro.conf.Positional[Path],
    steps: int = 1000,
    seed: int = 12345,
    amnesic: bool = False,
    deterministic: bool = False,
    *,
    components: Annotated[RunComponents, tyro.conf.arg(name="")] = RunComponents(),
) -> None:
    """Evaluate each seed's last checkpoint of RUN (sampled actions, fresh environments; for a
    supervised run, its accuracy on fresh sequences of the held-out split). Each seed's line gives
    the mean episode return ± its standard error over the episodes, and their standard deviation.

    The run's core and environment (or task) are subcommands after RUN, each the run's unless
    given, their settings flags that replace the run's: an environment the agent did not train on,
    memrl eval RUN --env.maze-length 120; core settings that keep the parameters' shapes, memrl
    eval RUN --core.k 32; another level, memrl eval RUN env:ballet/8_delay16 (another name starts
    from its own defaults); a supervised run's task, memrl eval RUN --task.gap 200. The earlier
    spelling --env-args maze_length 120 (--core-args, --task-args) means the same; the run's
    settings are listed by memrl eval RUN --help.

    Args:
        run: run folder.
        steps: steps per environment (supervised runs: held-out sequences).
        seed: evaluation seed.
        amnesic: actor-critic runs: reset the agent's memory (carry, previous action and reward) before
            every step, so it acts with the same network and no memory; the gap to a plain evaluation
            is what its memory gives.
        deterministic: actor-critic runs: act with the most probable action instead of sampling.
        components: the run's components as given (``component_subcommands.Subcommands`` reads them for the run).
    """

    from memrl.console import console
    from memrl.run.final_agents import evaluation_lines
    from memrl.run.folder import RunFolder

    if steps < 1:
        raise ValueError(
            f"--steps must be a positive integer (steps per environment, or held-out sequences for a supervised run), got {steps}"
        )
    given = components.made()
    for line in evaluation_lines(RunFolder(run), steps, seed, given, amnesic, deterministic):
        console.print(line, soft_wrap=True)


def plot(runs: tyro.conf.Positional[list[Path]], out: Path | None = None) -> None:
    """Plot the learning curves of one or more run folders on one figure.

    Args:
        runs: run folders.
        out: image file to write (default: RUN/curves.png for one run, curves.png here for several).
    """
    from memrl.run.curves import save_curves, seed_curves
    from memrl.run.folder import RunFolder

    out = out or (runs[0] / "curves.png" if len(runs) == 1 else Path("curves.png"))
    if out.is_dir():
        raise ValueError(f"--out {out} is a folder; give the image file to write, such as {out / 'curves.png'}")
    if out.suffix.lower() not in IMAGE_SUFFIXES:
        raise ValueError(f"--out {out}: the image's name must end in one of {', '.join(IMAGE_SUFFIXES)}")
    if out.parent != Path("."):  # the current directory takes a figure, not a run
        check_output_folder(out.parent, "--out")
    panels: dict = {}
    for run in runs:
        folder = RunFolder(run)
        config = folder.load_config()
        if not seed_curves(folder):
            raise ValueError(
                f"{run} has no measured {config.score_metric} in its metrics (its metrics files are empty, or "
                "every value is missing or NaN): nothing to plot"
            )
        curves = panels.setdefault(config.trained_on, {})
        name = config.core_name
        label = name if run.name == name else f"{name} ({run.name})"
        curves[label if label not in curves else f"{name} ({run})"] = folder  # two folders of one name
    print(save_curves(out, panels))


def reproduce(
    name: tyro.conf.Positional[str],
    out: Path | None = None,
    workers: int | None = None,
    total_steps: int | None = None,
    num_envs: int | None = None,
    preset: str | None = None,
    add_cores: tuple[str, ...] = (),
    tensorboard: bool = False,
    devices: int | None = None,
    runs: tuple[str, ...] = (),
    seeds: int | None = None,
    seed: int | None = None,
    run_settings: tuple[str, ...] = (),
    record_dir: Path | None = None,
    wandb: bool = False,
    configs_only: bool = False,
) -> None:
    """Run a named experiment (resumable) and write its table, figure, checks and record.

    Args:
        name: experiment name (see memrl list).
        out: output folder (default runs/reproduce/NAME, with -<steps>, -<preset>, -<envs>envs,
            -<seeds>seeds, -seed<seed> and -with-<core> appended for the options below that are given).
        workers: processes at once (default: one per CPU core, one on a GPU).
        total_steps: run every config at this budget (env steps per run) instead of the experiment's.
        num_envs: run every config with this many parallel environments per seed (RL experiments).
        preset: the experiment's preset, for those that have presets ("cpu", "paper" and for some
            "gpu"; memrl list --experiment NAME shows them; default: "cpu" on a CPU, else "gpu"
            where there is one, else "paper").
        add_cores: optional baselines to add, for experiments that offer them (amrl-tmaze: dnc).
        tensorboard: also write each run's metrics as TensorBoard scalars (OUT/RUN/seed_<s>/tensorboard).
        wandb: also log each run's seeds to Weights & Biases as they train (as memrl train --wandb does).
        devices: local devices to split each run's environments over (default: all accelerators that
            divide every run's num_envs; 1 on a CPU and for supervised runs).
        runs: run only these of the experiment's runs ("<panel>/<label>", as its table names them),
            checking only the checks between them; the others can run later into the same folder.
        seeds: run every config with this many seeds instead of the experiment's.
        seed: run every config's seeds from this one (seed, seed + 1, ...) instead of the
            experiment's: a pilot on seeds its records do not use (--runs R --seeds 1 --seed 0).
        run_settings: FIELD VALUE pairs set in every run's config, a component's setting as
            env.SETTING (core.SETTING, task.SETTING): a pilot of other settings, --run-settings
            teacher oracle clone_decision_weight 30 env.grid_size 8; refused with --record-dir.
        record_dir: also write the record there (docs/results for the project's scoreboard:
            memrl results --write then regenerates it); it is always written to OUT/record.json.
        configs_only: write each run's folder with its config.json and stop, training nothing (a
            run's config to read, or to probe: memrl analyze decision-probe OUT/RUN).
    """
    from memrl import experiments
    from memrl.experiments.runner import reproduce as run_experiment

    experiment = experiments.get(name, preset, add_cores)
    if runs:
        experiment = experiment.with_runs(runs)
    settings = {
        key: value
        for key, value in (("total_steps", total_steps), ("num_envs", num_envs), ("seeds", seeds), ("seed", seed))
        if value is not None
    }
    piloted = pilot_settings(run_settings, experiment, record_dir)
    settings |= piloted
    if settings:
        experiment = experiment.with_run_settings(**settings)
    tags = [
        f"{value}{unit}"
        for value, unit in ((total_steps, ""), (preset, ""), (num_envs, "envs"), (seeds, "seeds"))
        if value is not None
    ]
    tags += [] if seed is None else [f"seed{seed}"]
    tags += [f"{field}{value}" for field, value in piloted.items()]
    tags += [f"with-{core}" for core in dict.fromkeys(add_cores)]
    run_experiment(
        experiment,
        out or experiments.base.default_out("-".join([name, *tags])),
        workers,
        tensorboard,
        devices,
        record_dir,
        wandb,
        configs_only=configs_only,
    )


def pilot_settings(words: tuple[str, ...], experiment, record_dir: Path | None) -> dict:
    """``--run-settings FIELD VALUE ...`` as config fields: each value read as the command line reads
    a setting (``setting_value``), an integer made a float where the field holds one."""
    from memrl.learn.supervised_config import setting_value

    if not words:
        return {}
    if record_dir is not None:
        raise ValueError(
            "--run-settings runs a pilot of other settings than the experiment's, whose record is not the "
            "experiment's: give it without --record-dir"
        )
    if len(words) % 2:
        raise ValueError(f"--run-settings takes FIELD VALUE pairs, got {len(words)} words: {' '.join(words)}")
    settings = dict(zip(words[::2], map(setting_value, words[1::2])))
    held = next(iter(experiment.runs.values()))
    return {
        field: float(value) if isinstance(getattr(held, field, None), float) and type(value) is int else value
        for field, value in settings.items()
    }


def results(records: Path = Path("docs/results"), write: bool = False) -> None:
    """Print the scoreboard: which findings of which paper memrl reproduces, recomputed from the
    per-seed values of the committed records (the newest version of each; earlier ones linked).

    Args:
        records: the folder of records, NAME/vN.json (memrl reproduce NAME --record-dir writes one there).
        write: also regenerate docs/scoreboard.md and the scoreboard blocks of docs/results.md and README.md.
    """
    from memrl.experiments.scoreboard import show

    show(records, write)


def babyai_demos(
    levels: str = "BossLevel", episodes: int = 1_000, test_episodes: int = 100, max_steps: int = 128, seed: int = 0
) -> None:
    """Make the BabyAI bot's demos for the babyai task once (kept in memrl's cache; the task with
    the same settings reads them). Needs pip install 'memrl[babyai]'.

    Args:
        levels: one level or several, comma-separated (see memrl list --task babyai).
        episodes: training demos per level.
        test_episodes: held-out demos per level.
        max_steps: steps per sequence; longer demos are not kept.
        seed: the first environment seed.
    """
    from rich.progress import Progress

    from memrl import tasks
    from memrl.console import console

    task = tasks.make(
        "babyai", levels=levels, episodes=episodes, test_episodes=test_episodes, max_steps=max_steps, seed=seed
    )
    if task.demos_path.exists():
        console.print(f"already made: {task.demos_path}")
        return
    with Progress(console=console) as progress:
        bar = progress.add_task("BabyAI bot demos", total=(episodes + test_episodes) * len(task.level_names))
        bank = task.demos(lambda n: progress.advance(bar, n))
    console.print(
        f"{len(bank['lengths']):,} demos, {len(bank['actions']):,} steps ({', '.join(task.level_names)}): {task.demos_path}"
    )


def wandb(
    runs: tyro.conf.Positional[list[Path]], project: str = "memrl", entity: str | None = None, online: bool = False
) -> None:
    """Export run folders (or every run folder under an experiment's folder) to Weights & Biases:
    one W&B run per seed with the config, every metric at its update number and the curves figure.
    Needs pip install "memrl[wandb]".

    Args:
        runs: run folders, or folders holding them (memrl reproduce's output).
        project: W&B project.
        entity: W&B entity (team or user; default: your W&B default).
        online: upload now (needs wandb login); default: write offline runs under RUN/wandb/ for
            wandb sync.
    """
    from memrl.run.wandb_export import export

    export(runs, project, entity, online)


def analyze() -> None:
    """The papers' analyses of trained agents and fresh cores: memrl analyze NAME (each with --help)."""


def bench() -> None:
    """Throughput and memory benchmarks of the cores and learners, side by side: memrl bench TABLE (each with --help; all: every table)."""


COMMANDS = {
    "list": list_all,
    "train": train,
    "eval": evaluate,
    "plot": plot,
    "reproduce": reproduce,
    "results": results,
    "analyze": analyze,
    "bench": bench,
    "sweep": sweep.command,
    "babyai-demos": babyai_demos,
    "wandb": wandb,
}
"""memrl's commands; ``analyze`` and ``bench`` stand here for the listing of ``memrl --help``, and
``GROUPS`` holds their own subcommands (imported only when they run)"""

DESCRIPTION = "memrl: memory cores, environments, tasks and learners in JAX."


def option_hint(hint):
    """An option's type without the command line's own annotation (``Annotated[tuple[...], tyro.conf.arg(...)]``
    -> ``tuple[...]``)."""
    if typing.get_origin(hint) is Annotated and typing.get_origin(typing.get_args(hint)[0]) is tuple:
        return typing.get_args(hint)[0]
    return hint


def option_flag(name: str, hint) -> str:
    """The flag of option ``name``: its own (``tyro.conf.arg(name=...)``) where its type gives one."""
    given = next((m.name for m in getattr(hint, "__metadata__", ()) if getattr(m, "name", None)), None)
    return flag_of(given or name)


def checked_before_running(command):
    """``command`` (an analysis or a bench table) with its options checked first by their types
    (``settings.Count`` or a tuple of them, ``Seed``, ``LearningRate``, ``OutputFolder``), naming the flag."""
    hints = typing.get_type_hints(command, include_extras=True)

    @functools.wraps(command)
    def checked(*args, **kwargs):
        bound = inspect.signature(command).bind(*args, **kwargs)
        bound.apply_defaults()
        for name, value in bound.arguments.items():
            hint, flag = option_hint(hints.get(name)), option_flag(name, hints.get(name))
            several = typing.get_origin(hint) is tuple
            allowed = allowed_of(typing.get_args(hint)[0] if several else hint)
            if allowed is None or value is None:
                continue
            if allowed is OUTPUT_FOLDER:
                check_output_folder(value)
            elif several and not (value and all(allowed.fits(v) for v in value)):
                given = " ".join(map(str, value)) or "nothing"
                raise ValueError(f"{flag} must be one or more values, each {allowed.what}; got {given}")
            elif not several and not allowed.fits(value):
                raise ValueError(f"{flag} must be {allowed.what}, got {value}")
        return command(*args, **kwargs)

    return checked


def bench_tables() -> dict:
    """``memrl bench``'s subcommands (imported when it runs)."""
    from memrl.bench import TABLES

    return {name: TABLES.factory(name) for name in TABLES.names()}


def analyze_commands() -> dict:
    """``memrl analyze``'s subcommands (imported when it runs)."""
    from memrl.analysis import ANALYSES

    return {name: ANALYSES.factory(name) for name in ANALYSES.names()}


GROUPS = {"analyze": analyze_commands, "bench": bench_tables}
"""the commands with subcommands of their own: name -> those subcommands"""


FLAG_SYNONYMS = {
    "--learning-rate": "--lr",
    "--steps": "--total-steps",
    "--timesteps": "--total-steps",
    "--total-timesteps": "--total-steps",
    "--n-envs": "--num-envs",
    "--envs": "--num-envs",
    "--n-steps": "--rollout-len",
    "--num-steps": "--rollout-len",
    "--discount": "--gamma",
    "--epochs": "--update-epochs",
    "--eps": "--adam-eps",
}
"""other libraries' names for ``memrl train``'s flags (Stable-Baselines3, CleanRL): a pointer, never an alias"""


def train_hints(typed: list[str]) -> list[str]:
    """After ``memrl train`` refused ``typed``: a pointer for a learner's name misspelt and for each
    flag that another library spells so, or that is close to one of the learner's flags."""
    if typed[:1] != ["train"]:
        return []
    hints = []
    if typed[1:2] and not typed[1].startswith("-") and ":" not in typed[1] and typed[1] not in LEARNER_CLASSES:
        close = difflib.get_close_matches(typed[1], LEARNER_CLASSES, 1)
        hints.append(
            f"{typed[1]!r} is not a learner{f' (did you mean {close[0]}?)' if close else ''}: "
            f"memrl train {{{','.join(LEARNER_CLASSES)}}} [core:NAME] [env:NAME | task:NAME] [--flags]"
        )
    learner = next((a for a in typed[1:] if a in LEARNER_CLASSES), DEFAULT_LEARNER)
    flags = [flag_of(f.name) for f in dataclasses.fields(LEARNER_CLASSES[learner])]
    for word in (a.split("=", 1)[0] for a in typed[1:] if a.startswith("--") and "." not in a):
        if word in flags or word in ("--help", "--config", "--out", "--workers") or component_of_word(word):
            continue
        target = FLAG_SYNONYMS.get(word) or next(iter(difflib.get_close_matches(word, flags, 1)), None)
        if target in flags:
            hints.append(f"{word} is not a flag of memrl train {learner}: did you mean {target}?")
    return hints


def main(argv: list[str] | None = None) -> None:
    typed = list(sys.argv[1:] if argv is None else argv)
    with interrupts.recorded():
        try:
            run_command(spelled_out(typed))
        except SystemExit as exit:
            if exit.code == 2:
                for hint in train_hints(typed):
                    print(f"memrl: hint: {hint}", file=sys.stderr)
            raise


def run_command(argv: list[str]) -> None:
    """``memrl ARGV`` (spelled out): a bad input exits with status 2 and one line, Ctrl-C with 130."""
    typed = argv  # the command as the user gave it, which the messages below repeat
    try:
        refuse_repeated_settings(argv)
        if argv[:1] and argv[0] in GROUPS:
            subcommands = {name: checked_before_running(command) for name, command in GROUPS[argv[0]]().items()}
            tyro.extras.subcommand_cli_from_dict(subcommands, prog=f"memrl {argv[0]}", args=argv[1:])
        else:
            # Cascading: train's options before the learner's name apply after it too.
            saved = saved_config(argv)
            evaluated = None
            if argv[:1] == ["train"]:
                import_modules(given_imports(argv))  # they may register cores the subcommands list
                default = saved.learner if saved is not None else DEFAULT_LEARNER
                learner = next((a for a in argv[1:] if a in LEARNER_CLASSES), default)
                argv = component_flags_spelled(argv, LEARNER_CLASSES[learner], saved)
            elif argv[:1] == ["eval"]:
                argv, evaluated = evaluated_run(argv)
            elif argv[:1] == ["sweep"] and (spec := given_path(argv, Path.is_file)) is not None:
                evaluated = sweep.base_config(sweep.load_spec(spec))
                argv = component_flags_spelled(argv, type(evaluated), evaluated)
            subcommands = Subcommands(frozenset(argv), saved or evaluated, LEARNER_CLASSES, DEFAULT_LEARNER)
            tyro.extras.subcommand_cli_from_dict(
                COMMANDS,
                prog="memrl",
                args=argv,
                description=DESCRIPTION,
                config=(tyro.conf.CascadeSubcommandArgs,),
                registry=subcommands.rules,
            )
    except (
        ValueError,
        FileNotFoundError,
        ImportError,
        ChildProcessError,
        FolderBusy,
    ) as err:  # ChildProcessError: launch.TrainingFailed
        print(f"memrl: error: {err}", file=sys.stderr)
        raise SystemExit(2) from None
    except OSError as err:
        if err.errno != errno.ENOSPC:
            raise
        from memrl.run.launch import RESUME_AFTER_FULL_DISK

        print(
            f"memrl: error: no space left on device (writing {err.filename}); {RESUME_AFTER_FULL_DISK}: memrl {shlex.join(typed)}",
            file=sys.stderr,
        )
        raise SystemExit(1) from None
    except KeyboardInterrupt as err:  # one line, not a traceback: what is saved and how to go on
        saved = f", {err}" if str(err) else ""
        print(f"memrl: interrupted{saved}; the same command resumes: memrl {shlex.join(typed)}", file=sys.stderr)
        raise SystemExit(130) from None


if __name__ == "__main__":
    main()
