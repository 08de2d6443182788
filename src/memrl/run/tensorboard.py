"""TensorBoard scalars of a run (``--tensorboard``; optional: ``pip install "memrl[tensorboard]"``).

Each seed's metrics go to ``RUN/seed_<s>/tensorboard/`` as they are written to ``metrics.jsonl``, one
scalar per metric at its update number: ``tensorboard --logdir RUN`` shows every seed of the run.
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


def write_rows(writer, rows: list[dict], first_update: int) -> None:
    """``rows`` (one per update, from ``first_update`` on) as scalars; unmeasured (None) values are skipped."""
    for update, row in enumerate(rows, first_update):
        for name, value in row.items():
            if value is not None:
                writer.add_scalar(name, value, update)
    writer.flush()
