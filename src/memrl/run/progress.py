"""Live progress of training runs, read from their run folders (works across processes)."""

from __future__ import annotations

import time
from collections.abc import Sequence

from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from memrl.console import console
from memrl.run.folder import RunFolder

LINE_EVERY = 60.0
"""seconds between the plain progress lines written where the output is not a terminal (a log
file, CI), which a live bar does not reach"""


RECENT = 5
"""updates whose mean score the progress shows per seed"""


class TrainingProgress:
    """A progress bar over all seeds of the given run folders: steps, steps/s and the latest score
    (return, or accuracy for supervised runs: each seed's mean over its last ``RECENT`` updates, the
    range over seeds; the summary's final value is the mean over the last 10% of the updates). It says "compiling" until the first chunk of
    updates is written (XLA compiles the training program first, tens of seconds on a CPU), and its
    columns are short enough to leave the bar room at 80 columns. Where the output is not a
    terminal, a plain line says the same at most every ``line_every`` seconds, from the first call."""

    def __init__(self, folders: Sequence[RunFolder], line_every: float = LINE_EVERY):
        self.folders = list(folders)
        self.configs = [f.load_config() for f in self.folders]
        self.total = sum(c.num_updates * c.steps_per_update * c.seeds for c in self.configs)
        units = "/".join(dict.fromkeys(c.step_metric.replace("_", " ") for c in self.configs))
        scores = "/".join(dict.fromkeys(c.score_metric.split("_")[-1] for c in self.configs))
        self.progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(bar_width=None),
            TextColumn(f"{{task.completed:,.0f}}/{{task.total:,.0f}} {units}"),
            TextColumn("{task.fields[rate]}"),
            TextColumn(f"{scores} {{task.fields[score]}}"),  # each seed's mean over its last RECENT updates
            TimeElapsedColumn(),
            console=console,
        )
        self.task = None
        self.start_steps = 0
        self.start_time = time.time()
        self.units, self.scores = units, scores
        self.line_every, self.last_line = line_every, None

    def __enter__(self):
        self.progress.__enter__()
        self.start_steps, _ = self._read()
        self.task = self.progress.add_task(
            "compiling", total=self.total, completed=self.start_steps, rate="", score="-"
        )
        return self

    def __exit__(self, *exc):
        self.update()
        self.progress.__exit__(*exc)

    def _read(self) -> tuple[int, str]:
        """(steps done over all seeds, the latest scores: each seed's mean over its last ``RECENT`` rows),
        reading each metrics file once."""
        done, scores = 0, []
        for folder, config in zip(self.folders, self.configs):
            for seed in config.seed_list():
                rows = folder.read_metrics(seed)
                done += rows[-1][config.step_metric] if rows else 0
                latest = [r[config.score_metric] for r in rows[-RECENT:] if r.get(config.score_metric) is not None]
                if latest:
                    scores.append(sum(latest) / len(latest))
        if not scores:
            return done, "-"
        return done, f"{scores[0]:.2f}" if len(scores) == 1 else f"{min(scores):.2f}..{max(scores):.2f}"

    def update(self) -> None:
        done, scores = self._read()
        elapsed = time.time() - self.start_time
        if done == self.start_steps:  # nothing new written yet: still compiling (or in the first chunk)
            self.plain_line(f"compiling ({elapsed / 60:.0f} min)")
            return
        rate = (done - self.start_steps) / max(elapsed, 1e-9)
        self.progress.update(self.task, description="training", completed=done, rate=f"{rate:,.0f}/s", score=scores)
        self.plain_line(
            f"training: {done:,}/{self.total:,} {self.units}, {rate:,.0f}/s, {self.scores} {scores} "
            f"(last {RECENT} updates; {elapsed / 60:.0f} min)"
        )

    def plain_line(self, text: str) -> None:
        """Print ``text`` where the output is not a terminal, at most every ``line_every`` seconds."""
        now = time.time()
        if console.is_terminal or (self.last_line is not None and now - self.last_line < self.line_every):
            return
        self.last_line = now
        console.print(text, highlight=False)
