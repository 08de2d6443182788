"""The RMC's attention over a sequence (Santoro et al. 2018, Sec. 5.1, Fig. 3): at every step, how
much each memory slot (and the input row) attends to each slot and to the new input.

``memrl analyze attention RUN`` loads a supervised run's final model (an ``rmc`` core), feeds it
held-out sequences and draws, per sequence (rows) and step (columns), the first attention block's
weights averaged over heads: queries (the slots, then the input row) by keys (the same). On Nth
Farthest the rows are chosen as in Fig. 3: the reference vector seen last, first, and in the middle.
"""

from __future__ import annotations

from pathlib import Path

import jax
import numpy as np
import tyro

from memrl.analysis import ANALYSES
from memrl.settings import Count, OutputFolder, Seed


def sown_attention(intermediates) -> tuple[np.ndarray, ...]:
    """The ``attention`` entries sown anywhere in an ``intermediates`` collection: per block,
    weights [T, B, heads, queries, keys]."""
    if isinstance(intermediates, dict):
        if "attention" in intermediates:
            return tuple(np.asarray(w) for w in intermediates["attention"])
        for value in intermediates.values():
            found = sown_attention(value)
            if found:
                return found
    return ()


def attention_over_sequences(learner, params, inputs) -> tuple[np.ndarray, ...]:
    """Per block, the attention weights [T, B, heads, queries, keys] of the model on ``inputs``."""
    _, state = learner.model.apply(params, inputs, mutable=["intermediates"])
    weights = sown_attention(state.get("intermediates", {}))
    if not weights:
        raise ValueError(
            f"core {learner.config.core_name!r} records no attention weights; `analyze attention` reads an rmc core"
        )
    return weights


def reference_steps(task, inputs: np.ndarray) -> np.ndarray:
    """Nth Farthest: the step at which each sequence shows its reference vector [B]."""
    f, n = task.num_features, task.num_objects
    ids = inputs[:, :, f : f + n].argmax(-1)  # [T, B]
    reference = inputs[0, :, f + n : f + 2 * n].argmax(-1)  # [B]
    return (ids == reference[None]).argmax(0)


def chosen_sequences(config, task, inputs: np.ndarray, count: int) -> list[tuple[int, str]]:
    """(batch row, label) of the sequences to draw: on Nth Farthest one whose reference came last,
    one first, one in the middle (Fig. 3's rows); otherwise the first ``count``."""
    if config.task_name != "nth-farthest":
        return [(b, f"sequence {b}") for b in range(count)]
    steps, last = reference_steps(task, inputs), inputs.shape[0] - 1
    picks = []
    for label, step in (("reference last", last), ("reference first", 0), ("reference in the middle", last // 2)):
        rows = np.flatnonzero(steps == step)
        if rows.size:
            picks.append((int(rows[0]), f"{label} (step {step})"))
    return picks[:count]


def draw(weights: np.ndarray, picks: list[tuple[int, str]], path: Path, title: str) -> None:
    """weights [T, B, heads, Q, K] of one block: a grid of head-averaged maps, sequences by steps."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps = weights.shape[0]
    fig, axes = plt.subplots(len(picks), steps, figsize=(1.6 * steps, 1.8 * len(picks)), squeeze=False)
    for row, (b, label) in enumerate(picks):
        for t in range(steps):
            ax = axes[row, t]
            ax.imshow(weights[t, b].mean(0), vmin=0.0, vmax=1.0, cmap="viridis")
            ax.set_xticks([])
            ax.set_yticks([])
            if row == 0:
                ax.set_title(f"step {t}", fontsize=8)
        axes[row, 0].set_ylabel(label, fontsize=7)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def command(
    run: tyro.conf.Positional[Path], seed: Seed = 0, sequences: Count = 3, out: OutputFolder | None = None
) -> None:
    """Draw the RMC's attention over held-out sequences of a trained supervised run (Fig. 3).

    Args:
        run: a run folder of memrl train supervised or memrl reproduce with an rmc core
            (e.g. runs/reproduce/rmc-nth-farthest/nth farthest/rmc).
        seed: which of the run's seeds to load.
        sequences: sequences to draw (Nth Farthest: up to 3, chosen as in Fig. 3).
        out: folder for attention.png and attention.npz (default RUN/analysis).
    """
    from memrl.console import console
    from memrl.learn.learners import learner_for
    from memrl.run.final_agents import seed_params
    from memrl.run.folder import RunFolder

    folder = RunFolder(Path(run))
    config = folder.load_config()
    if getattr(config, "learner", "") != "supervised":
        raise ValueError(
            f"{run} is a {config.learner} run; `analyze attention` reads a supervised run (train supervised)"
        )
    if sequences < 1:
        raise ValueError(f"sequences must be >= 1, got {sequences}")
    params = seed_params(folder, seed)
    learner = learner_for(config)
    task = learner.task.with_batch_size(256)
    inputs = np.asarray(task.sample(jax.random.PRNGKey(2018), "test").inputs)
    weights = attention_over_sequences(learner, params, inputs)
    picks = chosen_sequences(config, task, inputs, sequences)
    out = Path(out) if out is not None else folder.path / "analysis"
    out.mkdir(parents=True, exist_ok=True)
    slots = weights[0].shape[-1] - 1
    draw(
        weights[0],
        picks,
        out / "attention.png",
        f"{config.core_name} on {config.task_name}: block 1, mean over heads\n"
        f"rows = queries, columns = keys (slots 1-{slots}, then the input)",
    )
    np.savez(out / "attention.npz", **{f"block_{i}": w[:, [b for b, _ in picks]] for i, w in enumerate(weights)})
    console.print(f"attention of {len(picks)} sequences over {weights[0].shape[0]} steps -> {out / 'attention.png'}")


ANALYSES.register("attention", command)
