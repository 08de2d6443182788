"""TensorBoard scalars of a run (``--tensorboard``; optional: ``pip install "memrl[tensorboard]"``).

Each seed's metrics go to ``RUN/seed_<s>/tensorboard/`` as they are written to ``metrics.jsonl``, one
scalar per metric at the global step that TensorBoard readers (CleanRL, stable-baselines3) expect:
the run's steps so far in its learner's unit (environment steps, or sequences for a supervised
run), and the learning-curve figure of a finished run (or of an
experiment) to ``RUN/tensorboard/`` as the image ``curves``: ``tensorboard --logdir RUN`` shows both.
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


def write_rows(writer, rows: list[dict], first_update: int, steps_per_update: int) -> None:
    """``rows`` (one per update, from update ``first_update`` on, counted from 1) as scalars at the
    steps done after each update; unmeasured (None) values are skipped."""
    for update, row in enumerate(rows, first_update):
        for name, value in row.items():
            if value is not None:
                writer.add_scalar(name, value, update * steps_per_update)
    writer.flush()


def write_figure(log_dir: Path, tag: str, png: Path, step: int) -> None:
    """The PNG figure ``png`` as the image ``tag`` at ``step`` in ``log_dir``."""
    require_tensorboard()
    import matplotlib.image
    from tensorboardX import SummaryWriter

    writer = SummaryWriter(str(log_dir))
    writer.add_image(tag, matplotlib.image.imread(png)[..., :3], step, dataformats="HWC")  # RGB of RGBA, floats in [0, 1]
    writer.close()
