"""Experiments: the registered reproductions are well formed, and the runner writes its outputs."""

import json

import pytest

from memrl import experiments
from memrl.experiments.base import Expectation, Experiment
from memrl.learn.ppo_config import PPOConfig


def test_amrl_tmaze_covers_the_issue():
    experiment = experiments.get("amrl-tmaze")
    assert set(experiment.panels()) == {"T-L", "T-LN", "T-LS"}
    for panel, runs in experiment.panels().items():
        assert sorted(r.split("/")[1] for r in runs) == sorted(["amrl-max", "amrl-avg", "set", "lstm", "lstm-stack"])
    assert all(c.seeds == 3 for c in experiment.runs.values())
    assert all(e.run in experiment.runs for e in experiment.expectations)
    json.dumps(experiment.describe())


def test_expectation_checks():
    e = Expectation("T-LS/lstm", "<=", 10.4, "")
    assert e.check(10.4) and not e.check(10.5) and not e.check(None)


@pytest.mark.slow
def test_reproduce_writes_table_figure_and_checks(tmp_path, capsys):
    from memrl.experiments.runner import reproduce

    tiny = dict(env_args={"maze_length": 4, "timeout": 10}, core_args={"hidden": 8}, encoder_widths=(8,),
                head_widths=(8,), num_envs=4, rollout_len=8, total_steps=64)
    experiment = Experiment(
        name="tiny", version=1, description="tiny", reproduces="nothing",
        runs={"T-LN/gru": PPOConfig(env="tmaze/T-LN", core="gru", **tiny), "T-LN/lstm": PPOConfig(env="tmaze/T-LN", core="lstm", **tiny)},
        expectations=(Expectation("T-LN/gru", ">=", 100.0, "cannot pass"),),
    )
    results = reproduce(experiment, tmp_path, workers=2)
    assert (tmp_path / "curves.png").stat().st_size > 0
    saved = json.loads((tmp_path / "results.json").read_text())
    assert saved["checks"][0]["passed"] is False and set(saved["summaries"]) == {"T-LN/gru", "T-LN/lstm"}
    assert results["summaries"]["T-LN/lstm"]["env_steps_per_seed"] == 64
    assert "FAIL" in capsys.readouterr().out
