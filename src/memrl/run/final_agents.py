"""The final agents of a run folder: each seed's last checkpoint, and what those agents do in fresh
environments (possibly of another environment or core setting: generalisation, thinking time) or on
fresh held-out sequences. Analyses, experiments and ``memrl eval`` read trained agents through here."""

from __future__ import annotations

import dataclasses
import functools
import os
from pathlib import Path

import jax
import numpy as np

from memrl.learn.learners import LEARNERS, learner_for
from memrl.learn.run_config import RunConfig
from memrl.learn.supervised_config import SupervisedConfig
from memrl.run.folder import RunFolder


def final_params(folder) -> list:
    """The parameters of each seed's last checkpoint (seeds without one are skipped)."""
    config = folder.load_config()
    template = learner_for(config).init(jax.random.PRNGKey(0))  # checkpoints have the training shapes
    runners = [folder.load_checkpoint(seed, template) for seed in config.seed_list()]
    return [runner.params for runner in runners if runner is not None]


def seed_params(folder, seed: int, learner=None):
    """The parameters of ``seed``'s last checkpoint (read with ``learner``'s shapes, default the
    run's); refuses a seed the run does not have or has not checkpointed yet."""
    config = folder.load_config()
    seeds = config.seed_list()
    if seed not in seeds:
        raise ValueError(f"{folder.path} has seeds {seeds}, not {seed}")
    learner = learner_for(config) if learner is None else learner
    runner = folder.load_checkpoint(seed, learner.init(jax.random.PRNGKey(0)))
    if runner is None:
        raise FileNotFoundError(f"{folder.checkpoint_path(seed)}: seed {seed} of {folder.path} has no checkpoint yet")
    return runner.params


@dataclasses.dataclass(frozen=True)
class TrainedSeed:
    """One seed of a run folder, loaded: its config, its learner (built once) and its last parameters."""

    config: object
    learner: object
    params: object


LOADERS = {
    "load_policy": tuple(n for n in LEARNERS.names() if issubclass(LEARNERS.factory(n).config_class, RunConfig)),
    "load_predictor": tuple(
        n for n in LEARNERS.names() if issubclass(LEARNERS.factory(n).config_class, SupervisedConfig)
    ),
}
"""the Python loaders of trained runs and the learners whose run folders each loads: a policy of every
learner that acts in an environment, a predictor of the supervised one"""


def trained_seed(run_folder: str | Path, seed: int, loader: str) -> TrainedSeed:
    """Seed ``seed`` of the run in ``run_folder`` for ``loader`` (one of ``LOADERS``), from its last
    checkpoint; refuses a run of a learner that ``loader`` does not load, naming the one that does."""
    folder = RunFolder(Path(run_folder))
    config = folder.load_config()
    if config.learner not in LOADERS[loader]:
        other = next(name for name, learners in LOADERS.items() if config.learner in learners)
        raise ValueError(
            f"{loader} loads {', '.join(LOADERS[loader])} runs; this run folder holds a {config.learner} run "
            f"(load it with memrl.{other})"
        )
    learner = learner_for(config)
    return TrainedSeed(config, learner, seed_params(folder, seed, learner))


def check_starting_params(config, like) -> None:
    """Refuse ``config.init_params`` (a run folder whose last parameters each seed starts from)
    unless it holds a checkpoint for every seed of ``config`` and its parameters have the shapes of
    ``like`` (this run's, e.g. from ``jax.eval_shape``)."""
    folder = RunFolder(Path(config.init_params))
    if not folder.config_path.exists():
        raise FileNotFoundError(f"init_params: {folder.path} is not a run folder (no config.json)")
    missing = [seed for seed in config.seed_list() if not folder.checkpoint_path(seed).exists()]
    if missing:
        raise FileNotFoundError(f"init_params: {folder.path} has no checkpoint of seed(s) {missing}")
    theirs = jax.eval_shape(learner_for(folder.load_config()).init, jax.random.PRNGKey(0)).params
    differ = shape_differences(theirs, like)
    if differ:
        raise ValueError(
            f"init_params: {folder.path}'s parameters differ from this run's at {len(differ)} place(s), e.g. {differ[0]}"
        )


