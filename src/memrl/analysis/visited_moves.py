"""Which moves from here are already in memory? A supervised check of the EPN planner against an
LSTM on what within-trial exploration needs.

Not an analysis from the paper. On the Memory&Planning Game an agent beats the best memoryless
policy (the two-move walk) only by reading its memory, and the first thing worth reading is
which moves from the current cell it has already made. For a random walk of ``length`` steps on a
fresh n×n map (labels permuted per walk), the label of move a at step t is 1 when the transition
from the current cell along a, or the one back along a into it, is among the walk's transitions up
to t, so that a memory of the walk holds it. Both models get 16 walks × 16 random query steps per
Adam step (lr 1e-3) and are trained by binary cross-entropy over the 4 moves:

- ``epn``: the EPN core of the cpu preset (embedding 64, width 64, 2 heads, 2 iterations, capacity
  = length), its memory the walk's rows up to t, the current cell as its state and a random goal;
  a linear decoder reads the labels from the planner output;
- ``lstm``: an LSTM of 256 units reading the walk (one-hot label and previous action, embedded to
  64), a linear decoder at step t.

The reference is the loss of a reader that knows only t: the entropy of p(label | t), which a
planner reaches by counting its rows.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

import jax
import jax.numpy as jnp
import numpy as np
import optax

from memrl import cores, envs
from memrl.agents.sequence_model import SequenceModel
from memrl.analysis import ANALYSES
from memrl.analysis.chunked_training import check_chunks, train_in_chunks
from memrl.analysis.planner_distance_training import init_planner
from memrl.envs.memory_planning import INVERSE_MOVES
from memrl.envs.memory_planning_policies import torus_neighbors
from memrl.settings import Count, OutputFolder, Seed

NUM_MOVES = 4
MODELS = ("epn", "lstm")


def random_walk(key, maze_size: int, length: int):
    """(node labels [n²], nodes [length], actions [length]) of a uniform random walk on a fresh map;
    ``actions[s]`` leads from ``nodes[s − 1]`` to ``nodes[s]`` (``actions[0]`` is not taken)."""
    game = envs.make(f"memory-planning/{maze_size}x{maze_size}")
    neighbors = torus_neighbors(game)
    label_key, start_key, action_key = jax.random.split(key, 3)
    actions = jax.random.randint(action_key, (length,), 0, NUM_MOVES)

    def move(node, action):
        return neighbors[node, action], neighbors[node, action]

    start = jax.random.randint(start_key, (), 0, game.num_nodes)
    _, later = jax.lax.scan(move, start, actions[1:])
    return jax.random.permutation(label_key, game.num_nodes), jnp.concatenate([start[None], later]), actions


def known_moves(nodes, actions) -> jax.Array:
    """[length, 4] bool: whether move a from ``nodes[t]`` is a transition of the walk up to t, either way."""
    steps = jnp.arange(1, len(nodes))

    def at(t):
        taken = (steps <= t)[:, None]
        forward = (nodes[steps - 1] == nodes[t])[:, None] & (actions[steps][:, None] == jnp.arange(NUM_MOVES))
        back = (nodes[steps] == nodes[t])[:, None] & (INVERSE_MOVES[actions[steps]][:, None] == jnp.arange(NUM_MOVES))
        return jnp.any(taken & (forward | back), 0)

    return jax.vmap(at)(jnp.arange(len(nodes)))


def count_only_loss(key, maze_size: int, length: int, walks: int = 2000) -> float:
    """The cross-entropy of p(label | t), estimated on ``walks`` walks: what a reader of t alone reaches."""

    def labels(key):
        _, nodes, actions = random_walk(key, maze_size, length)
        return known_moves(nodes, actions)

    p = np.asarray(jax.jit(jax.vmap(labels))(jax.random.split(key, walks))).mean((0, 2))  # [length]
    p = np.clip(p, 1e-12, 1 - 1e-12)
    return float(np.mean(-(p * np.log(p) + (1 - p) * np.log(1 - p))))


def lstm_model(maze_size: int, hidden: int = 256, embed_dim: int = 64) -> SequenceModel:
    """An LSTM reading (one-hot label, one-hot previous action) per step, 4 outputs."""
    return SequenceModel(cores.make("lstm", hidden=hidden), "vectors", maze_size**2 + 5, NUM_MOVES, embed_dim=embed_dim)


def previous_actions(actions):
    """[length, 5]: the one-hot action that led to each step (zeros at the start), as an agent gets it."""
    return jax.nn.one_hot(actions, 5).at[0].set(0.0)


def bit_loss(logits, known):
    """(binary cross-entropy, fraction of bits right) over the 4 moves, averaged."""
    return optax.sigmoid_binary_cross_entropy(logits, known).mean(), ((logits > 0) == known).mean()


def epn_loss(params, key, core, walks: int, queries: int, maze_size: int, length: int):
    """The EPN planner + linear decoder on ``walks`` × ``queries`` (walk, step) queries: (loss, (accuracy,))."""
    core_params, decoder = params
    num_labels = maze_size**2

    def one_walk(key):
        walk_key, time_key, goal_key = jax.random.split(key, 3)
        labels, nodes, actions = random_walk(walk_key, maze_size, length)
        one_hot = lambda n: jax.nn.one_hot(labels[n], num_labels)
        state = core.apply(core_params, one_hot(nodes), one_hot(nodes), method=core.embed)[0]
        previous_state = jnp.concatenate([jnp.zeros_like(state[:1]), state[:-1]])
        rows = core.apply(core_params, state, previous_actions(actions), previous_state, method=core.memory_row)
        t = jax.random.randint(time_key, (queries,), 0, length)
        query_state, goal = core.apply(
            core_params,
            one_hot(nodes[t]),
            one_hot(jax.random.randint(goal_key, (queries,), 0, num_labels)),
            method=core.embed,
        )
        memories = jnp.broadcast_to(rows, (queries, *rows.shape))
        plan = core.apply(core_params, memories, (t + 1).astype(jnp.float32), query_state, goal, method=core.plan)
        return plan @ decoder["w"] + decoder["b"], known_moves(nodes, actions)[t]

    logits, known = jax.vmap(one_walk)(jax.random.split(key, walks))
    loss, accuracy = bit_loss(logits, known)
    return loss, (accuracy,)


def lstm_loss(params, key, model, walks: int, queries: int, maze_size: int, length: int):
    """The LSTM on ``walks`` walks, scored at ``queries`` random steps of each: (loss, (accuracy,))."""

    def one_walk(key):
        walk_key, time_key = jax.random.split(key)
        labels, nodes, actions = random_walk(walk_key, maze_size, length)
        inputs = jnp.concatenate([jax.nn.one_hot(labels[nodes], maze_size**2), previous_actions(actions)], -1)
        return inputs, known_moves(nodes, actions), jax.random.randint(time_key, (queries,), 0, length)

    inputs, known, t = jax.vmap(one_walk)(jax.random.split(key, walks))
    logits = jnp.swapaxes(model.apply(params, jnp.swapaxes(inputs, 0, 1)), 0, 1)  # [walks, length, 4]
    pick = lambda x: jnp.take_along_axis(x, t[..., None], axis=1)
    loss, accuracy = bit_loss(pick(logits), pick(known))
    return loss, (accuracy,)


def init_model(name: str, key, maze_size: int, length: int, **sizes):
    """(loss function, its model argument, initial parameters) of model ``name``."""
    if name == "epn":
        core = cores.make("epn", capacity=length, **sizes)
        return epn_loss, core, init_planner(core, key, maze_size, NUM_MOVES)
    if name == "lstm":
        model = lstm_model(maze_size, **sizes)
        return lstm_loss, model, model.init(key, jnp.zeros((length, 1, maze_size**2 + 5)))
    raise ValueError(f"unknown model {name!r}; known: {', '.join(MODELS)}")


def train_model(
    name: str,
    key,
    maze_size: int = 3,
    length: int = 100,
    steps: int = 2000,
    walks: int = 16,
    queries: int = 16,
    lr: float = 1e-3,
    chunk: int = 100,
    checkpoint_dir: Path | None = None,
    on_chunk=None,
    **sizes,
):
    """Train model ``name``; returns its curve [steps // chunk, 2] (mean loss, mean accuracy per chunk).
    An interrupted training continues from ``checkpoint_dir`` (:func:`train_in_chunks`)."""
    init_key, data_key = jax.random.split(key)
    loss, model, params = init_model(name, init_key, maze_size, length, **sizes)
    settings = {
        "model": name,
        "key": np.asarray(jax.random.key_data(key)).tolist(),
        "maze_size": maze_size,
        "length": length,
        "steps": steps,
        "walks": walks,
        "queries": queries,
        "lr": lr,
        "chunk": chunk,
        "sizes": sizes,
    }
    _, curve = train_in_chunks(
        loss,
        (model, walks, queries, maze_size, length),
        params,
        data_key,
        steps,
        chunk,
        lr,
        checkpoint_dir=checkpoint_dir,
        settings=settings,
        what="a visited-moves run",
        on_chunk=on_chunk,
    )
    return curve


def command(
    models: tuple[Literal["epn", "lstm"], ...] = MODELS,
    maze_size: int = 3,
    steps: Count = 2000,
    seed: Seed = 0,
    out: OutputFolder = Path("runs/analysis/visited-moves"),
) -> None:
    """Train an EPN planner and an LSTM to tell which moves from the current cell a random walk's
    memory holds (a supervised check of what within-trial exploration needs; not an analysis from
    the paper), against a reader of the step count alone.

    Args:
        models: models to train (epn, lstm).
        maze_size: n of the n×n map (walks of 100 steps).
        steps: Adam steps per model (16 walks × 16 queries each).
        seed: seed of the initialisations and the walks.
        out: folder for visited_moves.png/json and each model's checkpoint (saved every 100 steps;
            running the same command again continues an interrupted run).
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from memrl.console import console

    if maze_size < 3:
        raise ValueError(f"maze_size must be >= 3, got {maze_size}")
    check_chunks(steps, 100)
    key = jax.random.PRNGKey(seed)
    reference = count_only_loss(jax.random.fold_in(key, 1), maze_size, 100)
    console.print(f"a reader of the step count alone: loss {reference:.4f}")
    curves = {}
    for name in models:
        curves[name] = train_model(
            name,
            key,
            maze_size,
            steps=steps,
            checkpoint_dir=out / name,
            on_chunk=lambda done, loss, accuracy, name=name: console.print(
                f"{name} step {done}/{steps}  loss {loss:.4f}  accuracy {accuracy:.3f}"
            ),
        )
    fig, ax = plt.subplots(figsize=(6, 4))
    for name, curve in curves.items():
        ax.plot(np.arange(1, len(curve) + 1) * steps / len(curve), curve[:, 0], label=name)
    ax.axhline(reference, color="gray", linestyle="--", label="step count alone")
    ax.set_xlabel("training step (16 walks × 16 queries)")
    ax.set_ylabel("cross-entropy per move")
    ax.set_title(f"which moves from here are in memory? ({maze_size}x{maze_size}, 100-step walks)")
    ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(out / "visited_moves.png", dpi=120)
    plt.close(fig)
    (out / "visited_moves.json").write_text(
        json.dumps({"count_only_loss": reference, "curves": {k: v.tolist() for k, v in curves.items()}})
    )
    for name, curve in curves.items():
        console.print(
            f"{name}: final loss {curve[-1, 0]:.4f}, accuracy {curve[-1, 1]:.3f} (step count alone: {reference:.4f})"
        )
    console.print(f"figure {out / 'visited_moves.png'}")


ANALYSES.register("visited-moves", command)
