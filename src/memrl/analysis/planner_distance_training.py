"""Can the EPN planner compute shortest-path distances? A supervised check of the architecture.

Not an analysis from the paper. The paper's agents learn to plan from reward alone (Ritter et al.
2021, Sec. 5); at memrl's CPU budgets none does (docs/results.md), which leaves open whether the
planner could. This trains a fresh planner end to end, with a linear decoder on its output, to
classify the distance from a random state to a random goal of a fresh n×n Memory&Planning map whose
every transition is in memory (the memory of the distance probe,
:func:`memrl.analysis.distance_probe.probe_dataset`), by cross-entropy

    L = −log softmax(W · plan_i(memory, state, goal) + b)[d(state, goal)].

Labels are permuted per map, so distances beyond 1 can only be read off the memory by chaining
transitions: accuracy per true distance on held-out maps shows how far the planner propagates, and
running the trained planner with other iteration counts shows whether the computation extends
with thinking time (the paper's Fig. 4c-d, on a planner trained for it). Training with several
iteration counts at once averages L over them (shared planner and decoder), which asks every
iteration to leave a readable distance estimate.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Literal

import jax
import jax.numpy as jnp
import numpy as np
import optax

from memrl import cores
from memrl.analysis import ANALYSES
from memrl.analysis.chunked_training import train_in_chunks
from memrl.analysis.distance_probe import (
    accuracy_per_class,
    accuracy_table,
    distance_classes,
    plot_accuracy_by_distance,
    probe_dataset,
)
from memrl.nn.compiled_init import compiled_init
from memrl.settings import Count, LearningRate, OutputFolder, Seed


def init_planner(core: cores.MemoryCore, key, maze_size: int, outputs: int | None = None):
    """(core params, linear decoder params) for one-hot n²-label observations; the decoder has
    ``outputs`` outputs (default: one per distance class of the n×n torus)."""
    labels = maze_size * maze_size
    x = {"observation": jnp.zeros((1, labels)), "goal": jnp.zeros((1, labels)), "prev_action": jnp.zeros((1, 5))}
    core_key, decoder_key = jax.random.split(key)
    core_params = compiled_init(core, None, core_key, core.initialize_carry(None, (1,)), x, jnp.ones(1, bool))
    outputs = distance_classes(maze_size) if outputs is None else outputs
    decoder = {
        "w": jax.random.normal(decoder_key, (core.width, outputs)) / np.sqrt(core.width),
        "b": jnp.zeros(outputs),
    }
    return core_params, decoder


def distance_loss(params, key, core, maps: int, queries: int, maze_size: int, iterations: Sequence[int]):
    """(L averaged over the planner's readouts after each of ``iterations``, all on the same maps and queries, no metrics)."""
    core_params, decoder = params
    outputs, distances = probe_dataset(core, core_params, key, maps, queries, maze_size, iterations)
    logits = outputs @ decoder["w"] + decoder["b"]
    return optax.softmax_cross_entropy_with_integer_labels(
        logits, jnp.broadcast_to(distances, logits.shape[:-1])
    ).mean(), ()


def train_planner_on_distances(
    core,
    key,
    maze_size: int = 4,
    steps: int = 2000,
    maps: int = 16,
    queries: int = 16,
    lr: float = 1e-3,
    chunk: int = 100,
    iterations: Sequence[int] | None = None,
    checkpoint_dir: Path | None = None,
    on_chunk: Callable[[int, float], None] | None = None,
):
    """Train planner and decoder by Adam with the loss averaged over ``iterations`` (default: the
    core's own count); returns (core params, decoder, mean loss per ``chunk`` steps). With
    ``checkpoint_dir`` an interrupted run continues from its last chunk
    (:func:`memrl.analysis.chunked_training.train_in_chunks`); ``on_chunk(steps done, chunk's mean
    loss)`` reports progress."""
    iterations = (core.iterations,) if iterations is None else tuple(iterations)
    if not iterations or min(iterations) < 1:
        raise ValueError(f"training iterations must be a non-empty list of counts >= 1, got {iterations}")
    init_key, data_key = jax.random.split(key)
    settings = {
        "core": repr(core),
        "key": np.asarray(jax.random.key_data(key)).tolist(),
        "maze_size": maze_size,
        "steps": steps,
        "maps": maps,
        "queries": queries,
        "lr": lr,
        "chunk": chunk,
        "iterations": list(iterations),
    }
    (core_params, decoder), curve = train_in_chunks(
        distance_loss,
        (core, maps, queries, maze_size, iterations),
        init_planner(core, init_key, maze_size),
        data_key,
        steps,
        chunk,
        lr,
        checkpoint_dir=checkpoint_dir,
        settings=settings,
        what="a planner-distance run",
        on_chunk=on_chunk,
    )
    return core_params, decoder, curve[:, 0]


def accuracy_by_distance(
    core, core_params, decoder, key, iterations, maze_size: int = 4, maps: int = 64, queries: int = 64
) -> dict[int, np.ndarray]:
    """Iterations i -> held-out accuracy per true distance of the trained planner run for i iterations."""
    outputs, distances = probe_dataset(core, core_params, key, maps, queries, maze_size, iterations)
    predicted = jnp.argmax(outputs @ decoder["w"] + decoder["b"], -1)
    return {i: accuracy_per_class(p, distances, distance_classes(maze_size)) for i, p in zip(iterations, predicted)}


def command(
    variant: Literal["a2a", "nxk"] = "a2a",
    iterations: tuple[int, ...] = (2,),
    maze_size: int = 3,
    steps: Count = 2000,
    lr: LearningRate = 1e-3,
    seed: Seed = 0,
    max_iterations: Count = 6,
    out: OutputFolder = Path("runs/analysis/planner-distance"),
) -> None:
    """Train a fresh EPN planner to classify distance to goal from a full memory (a supervised
    check that the architecture can plan; not an analysis from the paper).

    Args:
        variant: a2a (all-to-all) or nxk (k = 50) planner.
        iterations: planner iterations during training; several (e.g. 1 2 3) average the loss over them.
        maze_size: n of the n×n torus (memory = all 4·n² transitions).
        steps: training steps (16 maps × 16 queries each).
        lr: Adam learning rate.
        seed: seed of the initialisation and of the training maps.
        max_iterations: evaluate with 1 .. this many iterations.
        out: folder for planner_distance.png/json and the training checkpoint (saved every 100
            steps; running the same command again continues an interrupted run).
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from memrl.console import console

    if maze_size < 3:
        raise ValueError(f"maze_size must be >= 3, got {maze_size}")
    memory_rows = 4 * maze_size * maze_size
    core = cores.make("epn" if variant == "a2a" else "epn-nxk", capacity=memory_rows)
    train_key, test_key = jax.random.split(jax.random.PRNGKey(seed))
    trained_with = "/".join(map(str, iterations))
    console.print(
        f"training a {variant} planner ({trained_with} iterations) on {maze_size}x{maze_size} maps for {steps} steps"
    )
    core_params, decoder, losses = train_planner_on_distances(
        core,
        train_key,
        maze_size,
        steps,
        lr=lr,
        iterations=iterations,
        checkpoint_dir=out,
        on_chunk=lambda done, loss: console.print(f"step {done}/{steps}  loss {loss:.4f}"),
    )
    results = accuracy_by_distance(core, core_params, decoder, test_key, range(1, max_iterations + 1), maze_size)

    fig, (loss_ax, ax) = plt.subplots(1, 2, figsize=(10, 4))
    loss_ax.plot(np.arange(1, len(losses) + 1) * steps / len(losses), losses)
    loss_ax.set_xlabel("training step")
    loss_ax.set_ylabel("cross-entropy")
    loss_ax.grid(alpha=0.3)
    plot_accuracy_by_distance(ax, results, "accuracy (held-out maps)")
    ax.set_title(f"{variant} planner trained with {trained_with} iterations on {maze_size}x{maze_size}")
    fig.tight_layout()
    fig.savefig(out / "planner_distance.png", dpi=120)
    plt.close(fig)
    (out / "planner_distance.json").write_text(
        json.dumps(
            {
                "trained_iterations": list(iterations),
                "losses": losses.tolist(),
                "accuracy": {i: a.tolist() for i, a in results.items()},
            }
        )
    )
    table = accuracy_table(results, f"held-out accuracy by true distance (final loss {losses[-1]:.3f})")
    console.print(table)
    console.print(f"figure {out / 'planner_distance.png'}")


ANALYSES.register("planner-distance", command)
