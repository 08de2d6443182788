"""Evaluations that experiments run on their final agents after training (``Experiment.evaluation``),
and the expectations that read them."""

from __future__ import annotations

from pathlib import Path

import jax
import numpy as np

from memrl.envs.base import ENVS
from memrl.envs.graph_nav import GraphNavParams
from memrl.experiments.base import Expectation
from memrl.run.final_agents import agent_evaluations, final_params, held_out_batches
from memrl.run.folder import measured_rows

GRAPH_NAV_EPISODE = GraphNavParams().max_steps
"""steps of a graph-nav episode"""
TEST_JUNCTIONS = (5, 7, 9)
ITERATIONS = (1, 2, 4)


def fraction_correct_by_level(folders: dict, levels, right_per_episode, title: str) -> dict:
    """{"fraction_correct": run -> level -> {"correct", "episodes", "per_seed"}}, printed as a table:
    ``right_per_episode(config, params, level)`` gives, for the final agents of a run, one array per
    seed of a 0/1 value per finished episode on ``level``; "correct" is the mean of the seeds'
    fractions, "per_seed" those fractions (seeds that finished no episode left out)."""
    from rich.table import Table

    from memrl.console import console

    rows = {}
    for run, folder in folders.items():
        config, params = folder.load_config(), final_params(folder)
        rows[run] = {}
        for level in levels:
            seeds = [np.asarray(right, float) for right in right_per_episode(config, params, level)]
            fractions = [float(right.mean()) for right in seeds if right.size]
            if fractions:
                rows[run][level] = {
                    "correct": float(np.mean(fractions)),
                    "episodes": int(sum(r.size for r in seeds)),
                    "per_seed": fractions,
                }
    table = Table(title=title + " (mean over seeds; episodes)")
    table.add_column("run")
    for level in levels:
        table.add_column(level)
    for run, by_level in rows.items():
        table.add_row(
            run,
            *[
                f"{by_level[lv]['correct']:.2f} ({by_level[lv]['episodes']})" if lv in by_level else "-"
                for lv in levels
            ],
        )
    console.print(table)
    return {"fraction_correct": rows}


def frozen_choices(folders: dict, levels, env_of, right, steps: int, title: str, key_seed: int = 2021) -> dict:
    """{"fraction_correct": ..., "fraction_correct_without_memory": ...}: per run and level, the
    fraction of finished episodes whose last reward is ``right`` (a predicate on rewards: a choice
    scored right), each run's final agents frozen and greedy for ``steps`` steps in
    ``env_of(config, level)``, with their memory and with it reset before every step (what the same
    network does without memory); ``title`` names the measure and its chance level."""
    key = jax.random.PRNGKey(key_seed)
    results = {}
    for table, amnesic in (("fraction_correct", False), ("fraction_correct_without_memory", True)):

        def right_episodes(config, params, level, amnesic=amnesic):
            scored = agent_evaluations(config, params, key, steps, amnesic, True, env=env_of(config, level))
            return [right(reward[done]) for done, _, reward in scored]

        shown = f"{title}, frozen and greedy{', memory reset every step' if amnesic else ''}"
        results[table] = fraction_correct_by_level(folders, levels, right_episodes, shown)["fraction_correct"]
    return results


def learning_curve_areas(folder, metric: str) -> list[float]:
    """Per seed of the run in ``folder``, the mean of ``metric`` over the updates that measured it
    during training: the area under its learning curve over the run's length, higher for a learner
    that gets to the same level sooner."""
    return [
        float(np.mean([row[metric] for row in measured_rows(folder.read_metrics(seed), metric)]))
        for seed in folder.load_config().seed_list()
    ]


def seed_entry(per_seed: list[float], standard_error: float | None = None, episodes: int | None = None) -> dict:
    """An average entry {"mean", "standard_error", "episodes", "per_seed"} of one value per seed:
    the mean over seeds, with the noise within the seeds where known (else None)."""
    values = [float(v) for v in per_seed]
    return {
        "mean": float(np.mean(values)) if values else float("nan"),
        "standard_error": standard_error,
        "episodes": episodes,
        "per_seed": values,
    }


def solved_on_each_seed(returns: dict, level) -> dict:
    """Per run of ``returns`` (run -> an entry with per-seed values) an entry of 1 for each seed whose
    value is at least ``level(run)``, else 0: the fraction of seeds that solve the run's task."""
    return {
        run: seed_entry([float(value >= level(run)) for value in entry["per_seed"]]) for run, entry in returns.items()
    }


