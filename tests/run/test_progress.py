"""The training progress display: "compiling" until the first chunk is written, then the steps,
rate and score; at 80 columns the bar keeps room."""

from rich.console import Console

from memrl.learn.ppo_config import PPOConfig
from memrl.run.folder import RunFolder
from memrl.run.progress import TrainingProgress


def render(progress: TrainingProgress, width: int) -> str:
    console = Console(width=width, record=True, force_terminal=False)
    console.print(progress.progress.make_tasks_table(progress.progress.tasks))
    return console.export_text()


def test_progress_says_compiling_until_the_first_chunk_then_trains_at_80_columns(tmp_path):
    config = PPOConfig(num_envs=16, rollout_len=100, total_steps=160_000, seeds=2)
    folder = RunFolder(tmp_path / "run")
    folder.prepare(config)
    with TrainingProgress([folder]) as progress:
        progress.update()
        line = render(progress, 80)
        assert line.startswith("compiling") and "0/320,000 env steps" in line
        for seed in (0, 1):
            folder.append_metrics(seed, [{"env_steps": 16_000, "episode_return": 1.5, "wall_time": 1.0}])
        progress.update()
        line = render(progress, 80)
    assert line.startswith("training") and "32,000/320,000 env steps" in line and "return 1.50" in line and "/s" in line
    bar = line[len("training ") : line.index("32,000")]
    assert len(line.rstrip("\n")) <= 80 and len(bar) >= 8 and bar.strip() in ("╸", "━╸", "━"), line


def test_where_the_output_is_not_a_terminal_a_plain_line_comes_at_most_every_minute(tmp_path, capsys, monkeypatch):
    """A log file or CI sees no live bar: it gets a line from the first call, then one a minute."""
    from memrl import console as consoles

    monkeypatch.setattr(consoles.console, "_force_terminal", False)
    config = PPOConfig(num_envs=16, rollout_len=100, total_steps=160_000, seeds=1)
    folder = RunFolder(tmp_path / "run")
    folder.prepare(config)
    times = [0.0, 1.0, 5.0, 70.0, 75.0]
    monkeypatch.setattr("memrl.run.progress.time.time", lambda: times.pop(0) if len(times) > 1 else times[0])
    with TrainingProgress([folder]) as progress:  # its start: 0.0
        progress.update()  # 1.0: the first line at once
        folder.append_metrics(0, [{"env_steps": 16_000, "episode_return": 1.5, "wall_time": 1.0}])
        progress.update()  # 5.0: too soon
        progress.update()  # 70.0: a minute on
        progress.update()  # 75.0 (and at exit): too soon
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith(("compiling", "training:"))]
    assert lines[0].startswith("compiling (0 min)")
    assert lines[1:] == ["training: 16,000/160,000 env steps, 229/s, return 1.50 (last 5 updates; 1 min)"]
