"""A run's summary: the final value of each seed and, for averages over episodes, its standard error."""

import numpy as np
import pytest

from memrl import cores, envs
from memrl.learn.ppo_config import PPOConfig
from memrl.run.folder import RunFolder

CONFIG = PPOConfig(
    env=envs.make("tmaze/T-LN"), core=cores.make("gru"), num_envs=4, rollout_len=5, total_steps=20 * 20, seeds=2
)


def update(step: int, mean: float, std: float, episodes: int) -> dict:
    return {"env_steps": step, "episode_return": mean, "episode_return_std": std, "episodes": episodes}


def test_final_value_carries_the_standard_error_of_its_episodes(tmp_path):
    folder = RunFolder(tmp_path / "run")
    folder.prepare(CONFIG)
    early = [update(20 * u, 0.0, 1.0, 4) for u in range(18)]
    folder.append_metrics(0, early + [update(360, 5.0, 2.0, 5), update(380, 7.0, 3.0, 10)])  # the last 10%: 2 updates
    folder.append_metrics(1, early + [update(360, 4.0, 1.0, 2), update(380, 6.0, 0.0, 3)])
    summary = folder.write_summary(CONFIG)
    seed_errors = [np.sqrt(2**2 / 4 + 3**2 / 9) / 2, np.sqrt(1**2 / 1 + 0**2 / 2) / 2]
    assert [summary["seeds"][s]["final"] for s in (0, 1)] == [6.0, 5.0] and summary["final_mean"] == 5.5
    assert [summary["seeds"][s]["standard_error"] for s in (0, 1)] == pytest.approx(seed_errors)
    assert summary["final_standard_error"] == pytest.approx(np.sqrt(sum(e**2 for e in seed_errors)) / 2)
    assert summary["final_episodes"] == 20


def test_no_standard_error_without_the_spread_or_from_one_episode(tmp_path):
    folder = RunFolder(tmp_path / "run")
    folder.prepare(CONFIG)
    folder.append_metrics(
        0, [{"env_steps": 20 * u, "episode_return": 1.0, "episodes": 3} for u in range(20)]
    )  # no spread recorded
    folder.append_metrics(1, [update(20 * u, 1.0, 0.5, 3) for u in range(19)] + [update(380, 2.0, 0.0, 1)])
    summary = folder.write_summary(CONFIG)
    assert summary["seeds"][0] == {"final": 1.0, "updates": 20, "episodes": None, "standard_error": None}
    assert summary["seeds"][1]["episodes"] == 4 and summary["seeds"][1]["standard_error"] is None
    assert summary["final_standard_error"] is None and summary["final_episodes"] is None
