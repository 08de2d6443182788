"""``memrl analyze ballet-memory``: the supervised Ballet memory check
(``analysis/ballet_memory_probe``) run on the agents of ``memrl reproduce htm-ballet``'s cpu preset."""

from __future__ import annotations

import json
from pathlib import Path

import jax
import numpy as np

from memrl.agents.paper_agents import htm_ballet_agents
from memrl.analysis import ANALYSES
from memrl.analysis.ballet_memory_probe import BalletMemoryProbe
from memrl.analysis.chunked_training import CHUNK_STEPS, check_chunks, train_probe
from memrl.envs import ballet
from memrl.learn.impala_config import ImpalaConfig
from memrl.settings import Count, LearningRate, OutputFolder, Seed


def probe_config(core: str, level: str) -> ImpalaConfig:
    """The ``cpu`` preset's agent of ``memrl reproduce htm-ballet`` for ``core``, on ``ballet/{level}``."""
    agents = htm_ballet_agents("cpu", f"ballet/{level}")
    if core not in agents:
        raise ValueError(f"core must be one of the htm-ballet cores {sorted(agents)}, got {core!r}")
    return ImpalaConfig(**agents[core])


def command(
    levels: tuple[str, ...] = ("2_delay16", "4_delay16", "8_delay16"),
    cores: tuple[str, ...] = ("htm", "gtrxl", "lstm"),
    steps: Count = 1000,
    batch_size: Count = 16,
    lr: LearningRate = 3e-4,
    seed: Seed = 0,
    test_episodes: Count = 512,
    out: OutputFolder = Path("runs/analysis/ballet-memory"),
) -> None:
    """Train fresh Ballet agents (htm-ballet's cpu preset) to name the target dancer's slot at the
    first choice frame, supervised (a check of the memory without RL; not an analysis from the paper).

    Args:
        levels: Ballet levels (N_delayD), each trained and tested on its own.
        cores: agents of memrl reproduce htm-ballet's cpu preset.
        steps: training steps per level and core.
        batch_size: episodes per step.
        lr: Adam learning rate.
        seed: seed of the initialisation and the episodes.
        test_episodes: fresh episodes scored after training.
        out: folder for ballet_memory.png/json and the checkpoints (LEVEL/CORE; running the same
            command again continues an interrupted run).
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from rich.table import Table

    from memrl.console import console

    single = [name for name, level_set in ballet.LEVEL_SETS.items() if len(level_set) == 1]
    for level in levels:
        if level not in single:
            raise ValueError(
                f"unknown Ballet level {level!r} (the probe trains on one level); known: {', '.join(single)}"
            )
    check_chunks(steps, CHUNK_STEPS)
    configs = {(level, core): probe_config(core, level) for level in levels for core in cores}
    probes = {pair: BalletMemoryProbe(config) for pair, config in configs.items()}
    train_key, test_key = jax.random.split(jax.random.PRNGKey(seed))
    results = {}
    for (level, core), probe in probes.items():
        settings = {
            "level": level,
            "core": core,
            "config": json.loads(configs[level, core].to_json()),
            "steps": steps,
            "batch_size": batch_size,
            "lr": lr,
            "seed": seed,
        }
        console.print(f"{level} / {core}: {probe.frames} frames per episode, {steps} steps of {batch_size} episodes")
        params, curve = train_probe(
            probe,
            train_key,
            steps,
            batch_size,
            lr,
            checkpoint_dir=out / level / core,
            settings=settings,
            on_chunk=lambda done, loss, acc: console.print(
                f"  step {done}/{steps}  loss {loss:.3f}  batch accuracy {acc:.2f}"
            ),
        )
        accuracy = probe.accuracy(params, test_key, test_episodes, batch_size)
        results.setdefault(level, {})[core] = {"test_accuracy": accuracy, "curve": curve.tolist()}

    table = Table(
        title=f"target slot named at the first choice frame: accuracy on {test_episodes} fresh episodes after {steps} steps"
    )
    table.add_column("level (chance)")
    for core in cores:
        table.add_column(core)
    for level, row in results.items():
        dancers = int(level.split("_")[0])
        table.add_row(f"{level} ({1 / dancers:.2f})", *(f"{row[c]['test_accuracy']:.2f}" for c in cores))
    console.print(table)

    fig, axes = plt.subplots(1, len(levels), figsize=(4 * len(levels), 3.5), squeeze=False)
    for ax, (level, row) in zip(axes[0], results.items()):
        for core, result in row.items():
            curve = np.asarray(result["curve"])
            ax.plot(np.arange(1, len(curve) + 1) * steps / len(curve), curve[:, 1], label=core)
        ax.axhline(1 / int(level.split("_")[0]), color="gray", ls=":", label="chance")
        ax.set_title(level)
        ax.set_xlabel("training step")
        ax.set_ylabel("batch accuracy")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "ballet_memory.png", dpi=120)
    plt.close(fig)
    (out / "ballet_memory.json").write_text(json.dumps(results))
    console.print(f"figure {out / 'ballet_memory.png'}")


ANALYSES.register("ballet-memory", command)