def batch_average(per_seed: list[list[float]], batch_size: int) -> dict:
    """An average entry {"mean", "standard_error", "episodes" (sequences), "per_seed"} of held-out
    batch accuracies of every seed: "per_seed" each seed's mean over its batches, "mean" the mean of
    those, "standard_error" the noise within the seeds (over the batches, each of ``batch_size``
    independent sequences; None with fewer than two), shown beside the margin over seeds, never as
    it; NaN batches (nothing scored) are left out. With ``batch_size`` 1 the values are single
    episodes (e.g. their returns)."""
    seeds = [[v for v in seed if not np.isnan(v)] for seed in per_seed]
    values = np.array([v for seed in seeds for v in seed])
    error = float(values.std(ddof=1) / np.sqrt(values.size)) if values.size > 1 else None
    return seed_entry([np.mean(seed) for seed in seeds if seed], error, int(values.size * batch_size))


def frozen_returns(
    num_steps: int,
    key_seed: int = 2020,
    num_envs: int | None = None,
    greedy: bool = False,
    levels: tuple[str, ...] = (),
):
    """An evaluation (``Experiment.evaluation``) of each run's final agents, frozen, acting ``num_steps``
    steps in fresh environments (``num_envs`` of them, or as many as the run trained with), sampling
    their actions (their most probable ones if ``greedy``): the tables "returns" and
    "returns_without_memory" (the same agents with their memory reset before every step), average
    entries of the finished episodes' returns (per seed the mean over its episodes; the standard
    error within the seeds beside), and "memory_gain", each seed's difference of the two (what its
    memory adds; a paired comparison over the same fresh environments). With ``levels`` (names of
    environments that take the run's settings, ``EnvironmentRegistry.variant``) the agents act in
    each of them instead, and each table holds per run an entry per level."""
    envs = {} if num_envs is None else {"num_envs": num_envs}

    def entries(config, params, overrides: dict) -> dict:
        """The three tables' entries of one run's agents acting with ``overrides``."""
        entry = {
            table: batch_average(
                [
                    returns[done].tolist()
                    for done, returns, _ in agent_evaluations(
                        config, params, jax.random.PRNGKey(key_seed), num_steps, amnesic, greedy, **overrides
                    )
                ],
                batch_size=1,
            )
            for table, amnesic in (("returns", False), ("returns_without_memory", True))
        }
        with_memory, without = (entry[t]["per_seed"] for t in ("returns", "returns_without_memory"))
        return {**entry, "memory_gain": seed_entry(np.subtract(with_memory, without))}

    def evaluate(folders: dict, out) -> dict:
        from memrl.console import console

        results = {"returns": {}, "returns_without_memory": {}, "memory_gain": {}}
        for run, folder in folders.items():
            config, params = folder.load_config(), final_params(folder)
            if not params:
                continue
            for level in levels or (None,):
                overrides = envs if level is None else {**envs, "env": ENVS.variant(config.env, level)}
                scored = entries(config, params, overrides)
                for table, entry in scored.items():
                    if level is None:
                        results[table][run] = entry
                    else:
                        results[table].setdefault(run, {})[level] = entry
                console.print(
                    f"{run}{'' if level is None else f' on {level}'}: frozen return {scored['returns']['mean']:.2f}, "
                    f"{scored['returns_without_memory']['mean']:.2f} with its memory reset before every step"
                )
        return results

    return evaluate


def held_out_evaluation(num_sequences: int, batch_size: int = 1280):
    """An experiment's ``evaluation``: each run's final accuracies on ``num_sequences`` held-out
    sequences per seed in batches of ``batch_size`` (``held_out_batches``), as ``{"held_out": {run:
    {name: average entry (batch_average), "seeds": n}}}``, the mean over seeds of each seed's
    accuracy (and of each kind of trial the task scores apart, ``accuracy_<kind>``), with the noise
    within the seeds (over the batches); prints a table."""
    from rich.table import Table

    from memrl.console import console

    def evaluate(folders: dict, out) -> dict:
        rows = {}
        for run, folder in folders.items():
            per_seed = held_out_batches(folder, num_sequences, batch_size)
            if per_seed:
                rows[run] = {name: batch_average([s[name] for s in per_seed], batch_size) for name in per_seed[0]} | {
                    "seeds": len(per_seed)
                }
        kinds = sorted({name for row in rows.values() for name in row if name.startswith("accuracy_")})
        names = ("accuracy", "token_accuracy", "sequence_accuracy", *kinds)
        table = Table(
            title=f"final models on {num_sequences:,} held-out sequences per seed (mean over seeds ± standard error within seeds)"
        )
        for column in ("run", *(name.replace("_", " ") for name in names), "seeds"):
            table.add_column(column)
        for run, row in rows.items():
            cells = [
                "-"
                if n not in row
                else f"{row[n]['mean']:.3f}"
                + ("" if row[n]["standard_error"] is None else f" ± {row[n]['standard_error']:.3f}")
                for n in names
            ]
            table.add_row(run, *cells, str(row["seeds"]))
        console.print(table)
        return {"held_out": rows}

    return evaluate


