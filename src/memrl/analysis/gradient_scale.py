"""How large each parameter's gradient is at initialisation, inside the agent and under the learner's
own loss, beside the smallest gradient its optimiser moves at full step.

Adam's step is lr · m / (sqrt(v) + ε): where a parameter's gradients are far below ε the step is
about lr · g / ε, so the parameter barely moves (a hard-coded ε of 1e-5 held S6's scan parameters,
whose gradients start near 1e-8, at initialisation under PPO). TensorFlow's RMSprop adds ε inside
the square root, lr · g / sqrt(ms + ε), so there the floor is sqrt(ε). A parameter whose mean
|gradient| is within ``FLAG_FACTOR`` of that floor is flagged.

The gradient is the one the learner's optimiser receives in its first update (before clipping),
caught by an optax transformation chained in front of the learner's own: the same loss, batch
and unroll as a run, for any learner (PPO, IMPALA, supervised).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated, Literal, NamedTuple

import jax
import jax.numpy as jnp
import optax
import tyro

from memrl.analysis import ANALYSES
from memrl.settings import CoreName, OutputFolder

FLAG_FACTOR = 10.0
"""a parameter is flagged when its mean |gradient| is below this many times the optimiser's floor"""
DEFAULT_CORES = ("lstm", "gru", "lru", "s6", "ffm", "min-gru", "linear-attention", "amrl-max", "gtrxl")


class FirstGradient(NamedTuple):
    gradient: optax.Params
    seen: jax.Array


def catch_first_gradient() -> optax.GradientTransformation:
    """An optax transformation that passes updates through and keeps the first ones it sees."""

    def init(params):
        return FirstGradient(jax.tree.map(jnp.zeros_like, params), jnp.zeros((), bool))

    def update(updates, state, params=None):
        kept = jax.tree.map(lambda old, new: jnp.where(state.seen, old, new), state.gradient, updates)
        return updates, FirstGradient(kept, jnp.ones((), bool))

    return optax.GradientTransformation(init, update)


def optimiser_floor(config) -> tuple[str, float]:
    """(what it is, the smallest gradient the learner's optimiser moves at about full step)."""
    if getattr(config, "optimizer", "adam") == "rmsprop":
        return f"sqrt(RMSprop ε {config.rmsprop_eps:g})", math.sqrt(config.rmsprop_eps)
    return f"Adam ε {config.adam_eps:g}", config.adam_eps


def first_gradients(config, seed: int = 0) -> dict[str, float]:
    """Mean |gradient| of each parameter (its path in the parameter tree) in the first update of
    ``config``'s learner, as its optimiser receives it."""
    from memrl.learn.learners import learner_for

    learner = learner_for(config)
    learner.optimizer = optax.chain(catch_first_gradient(), learner.optimizer)
    state, _ = jax.jit(learner.update)(learner.init(jax.random.PRNGKey(seed)))
    caught = state.opt_state[0].gradient
    leaves = jax.tree_util.tree_leaves_with_path(caught)
    return {
        "/".join(str(getattr(k, "key", getattr(k, "idx", k))) for k in path): float(jnp.mean(jnp.abs(g)))
        for path, g in leaves
    }


def gradient_scale(config, seed: int = 0) -> list[dict]:
    """One row per parameter: its mean |gradient| at initialisation, the optimiser's floor and
    whether it is within ``FLAG_FACTOR`` of it."""
    what, floor = optimiser_floor(config)
    return [
        {
            "parameter": name,
            "mean_abs_gradient": value,
            "floor": floor,
            "floor_is": what,
            "flagged": bool(value < FLAG_FACTOR * floor),
        }
        for name, value in first_gradients(config, seed).items()
    ]


def run_config(learner: str, core: str, env: str, task: str):
    """The learner's default config with ``core`` on ``env`` (or, supervised, ``task``)."""
    from memrl import envs, tasks
    from memrl.agents.supervised_models import registry_of
    from memrl.learn.impala_config import ImpalaConfig
    from memrl.learn.ppo_config import PPOConfig
    from memrl.learn.supervised_config import SupervisedConfig

    if learner == "supervised":
        return SupervisedConfig(task=tasks.make(task), core=registry_of(core).make(core))
    return {"ppo": PPOConfig, "impala": ImpalaConfig}[learner](env=envs.make(env), core=registry_of(core).make(core))


def command(
    learner: Literal["ppo", "impala", "supervised"] = "ppo",
    core_names: Annotated[tuple[CoreName, ...], tyro.conf.arg(name="cores")] = DEFAULT_CORES,
    env: str = "tmaze/T-L",
    task: str = "copying",
    seed: int = 0,
    out: OutputFolder = Path("runs/analysis/gradient-scale"),
) -> None:
    """Each core's parameters' mean |gradient| at initialisation inside the agent, under the
    learner's loss and default optimiser, beside the optimiser's floor (Adam's ε; sqrt of RMSprop's).

    Args:
        learner: whose loss, batch and optimiser settings.
        core_names: cores to measure.
        env: the environment (ppo, impala).
        task: the sequence task (supervised).
        seed: initialisation and first batch.
        out: folder for gradient_scale.json.
    """
    import json

    from rich.table import Table

    from memrl.console import console

    results = {}
    for name in core_names:
        rows = gradient_scale(run_config(learner, name, env, task), seed)
        results[name] = rows
        core_rows = [r for r in rows if "/core/" in f"/{r['parameter']}/"] or rows
        table = Table(title=f"{name} under {learner}'s defaults: mean |gradient| at init ({rows[0]['floor_is']})")
        for column in ("parameter", "mean |gradient|", "× floor", "flagged"):
            table.add_column(column)
        for row in sorted(core_rows, key=lambda r: r["mean_abs_gradient"]):
            ratio = row["mean_abs_gradient"] / row["floor"]
            table.add_row(
                row["parameter"],
                f"{row['mean_abs_gradient']:.2e}",
                f"{ratio:.3g}",
                "[red]yes[/]" if row["flagged"] else "",
            )
        console.print(table)
        flagged = [r["parameter"] for r in rows if r["flagged"]]
        console.print(f"{name}: {len(flagged)} of {len(rows)} parameters within {FLAG_FACTOR:g}× of the floor")
    out.mkdir(parents=True, exist_ok=True)
    (out / "gradient_scale.json").write_text(json.dumps({"learner": learner, "cores": results}, indent=2))
    console.print(f"wrote {out / 'gradient_scale.json'}")


ANALYSES.register("gradient-scale", command)
