"""Which stored chunks HTM reads at each step of an episode (Lampinen et al. 2021, Sec. 2).

At step t each HTM layer scores the chunks in its store, R = softmax(Q(LN(y_t)) · S) over the
chunks written before t, and attends in detail within the top-k of them. ``memrl analyze
chunk-selection RUN`` loads a trained RL run with an ``htm`` core, lets the final agent act (sampling,
as in training) in fresh environments, and draws for the first episode of the first environment,
per layer, R over (step, chunk) with the k chunks read marked, and the steps with a reward. The
paper describes the selection (Fig. 1) but draws no such figure; this one shows whether, say, a
Ballet agent at the choice reads the chunks that hold the dances.

Chunk j of an episode holds its steps j·(C − o) .. j·(C − o) + C − 1 (C = chunk_size, o =
chunk_overlap), is written after its last step, so steps after it can read it, and stays in store
slot j mod N (N = num_chunks) until chunk j + N overwrites it.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import jax
import numpy as np
import tyro

from memrl.analysis import ANALYSES
from memrl.settings import Count, OutputFolder, Seed


def sown_chunk_selection(recorded) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per HTM layer, in layer order: (relevance [T, B, N], selected [T, B, k]) from what
    ``env_step(..., record=True)`` recorded over T steps."""
    found = {}

    def walk(tree, path):
        if isinstance(tree, dict):
            if "chunk_relevance" in tree:
                layer = next(int(p.rsplit("_", 1)[1]) for p in path if p.startswith("layer_"))
                found[layer] = (
                    np.asarray(tree["chunk_relevance"][0])[:, :, 0],
                    np.asarray(tree["chunk_selected"][0])[:, :, 0],
                )
            for name, value in tree.items():
                walk(value, (*path, name))

    walk(recorded, ())
    return [found[layer] for layer in sorted(found)]


def chunk_timeline(steps: int, chunk_size: int, overlap: int, num_chunks: int) -> np.ndarray:
    """[steps, num_chunks]: the episode's chunk number that each store slot holds when step t
    reads (-1: none yet). Chunk j ends at step C − 1 + j·(C − o) and is readable after it."""
    stride = chunk_size - overlap
    ends = chunk_size - 1 + stride * np.arange(steps)  # chunk j's last step
    holder = np.full((steps, num_chunks), -1)
    for t in range(steps):
        for j in np.flatnonzero(ends < t):  # chunks written before step t, oldest first: later ones overwrite
            holder[t, j % num_chunks] = j
    return holder


def relevance_by_chunk(relevance: np.ndarray, selected: np.ndarray, holder: np.ndarray):
    """For one episode: R [T, J] (softmax over the readable chunks, NaN where a chunk is not in
    store) and read [T, J] (the top-k chunks read), indexed by the episode's chunk number j."""
    steps, chunks = holder.shape[0], max(int(holder.max()) + 1, 1)
    scores = np.full((steps, chunks), np.nan)
    read = np.zeros((steps, chunks), bool)
    for t in range(steps):
        slots = np.flatnonzero(holder[t] >= 0)
        if not slots.size:
            continue
        r = relevance[t, slots] - relevance[t, slots].max()
        scores[t, holder[t, slots]] = np.exp(r) / np.exp(r).sum()
        chosen = [s for s in selected[t] if holder[t, s] >= 0]
        read[t, holder[t, chosen]] = True
    return scores, read


