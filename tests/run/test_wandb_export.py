"""memrl wandb: run folders exported to Weights & Biases, one W&B run per seed."""

import sys
import types

import pytest

from memrl import cores, envs, tasks
from memrl.cli import main
from memrl.learn.ppo_config import PPOConfig
from memrl.run.folder import RunFolder

ROWS = [{"episode_return": 0.5, "env_steps": 64, "loss": None}, {"episode_return": 1.0, "env_steps": 128, "loss": 0.25}]


def make_run(path, seeds=2, metrics_for=(0,)):
    folder = RunFolder(path)
    folder.prepare(PPOConfig(env=envs.make("tmaze/T-LN"), core=cores.make("gru", hidden=8), seeds=seeds))
    for seed in metrics_for:
        folder.append_metrics(seed, ROWS)
    return folder


class FakeWandb(types.ModuleType):
    """Records what the exporter sends: init's arguments and each run's logged rows."""

    def __init__(self):
        super().__init__("wandb")
        self.runs = []
        self.Settings = lambda **kw: kw
        self.Image = lambda path: ("image", path)
        self.api = types.SimpleNamespace(api_key="a key")

    def init(self, **kwargs):
        run = types.SimpleNamespace(kwargs=kwargs, logged=[], finished=False)
        run.log = lambda row, step: run.logged.append((step, row))
        run.finish = lambda: setattr(run, "finished", True)
        self.runs.append(run)
        return run


def test_each_seed_with_metrics_becomes_one_run_with_its_config_and_rows(tmp_path, monkeypatch):
    fake = FakeWandb()
    monkeypatch.setitem(sys.modules, "wandb", fake)
    make_run(tmp_path / "exp" / "a", seeds=2, metrics_for=(0,))  # seed 1 has no metrics yet: no W&B run
    make_run(tmp_path / "exp" / "b", seeds=1, metrics_for=(0,))
    (tmp_path / "exp" / "b" / "curves.png").write_bytes(b"")
    main(["wandb", str(tmp_path / "exp"), "--project", "p"])
    assert [r.kwargs["name"] for r in fake.runs] == ["a/seed_0", "b/seed_0"]
    first = fake.runs[0]
    assert (
        first.kwargs["mode"] == "offline"
        and first.kwargs["project"] == "p"
        and first.kwargs["group"] == str(tmp_path / "exp" / "a")
    )
    assert (
        first.kwargs["config"]["learner"] == "ppo"
        and first.kwargs["config"]["core"]["hidden"] == 8
        and first.kwargs["config"]["seed"] == 0
    )
    assert first.logged == [
        (3200, {"episode_return": 0.5, "env_steps": 64}),
        (6400, {"episode_return": 1.0, "env_steps": 128, "loss": 0.25}),
    ]
    assert fake.runs[1].logged[-1] == (
        6400,
        {"curves": ("image", str(tmp_path / "exp" / "b" / "curves.png"))},
    )  # steps of 3200-step updates
    assert all(r.finished for r in fake.runs)
    main(["wandb", str(tmp_path / "exp" / "a"), "--online"])
    assert fake.runs[-1].kwargs["mode"] == "online"


@pytest.mark.parametrize(
    ("what", "message"),
    [
        ("missing", "does not exist"),
        ("empty", "holds no run folder"),
        ("bad config", "is not a readable memrl run config"),
    ],
)
def test_bad_paths_are_refused_with_the_path(tmp_path, monkeypatch, capsys, what, message):
    monkeypatch.setitem(sys.modules, "wandb", FakeWandb())
    target = tmp_path / "x"
    if what != "missing":
        target.mkdir()
    if what == "bad config":
        (target / "config.json").write_text("{not json")
    with pytest.raises(SystemExit) as exit_info:
        main(["wandb", str(target)])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and message in err and str(target) in err and "Traceback" not in err


def test_no_path_is_refused(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["wandb"])
    assert exit_info.value.code == 2 and "name at least one run folder" in capsys.readouterr().err


