"""Distance-to-goal probe of a trained EPN planner (Ritter et al. 2021, Sec. 5, Fig. 4c-d).

The planner is frozen. For fresh Memory&Planning maps of the size it trained on, its memory is filled with every
transition of the map (each node × each move: the row [e(o'), e_a(a), e(o)]), and for random
(state, goal) pairs the planner output after i iterations is read. A linear softmax decoder per i,
trained on the outputs of some maps, classifies the true shortest-path distance on held-out maps;
accuracy per true distance shows how far the plan has propagated after i iterations, including
i beyond the iterations used in training ("thinking time").
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import optax
import tyro

from memrl import cores, envs
from memrl.analysis import ANALYSES
from memrl.envs.memory_planning import MOVES
from memrl.learn.optimizers import make_optimizer
from memrl.settings import Count, OutputFolder, Seed


def torus_distance(a_xy: jax.Array, b_xy: jax.Array, n: int) -> jax.Array:
    """Shortest-path distance between cells (x, y) of an n×n torus."""
    d = jnp.abs(a_xy - b_xy) % n
    return jnp.sum(jnp.minimum(d, n - d), -1)


def distance_classes(maze_size: int) -> int:
    """Number of distances on an n×n torus: 0 .. 2·⌊n/2⌋."""
    return 2 * (maze_size // 2) + 1


def accuracy_per_class(predicted, labels, classes: int) -> np.ndarray:
    """Fraction of each true class predicted right (NaN for a class that does not occur)."""
    predicted, labels = np.asarray(predicted), np.asarray(labels)
    return np.array([np.mean(predicted[labels == c] == c) if np.any(labels == c) else np.nan for c in range(classes)])


def probe_dataset(
    core: cores.MemoryCore,
    params,
    key,
    maps: int,
    queries: int,
    maze_size: int = 4,
    iterations: Sequence[int] | None = None,
):
    """(planner outputs [len(iterations), maps · queries, width] after each of ``iterations``
    (default: the core's own count), true distances [maps · queries]) for fresh maps."""
    iterations = (core.iterations,) if iterations is None else tuple(iterations)
    env = envs.make(f"memory-planning/{maze_size}x{maze_size}")
    n = env.num_nodes
    if core.capacity < 4 * n:
        raise ValueError(
            f"the distance probe fills the planner's memory with every transition of a {maze_size}x{maze_size} map "
            f"({4 * n} rows); this planner holds {core.capacity} (core.capacity): probe one that holds a map"
        )
    xy = env.xy(jnp.arange(n))

    def one_map(key):
        label_key, query_key = jax.random.split(key)
        labels = jax.random.permutation(label_key, n)
        one_hot = lambda nodes: jax.nn.one_hot(labels[nodes], n)
        sources = jnp.repeat(jnp.arange(n), 4)
        actions = jnp.tile(jnp.arange(4), n)
        targets = env.node((xy[sources] + MOVES[actions]) % maze_size)
        embed = lambda o: core.apply(params, o, o, method=core.embed)[0]
        rows = core.apply(
            params, embed(one_hot(targets)), jax.nn.one_hot(actions, 5), embed(one_hot(sources)), method=core.memory_row
        )
        memory = jnp.zeros((core.capacity, rows.shape[-1])).at[: len(rows)].set(rows)
        starts, goals = jax.random.randint(query_key, (2, queries), 0, n)
        state, goal = core.apply(params, one_hot(starts), one_hot(goals), method=core.embed)
        memories = jnp.broadcast_to(memory, (queries, *memory.shape))
        outputs = core.apply(
            params, memories, jnp.full((queries,), len(rows)), state, goal, iterations, method=core.plan_readouts
        )
        return outputs, torus_distance(xy[starts], xy[goals], maze_size)

    outputs, distances = jax.jit(jax.vmap(one_map))(
        jax.random.split(key, maps)
    )  # [maps, len(iterations), queries, width]
    return jnp.moveaxis(outputs, 0, 1).reshape(len(iterations), -1, outputs.shape[-1]), distances.reshape(-1)


def decoding_accuracy(train, test, classes: int, steps: int = 500, lr: float = 1e-2) -> np.ndarray:
    """Accuracy per true class on ``test`` of a linear softmax decoder fitted on ``train``."""
    (x_train, y_train), (x_test, y_test) = train, test
    mean, std = x_train.mean(0), x_train.std(0) + 1e-6
    x_train, x_test = (x_train - mean) / std, (x_test - mean) / std
    params = {"w": jnp.zeros((x_train.shape[1], classes)), "b": jnp.zeros(classes)}
    optimizer = make_optimizer(lr, max_grad_norm=None)

    def loss(p):
        logits = x_train @ p["w"] + p["b"]
        return optax.softmax_cross_entropy_with_integer_labels(logits, y_train).mean()

    def sgd(carry, _):
        p, state = carry
        updates, state = optimizer.update(jax.grad(loss)(p), state, p)
        return (optax.apply_updates(p, updates), state), None

    (params, _), _ = jax.lax.scan(sgd, (params, optimizer.init(params)), None, steps)
    return accuracy_per_class(jnp.argmax(x_test @ params["w"] + params["b"], -1), y_test, classes)


def distance_probe(
    core: cores.MemoryCore,
    params,
    max_iterations: int = 6,
    maps: int = 64,
    queries: int = 64,
    seed: int = 0,
    maze_size: int = 4,
) -> dict[int, np.ndarray]:
    """Iterations i -> decoding accuracy per true distance 0 .. 2·⌊n/2⌋ on held-out n×n maps."""
    train_key, test_key = jax.random.split(jax.random.PRNGKey(seed))
    iterations = range(1, max_iterations + 1)
    dataset = lambda key: probe_dataset(core, params, key, maps, queries, maze_size, iterations)
    (train_outputs, train_distances), (test_outputs, test_distances) = dataset(train_key), dataset(test_key)
    return {
        i: decoding_accuracy((train, train_distances), (test, test_distances), distance_classes(maze_size))
        for i, train, test in zip(iterations, train_outputs, test_outputs)
    }


def plot_accuracy_by_distance(ax, results: dict[int, np.ndarray], ylabel: str) -> None:
    """One line of accuracy against true distance per iteration count."""
    for iterations, accuracy in results.items():
        ax.plot(np.arange(len(accuracy)), accuracy, marker="o", label=f"{iterations} iteration{'s' * (iterations > 1)}")
    ax.set_xlabel("true distance to goal")
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)


def accuracy_table(results: dict[int, np.ndarray], title: str):
    """A rich table: one row per iteration count, one column per true distance."""
    from rich.table import Table

    table = Table(title=title)
    table.add_column("iterations")
    for d in range(len(next(iter(results.values())))):
        table.add_column(f"d={d}")
    for iterations, accuracy in results.items():
        table.add_row(str(iterations), *[f"{a:.2f}" for a in accuracy])
    return table


def command(
    run: tyro.conf.Positional[Path], seed: Seed = 0, max_iterations: Count = 6, out: OutputFolder | None = None
) -> None:
    """Distance-to-goal probe of a trained EPN (a Memory&Planning run folder), EPN Fig. 4c-d.

    Args:
        run: run folder of an epn or epn-nxk agent trained on a memory-planning/NxN game.
        seed: which seed's checkpoint.
        max_iterations: probe after 1 .. this many planner iterations.
        out: folder for distance_probe.png/json (default RUN/analysis).
    """
    import json

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from memrl.console import console
    from memrl.learn.learners import learner_for
    from memrl.run.folder import RunFolder

    folder = RunFolder(run)
    config = folder.load_config()
    if not config.trained_on.startswith("memory-planning/") or config.core_name not in ("epn", "epn-nxk"):
        raise ValueError(
            f"the distance probe needs an epn or epn-nxk run on a memory-planning/NxN game, got {config.core_name} on "
            f"{config.trained_on}"
        )
    maze_size = config.env.maze_size
    learner = learner_for(config)
    runner = folder.load_checkpoint(seed, learner.init(jax.random.PRNGKey(0)))
    if runner is None:
        raise FileNotFoundError(
            f"{run} has no checkpoint for seed {seed}; its run trains seeds {', '.join(map(str, config.seed_list()))} (--seed)"
        )
    core = learner.agent.core
    core_params = {"params": runner.params["params"]["core"]}
    results = distance_probe(core, core_params, max_iterations, maze_size=maze_size)

    out = out or run / "analysis"
    out.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(6, 4))
    plot_accuracy_by_distance(ax, results, "decoding accuracy (held-out maps)")
    chance = 1 / distance_classes(maze_size)
    ax.axhline(chance, color="gray", linestyle="--", linewidth=1)
    ax.set_title(f"distance probe, {config.core_name} (trained with {config.core.iterations} iterations)")
    fig.tight_layout()
    fig.savefig(out / "distance_probe.png", dpi=120)
    plt.close(fig)
    (out / "distance_probe.json").write_text(json.dumps({i: a.tolist() for i, a in results.items()}))
    table = accuracy_table(results, f"decoding accuracy by true distance (chance {chance:.2f})")
    console.print(table)
    console.print(f"figure {out / 'distance_probe.png'}")


ANALYSES.register("distance-probe", command)
