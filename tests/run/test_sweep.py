"""``memrl sweep``: a two-trial grid on a local Ray, each trial a run folder, one table and figure;
bad specs refused before Ray starts. Skipped where the ``sweep`` extra (Ray Tune) is missing."""

import csv
import dataclasses
import json

import pytest

pytest.importorskip("ray.tune")

from memrl import cores, envs
from memrl.cli import main  # noqa: E402
from memrl.envs.base import ENVS

SPEC = """
learner: supervised
base: {task: copying, task_args: {gap: 2, num_digits: 2}, core: gru, embed_dim: 8, batch_size: 4, total_steps: 16, updates_per_chunk: 2, seeds: 1}
space:
  core.hidden: {grid: [4, 8]}
"""


@pytest.mark.filterwarnings("ignore:os.fork:RuntimeWarning")  # Ray starts its processes with fork + exec
def test_a_grid_of_two_trials_makes_two_run_folders_and_one_table(tmp_path, capsys):
    import ray

    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC)
    try:
        main(["sweep", str(spec), "--out", str(tmp_path / "sweep")])
    finally:
        ray.shutdown()
    with (tmp_path / "sweep" / "sweep.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert sorted(int(r["core.hidden"]) for r in rows) == [4, 8]
    for row in rows:
        assert 0 <= float(row["test_accuracy"]) <= 1 and int(row["steps"]) == 16
        config = json.loads((tmp_path / "sweep" / "trials" / row["run"].split("/")[-1] / "config.json").read_text())[
            "config"
        ]
        assert config["core"]["hidden"] == int(row["core.hidden"]) and config["task"] == {
            "kind": "copying",
            "gap": 2,
            "num_digits": 2,
        }
        assert (
            len(
                (tmp_path / "sweep" / "trials" / row["run"].split("/")[-1] / "seed_0" / "metrics.jsonl")
                .read_text()
                .splitlines()
            )
            == 4
        )
    assert (tmp_path / "sweep" / "sweep.png").exists()
    assert "2 trials, best first" in " ".join(
        capsys.readouterr().out.split()
    )  # rich wraps the title at 80 columns where the path is long


@pytest.mark.parametrize(
    "spec, message",
    [
        (
            "learner: ppo\nspace: {lr: {grid: [0.1]}}\nseed: 3\n",
            "has unknown keys seed; its keys: config, learner, base, space",
        ),
        ("learner: dqn\nspace: {lr: {grid: [0.1]}}\n", "sweep learner must be one of"),
        (
            "learner: ppo\nspace: {lr: {normal: [0.1, 1]}}\n",
            "space field 'lr' must be one {KIND: VALUES} with KIND one of grid, choice, uniform",
        ),
        (
            "learner: ppo\nspace: {lr: {uniform: [1, 0.1]}}\n",
            "space field 'lr': uniform takes [low, high] with low < high, got [1, 0.1]",
        ),
        ("learner: ppo\nspace: {lr: {loguniform: [0, 1]}}\n", "loguniform needs low > 0"),
        (
            "learner: ppo\nspace: {lr: {loguniform: [1e-4, 1e-2]}}\n",
            "loguniform takes two numbers [low, high], got the string '1e-4' (YAML reads 1e-4 as a string: write 1.0e-4)",
        ),
        (
            "learner: ppo\nspace: {learning_rate: {grid: [0.1]}}\n",
            "ppo configs have no field 'learning_rate'; their fields: ",
        ),
        ("learner: ppo\nspace: {lr: {grid: [-1.0]}}\n", "lr must be > 0, got -1.0"),
        (
            "learner: ppo\nspace: {lr: {grid: [0.1]}}\nscheduler: pbt\n",
            "sweep scheduler must be one of fifo, asha, got 'pbt'",
        ),
        ("learner: ppo\n", "lacks 'space'"),
        ("- a list\n", "must be a mapping"),
    ],
)
def test_bad_specs_are_refused_before_ray_starts(spec, message, tmp_path, capsys):
    path = tmp_path / "spec.yaml"
    path.write_text(spec)
    with pytest.raises(SystemExit) as exit_info:
        main(["sweep", str(path), "--out", str(tmp_path / "sweep")])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and "Traceback" not in err and message in err, err
    assert not (tmp_path / "sweep").exists()


def test_a_spec_can_start_from_a_saved_run(tmp_path):
    from memrl.learn.ppo_config import PPOConfig
    from memrl.run.folder import RunFolder
    from memrl.run.sweep import load_spec, trial_config

    saved = PPOConfig(env=envs.make("tmaze/T-L", maze_length=6), core=cores.make("gru", hidden=16), num_envs=4)
    RunFolder(tmp_path / "saved").prepare(saved)
    path = tmp_path / "spec.yaml"
    path.write_text(
        f"config: {tmp_path / 'saved'}\nbase: {{env_args: {{timeout: 30}}}}\nspace: {{lr: {{grid: [0.01]}}}}\n"
    )
    spec = load_spec(path)
    assert spec.learner == "ppo" and trial_config(spec, {"lr": 0.01}) == dataclasses.replace(
        saved, lr=0.01, env=ENVS.changed(saved.env, maze_length=6, timeout=30)
    )
    path.write_text(f"config: {tmp_path / 'saved'}\nlearner: impala\nspace: {{lr: {{grid: [0.01]}}}}\n")
    with pytest.raises(ValueError, match="its config holds a ppo run, not 'impala'"):
        load_spec(path)


def test_a_cluster_address_is_checked_before_ray_waits_on_it(tmp_path):
    import socket

    from memrl.run.sweep import address_parts, check_reachable

    assert address_parts("auto") is None and address_parts("ray://head:10001") == ("head", 10001)
    for wrong in ("nonsense", "head:", ":6379", "head:port", "head:70000"):
        with pytest.raises(ValueError, match=f"sweep address '{wrong}' is not a Ray cluster's address: give HOST:PORT"):
            address_parts(wrong)
    with socket.socket() as closed:  # a port that was free a moment ago: nothing listens there
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    with pytest.raises(ValueError, match=f"sweep address 127.0.0.1:{port}: nothing answers there"):
        check_reachable(f"127.0.0.1:{port}", timeout_s=2)
    with socket.create_server(("127.0.0.1", 0)) as listening:
        check_reachable(f"127.0.0.1:{listening.getsockname()[1]}", timeout_s=2)


def test_the_bases_components_are_subcommands_as_memrl_train_takes_them(tmp_path, monkeypatch, capsys):
    """``memrl sweep SPEC core:NAME --core.SETTING V task:NAME ...`` replaces the base's components,
    each the base's unless given; the space's ``core.SETTING`` then varies the one given."""
    import memrl.run.sweep as sweep

    swept = []
    monkeypatch.setattr(sweep, "run_sweep", lambda spec, out: swept.append(spec) or [{"trial": 1}])
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC)
    main(["sweep", str(spec), "--out", str(tmp_path / "sweep"), "core:lstm", "--core.weight-init", "split"])
    main(["sweep", str(spec), "--out", str(tmp_path / "sweep"), "--task.gap", "5"])
    main(["sweep", str(spec), "--out", str(tmp_path / "sweep"), "--task-args", "gap", "5"])
    lstm, longer, earlier = (sweep.trial_config(s, {"core.hidden": 4}) for s in swept)
    assert (lstm.core_name, lstm.core.hidden, lstm.core.weight_init) == ("lstm", 4, "split")
    assert lstm.task.gap == 2  # the base's task, as it was
    assert (longer.core_name, longer.core.hidden, longer.task.gap, longer.task.num_digits) == ("gru", 4, 5, 2)
    assert earlier == longer
    with pytest.raises(SystemExit):
        main(["sweep", str(spec), "--out", str(tmp_path / "sweep"), "--task.gaps", "5"])
    err = capsys.readouterr().err
    assert "Unrecognized" in err and "--task.gaps" in err
