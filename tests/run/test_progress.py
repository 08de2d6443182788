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