def shape_differences(there, here) -> list[str]:
    """Where two parameter trees differ in shape: "name: shape there, shape here" per leaf."""
    shapes = lambda tree: {
        jax.tree_util.keystr(path): leaf.shape for path, leaf in jax.tree_util.tree_leaves_with_path(tree)
    }
    there, here = shapes(there), shapes(here)
    return [
        f"{name}: {there.get(name, 'absent')} there, {here.get(name, 'absent')} here"
        for name in sorted(there.keys() | here.keys())
        if there.get(name) != here.get(name)
    ]


def starting_params(config, seeds) -> dict:
    """seed -> the parameters that seed of ``config`` starts from: the last checkpoint of the same
    seed of ``config.init_params``'s run (``check_starting_params`` has checked them), read with one
    template for all ``seeds``."""
    folder = RunFolder(Path(config.init_params))
    template = learner_for(folder.load_config()).init(jax.random.PRNGKey(0))
    return {seed: folder.load_checkpoint(seed, template).params for seed in seeds}


def agent_evaluations(
    config, params: list, key, num_steps: int, amnesic: bool = False, greedy: bool = False, **overrides
) -> list[tuple[np.ndarray, ...]]:
    """Per entry of ``params``: (done, episode return where done, reward), each [num_steps,
    num_envs], of that agent acting (sampling; its most probable action if ``greedy``) in fresh
    environments of ``config`` with ``overrides`` (fields: e.g. ``env``, ``core``); one compile.
    ``amnesic``: with its memory reset before every step (``Actor.evaluate``)."""
    learner = learner_for(dataclasses.replace(config, **overrides))
    evaluate = jax.jit(learner.evaluate, static_argnums=(2, 3, 4))
    return [tuple(np.asarray(a) for a in evaluate(p, key, num_steps, amnesic, greedy)) for p in params]


def agent_rewards(config, params: list, key, num_steps: int, amnesic: bool = False, **overrides) -> list[np.ndarray]:
    """Per entry of ``params``: rewards [num_steps, num_envs] (see ``agent_evaluations``)."""
    return [reward for _, _, reward in agent_evaluations(config, params, key, num_steps, amnesic, **overrides)]


def agent_episode_returns(config, params: list, key, num_steps: int, **overrides) -> list[np.ndarray]:
    """Per entry of ``params``: the returns of the episodes that ended (see ``agent_evaluations``)."""
    return [returns[done] for done, returns, _ in agent_evaluations(config, params, key, num_steps, **overrides)]


