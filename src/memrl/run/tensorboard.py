"""TensorBoard scalars of a run (``--tensorboard``; optional: ``pip install "memrl[tensorboard]"``).

Each seed's metrics go to ``RUN/seed_<s>/tensorboard/`` as they are written to ``metrics.jsonl``, one
scalar per metric and update, tagged as CleanRL and stable-baselines3 tag them (``charts/episodic_return``,
``losses/value_loss``, ``charts/SPS``; ``tag``), at the global step those readers expect: the run's
steps so far in its learner's unit (environment steps, or sequences for a supervised run); and the
learning-curve figure of a finished run (or of an experiment) to ``RUN/tensorboard/`` as the image
``curves`` at the last step: ``tensorboard --logdir RUN`` shows both.
A resumed run appends a new event file; updates after its checkpoint that a killed run had already
logged appear twice there (metrics.jsonl stays the record)."""

from __future__ import annotations

from pathlib import Path


def require_tensorboard() -> None:
    """Refuse ``--tensorboard`` where tensorboardX is not installed (before any run starts)."""
    try:
        import tensorboardX  # noqa: F401
    except ImportError:
        raise ImportError('--tensorboard needs tensorboardX: pip install "memrl[tensorboard]"') from None


def open_writer(seed_dir: Path):
    """A TensorBoard writer into ``seed_dir/tensorboard``."""
    require_tensorboard()
    from tensorboardX import SummaryWriter

    return SummaryWriter(str(seed_dir / "tensorboard"))


RENAMED = {"episode_return": "charts/episodic_return", "episode_return_std": "charts/episodic_return_std"}
"""metrics whose CleanRL / stable-baselines3 names differ from memrl's"""
LOSS_MEASURES = ("entropy", "approx_kl", "grad_norm")
"""measures of an update that CleanRL logs among its losses"""


def tag(metric: str) -> str:
    """The TensorBoard tag of a metric, in CleanRL's and stable-baselines3's namespaces: ``losses/``
    for what an update minimises and measures of it, ``eval/`` for the held-out metrics, ``charts/``
    for the rest (returns, episodes, accuracies, steps per second)."""
    if metric in RENAMED:
        return RENAMED[metric]
    if metric.startswith("test_"):
        return f"eval/{metric[len('test_') :]}"
    if "loss" in metric or metric in LOSS_MEASURES:
        return f"losses/{metric}"
    return f"charts/{metric}"


def write_rows(writer, rows: list[dict], first_update: int, steps_per_update: int, steps_per_second: float) -> None:
    """``rows`` (one per update, from update ``first_update`` on, counted from 1) as scalars (``tag``)
    at the steps done after each update, with the chunk's ``steps_per_second`` as ``charts/SPS``;
    unmeasured (None) values are skipped."""
    for update, row in enumerate(rows, first_update):
        for name, value in row.items():
            if value is not None:
                writer.add_scalar(tag(name), value, update * steps_per_update)
        writer.add_scalar("charts/SPS", steps_per_second, update * steps_per_update)
    writer.flush()


def write_figure(log_dir: Path, tag: str, png: Path, step: int) -> None:
    """The PNG figure ``png`` as the image ``tag`` at ``step`` in ``log_dir``."""
    require_tensorboard()
    import matplotlib.image
    from tensorboardX import SummaryWriter

    writer = SummaryWriter(str(log_dir))
    writer.add_image(
        tag, matplotlib.image.imread(png)[..., :3], step, dataformats="HWC"
    )  # RGB of RGBA, floats in [0, 1]
    writer.close()