def test_an_upload_without_an_api_key_is_refused_before_anything_is_logged(tmp_path, monkeypatch, capsys):
    fake = FakeWandb()
    fake.api.api_key = None
    monkeypatch.setitem(sys.modules, "wandb", fake)
    make_run(tmp_path / "run", seeds=1, metrics_for=(0,))
    with pytest.raises(SystemExit) as exit_info:
        main(["wandb", str(tmp_path / "run"), "--online"])
    said = capsys.readouterr().err
    assert exit_info.value.code == 2 and "needs an API key, and none is configured: run `wandb login`" in said
    monkeypatch.setenv("WANDB_MODE", "online")
    with pytest.raises(SystemExit):
        main(["train", "--total-steps", "3200", "--wandb", "--out", str(tmp_path / "live")])
    assert "needs an API key" in capsys.readouterr().err and not fake.runs and not (tmp_path / "live").exists()


def test_without_wandb_the_command_says_how_to_install_it(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "wandb", None)  # import fails as if not installed
    make_run(tmp_path / "run")
    with pytest.raises(SystemExit) as exit_info:
        main(["wandb", str(tmp_path / "run")])
    assert exit_info.value.code == 2 and 'pip install "memrl[wandb]"' in capsys.readouterr().err


def test_the_real_wandb_writes_one_offline_run_per_seed(tmp_path, monkeypatch):
    pytest.importorskip("wandb")  # in the test extra, so CI runs this
    monkeypatch.setenv("WANDB_SILENT", "true")
    make_run(tmp_path / "run", seeds=2, metrics_for=(0, 1))
    main(["wandb", str(tmp_path / "run")])
    written = sorted((tmp_path / "run" / "wandb").glob("offline-run-*/run-*.wandb"))
    assert len(written) == 2 and all(f.stat().st_size > 0 for f in written)


def test_a_run_trained_with_wandb_logs_every_update_as_it_trains(tmp_path, monkeypatch):
    from memrl.learn.supervised_config import SupervisedConfig
    from memrl.run.seed_training import train_seeds

    fake = FakeWandb()
    monkeypatch.setitem(sys.modules, "wandb", fake)
    monkeypatch.delenv("WANDB_MODE", raising=False)
    config = SupervisedConfig(
        task=tasks.make("copying", gap=2, num_digits=2),
        core=cores.make("gru", hidden=8),
        embed_dim=8,
        batch_size=4,
        total_steps=4 * 4,
        updates_per_chunk=2,
    )
    folder = RunFolder(tmp_path / "run")
    folder.prepare(config)
    train_seeds(config, folder, [0], wandb=True)
    (run,) = fake.runs
    assert (
        run.kwargs["mode"] == "offline"
        and run.kwargs["name"] == "run/seed_0"
        and run.kwargs["project"] == "memrl"
        and run.finished
    )
    assert [step for step, _ in run.logged] == [4, 8, 12, 16] == [row["sequences"] for row in folder.read_metrics(0)]
    assert [row["loss"] for _, row in run.logged] == [row["loss"] for row in folder.read_metrics(0)]


def test_the_real_wandb_logs_a_training_run_offline_from_the_command_line(tmp_path, monkeypatch):
    pytest.importorskip("wandb")
    monkeypatch.setenv("WANDB_SILENT", "true")
    monkeypatch.delenv("WANDB_MODE", raising=False)
    main(
        [
            "train",
            "--out",
            str(tmp_path / "run"),
            "--wandb",
            "supervised",
            "--task-args",
            "gap",
            "2",
            "num_digits",
            "2",
            "--core",
            "gru",
            "--core-args",
            "hidden",
            "8",
            "--embed-dim",
            "8",
            "--batch-size",
            "4",
            "--total-steps",
            "8",
            "--updates-per-chunk",
            "1",
        ]
    )
    written = list((tmp_path / "run" / "wandb").glob("offline-run-*/run-*.wandb"))
    assert len(written) == 1 and written[0].stat().st_size > 0