def held_out_batches(
    folder, num_sequences: int, batch_size: int = 1280, seed: int = 2018
) -> list[dict[str, list[float]]]:
    """Per seed of a supervised run: its final model's accuracies on each of ``num_sequences //
    batch_size`` batches of fresh held-out sequences (one compile; the same sequences for every run
    with the same task); NaN where a batch has nothing a score counts."""
    if num_sequences % batch_size:
        raise ValueError(f"num_sequences must be a multiple of batch_size {batch_size}, got {num_sequences}")
    learner = learner_for(folder.load_config())
    evaluate = jax.jit(learner.evaluate, static_argnums=2)
    keys = jax.random.split(jax.random.PRNGKey(seed), num_sequences // batch_size)
    per_seed = []
    for params in final_params(folder):
        batches = [evaluate(params, key, batch_size) for key in keys]
        per_seed.append({name: [float(b[name]) for b in batches] for name in batches[0]})
    return per_seed


def evaluation_config(config, components: dict):
    """``config`` with the components ``components`` (field -> component: its core, its environment
    or task with other settings) in place of its own, to test a trained model where it did not train;
    a supervised run's curriculum stages are dropped."""
    stages = {"stages": ()} if "task" in config.COMPONENTS else {}
    return dataclasses.replace(config, **components, **stages)


def changed_settings(config, evaluated) -> dict:
    """The component settings by which ``evaluated`` differs from ``config`` (a component made by
    another name: the field, its new name)."""
    changed = {}
    for field in config.COMPONENTS:
        before, after = config.component_record(field), evaluated.component_record(field)
        if before["kind"] != after["kind"]:
            changed[field] = after["kind"]
        changed |= {k: v for k, v in after.items() if k != "kind" and before.get(k) != v}
    return changed


def check_evaluation_size(steps: int, num_envs: int) -> None:
    """Refuse an evaluation whose per-step results ([steps, num_envs] done flags, returns and
    rewards) would not fit in a quarter of this machine's memory."""
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    most = min(memory // 4 // (num_envs * 3 * 4), 2**31 - 1)  # a step count JAX holds as int32
    if steps > most:
        raise ValueError(
            f"--steps {steps:,} x {num_envs} environments would keep {steps * num_envs * 12 / 2**30:,.1f} GiB of "
            f"per-step results; this machine has {memory / 2**30:,.0f} GiB: give at most {most:,} steps"
        )


def evaluation_lines(
    folder,
    steps: int,
    seed: int,
    components: dict,
    amnesic: bool = False,
    deterministic: bool = False,
) -> list[str]:
    """``memrl eval``: one line per seed of ``folder``, its last checkpoint evaluated over ``steps``
    (``evaluation_summary``: mean episode return ± its standard error, or held-out accuracy) with
    ``components`` (``evaluation_config``) in place of the run's; refuses settings that change the parameters' shapes
    and acting options that a supervised run does not have."""
    config = folder.load_config()
    for flag, given in (("--amnesic", amnesic), ("--deterministic", deterministic)):
        if given and "env" not in config.COMPONENTS:
            raise ValueError(
                f"{flag} applies to actor-critic runs; {folder.path} is a {config.learner} run on a sequence task"
            )
    if not any(folder.checkpoint_path(s).exists() for s in config.seed_list()):
        trained = max(len(folder.read_metrics(s)) for s in config.seed_list())
        raise FileNotFoundError(
            f"{folder.path} has no checkpoint ({folder.checkpoint_path(config.seed_list()[0])} and its other seeds' "
            + (
                f"are missing, though its metrics record {trained} updates: were they removed?)"
                if trained
                else "do not exist yet: no seed has trained a whole chunk of updates)"
            )
            + ": nothing to evaluate"
        )
    if "env" in config.COMPONENTS:
        check_evaluation_size(steps, config.num_envs)
    learner, evaluated = learner_for(config), evaluation_config(config, components)
    template = learner.init(jax.random.PRNGKey(0))
    evaluator = learner if evaluated == config else learner_for(evaluated)
    changed = changed_settings(config, evaluated)
    if shape_differences(template.params, jax.eval_shape(evaluator.init, jax.random.PRNGKey(0)).params):
        raise ValueError(
            f"the parameters of {folder.path} do not fit the settings {changed}; "
            "only settings that keep the model's parameter shapes can be changed"
        )
    notes = [" ".join(f"{k} {v}" for k, v in changed.items())] if changed else []
    if amnesic:
        notes.append("memory reset before every step")
    if deterministic:
        notes.append("most probable actions")
    settings = f" ({'; '.join(notes)})" if notes else ""
    acting = dict(amnesic=amnesic, greedy=deterministic) if "env" in config.COMPONENTS else {}
    evaluate = jax.jit(functools.partial(evaluator.evaluate, **acting), static_argnums=2)
    lines = []
    for s in config.seed_list():
        runner = folder.load_checkpoint(s, template)
        if runner is None:
            lines.append(f"seed {s}: no checkpoint")
            continue
        results = evaluate(runner.params, jax.random.PRNGKey(seed), steps)
        lines.append(
            f"seed {s} (update {int(runner.update)}): {evaluator.evaluation_summary(results, steps)}{settings}"
        )
    return lines
