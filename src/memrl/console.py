"""Live progress of training runs, read from their run folders (works across processes)."""

from __future__ import annotations

import time
from typing import Sequence

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from memrl.learn.launch import env_steps_done
from memrl.learn.run_folder import RunFolder

console = Console()


class TrainingProgress:
    """A progress bar over all seeds of the given run folders: steps, steps/s and latest return."""

    def __init__(self, folders: Sequence[RunFolder]):
        self.folders = list(folders)
        self.configs = [f.load_config() for f in self.folders]
        self.total = sum(c.num_updates * c.steps_per_update * c.seeds for c in self.configs)
        self.progress = Progress(
            TextColumn("[bold]{task.description}"), BarColumn(), TextColumn("{task.completed:,.0f}/{task.total:,.0f} steps"),
            TextColumn("{task.fields[rate]:>8,.0f} steps/s"), TextColumn("return {task.fields[ret]}"), TimeElapsedColumn(),
            console=console,
        )
        self.task = None
        self.start_steps = 0
        self.start_time = time.time()

    def __enter__(self):
        self.progress.__enter__()
        self.start_steps = self._done()
        self.task = self.progress.add_task("training", total=self.total, completed=self.start_steps, rate=0.0, ret="-")
        return self

    def __exit__(self, *exc):
        self.update()
        self.progress.__exit__(*exc)

    def _done(self) -> int:
        return sum(env_steps_done(f, s) for f, c in zip(self.folders, self.configs) for s in c.seed_list())

    def _latest_returns(self) -> str:
        values = []
        for f, c in zip(self.folders, self.configs):
            for s in c.seed_list():
                rows = [r for r in f.read_metrics(s)[-5:] if r["episode_return"] is not None]
                if rows:
                    values.append(sum(r["episode_return"] for r in rows) / len(rows))
        if not values:
            return "-"
        if len(values) == 1:
            return f"{values[0]:.2f}"
        return f"{min(values):.2f}..{max(values):.2f}"

    def update(self) -> None:
        done = self._done()
        rate = (done - self.start_steps) / max(time.time() - self.start_time, 1e-9)
        self.progress.update(self.task, completed=done, rate=rate, ret=self._latest_returns())