def held_out_expectation(
    run: str,
    op: str,
    threshold: float | None,
    why: str,
    against: str = "",
    central: bool = False,
    measure: str = "accuracy",
    learning: bool = False,
    parity: float = 0.0,
) -> Expectation:
    """An expectation on the final model's held-out ``measure`` ("accuracy", the task's own score,
    "token_accuracy", "sequence_accuracy" or "accuracy_<kind>") from ``held_out_evaluation``. An ordering is paired over
    seeds: seed i of every run of a task trains on the same batches, and all score the same held-out
    sequences."""
    return Expectation(
        run,
        op,
        threshold,
        why,
        evaluated=("held_out", measure),
        against=against,
        central=central,
        paired=bool(against),
        learning=learning,
        parity=parity,
    )


def above_chance(run: str, task, model: str, held_out: bool = True) -> Expectation:
    """A learning check: ``run``'s accuracy above a uniform guess among its ``task``'s outputs, on
    ``held_out_evaluation``'s sequences (or, ``held_out`` False, the run's final held-out metric)."""
    outputs = task.num_outputs
    why = f"{model} above a uniform guess among {outputs} answers (accuracy {1 / outputs:.3g})"
    if held_out:
        return held_out_expectation(run, ">", 1 / outputs, why, learning=True)
    return Expectation(run, ">", 1 / outputs, why, learning=True)


def oracle_return(junctions: int, key, episodes: int = 256) -> float:
    """The shortest-path oracle's mean return per 200-step episode on ``graph-nav/junctions``."""
    from memrl import envs
    from memrl.envs.graph_nav_policies import oracle
    from memrl.envs.scripted_policy import episode_rewards

    env = envs.make(f"graph-nav/{junctions}")
    return float(
        jax.jit(lambda k: episode_rewards(env, oracle(env), k, episodes, GRAPH_NAV_EPISODE))(key).sum(-1).mean()
    )


def graph_nav_generalisation(folders: dict, out: Path, episodes_per_env: int = 2) -> dict:
    """An evaluation of agents trained on ``graph-nav/5``: each final agent's fraction of the
    shortest-path oracle's return on 5, 7 and 9 junctions (EPN at 1, 2 and 4 planner iterations)."""
    from rich.table import Table

    from memrl.analysis.planning_metrics import episodes_from_stream
    from memrl.console import console
    from memrl.run.final_agents import agent_rewards, final_params

    key = jax.random.PRNGKey(2021)
    oracle = {j: oracle_return(j, key) for j in TEST_JUNCTIONS}
    rows = {}
    for run, folder in folders.items():
        config, params = folder.load_config(), final_params(folder)
        settings = [None] if config.core_name != "epn" else list(ITERATIONS)
        for iterations in settings:
            label = run.split("/", 1)[1] + ("" if iterations is None else f" ({iterations} iterations)")
            core = config.core if iterations is None else config.core.clone(iterations=iterations)
            rows[label] = {}
            for junctions in TEST_JUNCTIONS:
                per_seed = agent_rewards(
                    config,
                    params,
                    key,
                    episodes_per_env * GRAPH_NAV_EPISODE,
                    env=ENVS.variant(config.env, f"graph-nav/{junctions}"),
                    core=core,
                )
                if per_seed:
                    returns = np.concatenate([episodes_from_stream(r, GRAPH_NAV_EPISODE) for r in per_seed]).sum(1)
                    rows[label][junctions] = float(returns.mean() / oracle[junctions])
    table = Table(title="fraction of the oracle's return (trained on 5 junctions)")
    table.add_column("agent")
    for junctions in TEST_JUNCTIONS:
        table.add_column(f"{junctions} junctions (oracle {oracle[junctions]:.1f})")
    for label, by_size in rows.items():
        table.add_row(label, *[f"{by_size[j]:.2f}" if j in by_size else "-" for j in TEST_JUNCTIONS])
    console.print(table)
    return {"oracle_return": oracle, "fraction_of_oracle": rows}