def draw(
    layers: list[tuple[np.ndarray, np.ndarray]], rewards: np.ndarray, chunk_stride: int, path: Path, title: str
) -> None:
    """One panel per layer: R over (step, chunk) with the chunks read marked; reward steps as lines."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(layers), 1, figsize=(10, 2.6 * len(layers)), squeeze=False, sharex=True)
    for i, (ax, (scores, read)) in enumerate(zip(axes[:, 0], layers)):
        image = ax.imshow(
            scores.T, aspect="auto", origin="lower", cmap="viridis", vmin=0.0, vmax=1.0, interpolation="nearest"
        )
        t, j = np.nonzero(read)
        ax.scatter(t, j, s=5, c="white", marker="s", edgecolors="black", linewidths=0.3, label="read (top-k)")
        for step in np.flatnonzero(rewards):
            ax.axvline(step, color="red", linewidth=0.8)
        ax.set_ylabel(f"layer {i + 1}\nchunk (from step)")
        ticks = ax.get_yticks()
        ax.set_yticks([y for y in ticks if 0 <= y < scores.shape[1]])
        ax.set_yticklabels([f"{int(y)} ({int(y) * chunk_stride})" for y in ax.get_yticks()], fontsize=7)
        fig.colorbar(image, ax=ax, label="R")
    axes[0, 0].legend(loc="upper left", fontsize=7)
    axes[-1, 0].set_xlabel("step of the episode (red: a reward)")
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def record_episode(config, params, key, steps: int):
    """The agent of ``config`` with ``params`` acting ``steps`` steps in fresh environments:
    (per layer (relevance, selected) of environment 0, its rewards [T], its dones [T])."""
    from memrl.learn.learners import learner_for

    learner = learner_for(config)
    runner = learner.init(key).replace(params=params)

    @jax.jit
    def act(runner):
        return jax.lax.scan(lambda r, _: learner.env_step(r, params, record=True), runner, None, steps)[1]

    transitions, done, _, recorded = act(runner)
    layers = [(relevance[:, 0], selected[:, 0]) for relevance, selected in sown_chunk_selection(recorded)]
    return layers, np.asarray(transitions.reward[:, 0]), np.asarray(done[:, 0])


def command(
    run: tyro.conf.Positional[Path],
    seed: Seed = 0,
    env: str | None = None,
    steps: Count = 1024,
    out: OutputFolder | None = None,
) -> None:
    """Draw which chunks a trained HTM agent reads at each step of an episode, per layer.

    Args:
        run: an RL run folder (memrl train ppo / train impala / reproduce) with an htm core.
        seed: which of the run's seeds to load.
        env: environment to act in (default: the run's own; e.g. ballet/8_delay16 for an agent
            trained on ballet/mixed).
        steps: steps to act; the first episode of the first environment is drawn (it must end
            within them, or the drawing stops at steps).
        out: folder for chunk_selection.png and chunk_selection.npz (default RUN/analysis).
    """
    from memrl.console import console
    from memrl.run.final_agents import seed_params
    from memrl.run.folder import RunFolder

    folder = RunFolder(Path(run))
    config = folder.load_config()
    if config.learner == "supervised":
        raise ValueError(
            f"{run} is a supervised run; `analyze chunk-selection` reads an RL run (train ppo, train impala) with an htm core"
        )
    if config.core_name != "htm":
        raise ValueError(f"{run} has core {config.core_name!r}; `analyze chunk-selection` reads an htm core")
    if steps < 1:
        raise ValueError(f"steps must be >= 1, got {steps}")
    params = seed_params(folder, seed)
    if env is not None:
        config = dataclasses.replace(config, env=env)
    layers, rewards, done = record_episode(config, params, jax.random.PRNGKey(2021), steps)
    length = int(np.argmax(done)) + 1 if done.any() else steps
    core = config.core
    holder = chunk_timeline(length, core.chunk_size, core.chunk_overlap, core.num_chunks)
    by_chunk = [relevance_by_chunk(relevance[:length], selected[:length], holder) for relevance, selected in layers]
    out = Path(out) if out is not None else folder.path / "analysis"
    out.mkdir(parents=True, exist_ok=True)
    draw(
        by_chunk,
        rewards[:length],
        core.chunk_size - core.chunk_overlap,
        out / "chunk_selection.png",
        f"htm on {config.trained_on} (seed {seed}): chunk relevance R per step, top-{core.k} read marked; episode of {length} steps",
    )
    np.savez(
        out / "chunk_selection.npz",
        rewards=rewards[:length],
        holder=holder,
        **{f"layer_{i}_{name}": a for i, pair in enumerate(by_chunk) for name, a in zip(("relevance", "read"), pair)},
    )
    console.print(f"chunk selection over {length} steps, {len(layers)} layers -> {out / 'chunk_selection.png'}")


ANALYSES.register("chunk-selection", command)
