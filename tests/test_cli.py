"""The command line: listing, and clean errors for bad input."""

import dataclasses
import json
import os
import re

import pytest

from memrl import cores, envs, tasks
from memrl.agents.supervised_models import TASK_MODELS
from memrl.cli import main
from memrl.envs.base import ENVS


def test_list_names_cores_envs_and_experiments(capsys):
    main(["list"])
    out = capsys.readouterr().out
    for name in (
        "amrl-max",
        "gtrxl",
        "epn-nxk",
        "tmaze/T-LSO",
        "memory-planning/4x4",
        "graph-nav/9",
        "gymnax/CartPole-v1",
        "amrl-tmaze",
        "tln-demo",
        "epn-graph-nav",
        "pai",
        "htm-pai",
    ):
        assert name in out


@pytest.mark.parametrize(
    "argv, shown",
    [
        (["--core", "amrl-max"], ("hidden", "int", "256", "straight_through", "Beck et al. 2020")),
        (["--core", "lru"], ("state", "r_max", "Orvieto et al. 2023")),
        (["--core", "htm-pai"], ("num_layers", "chunks (pairs)")),
        (["--env", "tmaze/T-LN"], ("maze_length", "100", "timeout", "scripted policies of tmaze/T-LN: oracle")),
        (["--task", "copying"], ("gap", "blank steps", "num_digits")),
        (["--experiment", "htm-ballet"], ("| V-trace policy loss weight | 0.1 (Table 1", "memrl `gpu`")),
        (  # no empty table for an environment whose own library takes its settings, no reST markup
            ["--env", "gymnasium/CartPole-v1"],
            ("gymnasium/CartPole-v1: no settings of memrl's.", "`Environment`"),
        ),
    ],
)
def test_list_shows_every_setting_with_its_default_and_meaning(argv, shown, capsys):
    main(["list", *argv])
    out = capsys.readouterr().out
    for text in shown:
        assert text in out
    assert "batch_size" not in out  # a task's batch size is the run's --batch-size, not a task setting


STARTS_THE_BACKEND = """
import os, sys
from jax._src import xla_bridge

allocation = []
start = xla_bridge.backends
def backends():
    allocation.append(os.environ.get("XLA_PYTHON_CLIENT_PREALLOCATE"))
    return start()
xla_bridge.backends = backends
sys.argv = ["memrl", "list"]
from memrl.__main__ import main
main()
print("preallocate when the backend started:", allocation[0])
"""


def test_the_launching_process_leaves_the_accelerator_memory_to_its_workers():
    """XLA's default reserves 75% of a GPU in the first process that starts JAX's backend; the CLI
    process does (importing it does), so its training worker on the same GPU ran out of memory: the
    command turns preallocation off before it imports anything (it was set too late, in cli.main)."""
    import subprocess
    import sys

    env = {**os.environ, "XLA_PYTHON_CLIENT_PREALLOCATE": "true"}
    shown = subprocess.run([sys.executable, "-c", STARTS_THE_BACKEND], capture_output=True, text=True, env=env)
    assert shown.returncode == 0, shown.stderr
    assert "preallocate when the backend started: false" in shown.stdout


@pytest.mark.parametrize(
    "analysis, files", [("gradients", ("gradients.png", "gradients.json")), ("snr", ("snr.png", "snr.json"))]
)
def test_analyses_write_figure_and_table(analysis, files, tmp_path, capsys):
    main(["analyze", analysis, "--cores", "set", "amrl-sum", "--steps", "12", "--inits", "1", "--out", str(tmp_path)])
    assert "t=10" in capsys.readouterr().out
    for name in files:
        assert (tmp_path / name).stat().st_size > 0


def test_analysis_of_unknown_core_exits_2(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["analyze", "snr", "--cores", "lstmx", "--steps", "5"])
    assert exit_info.value.code == 2
    assert "unknown core 'lstmx'" in capsys.readouterr().err


def test_supervised_run_trains_resumes_and_evaluates(tmp_path, capsys):
    argv = [
        "train-supervised",
        "--task",
        "pai",
        "--core",
        "htm-pai",
        "--total-steps",
        "64",
        "--batch-size",
        "8",
        "--updates-per-chunk",
        "4",
        "--out",
        str(tmp_path),
        "--core-args",
        "num_layers",
        "1",
        "d_model",
        "16",
        "num_heads",
        "2",
        "mlp_dim",
        "16",
        "k",
        "2",
        "--task-args",
        "num_chains",
        "3",
        "stimulus_dim",
        "8",
        "pool_size",
        "50",
    ]
    main(argv)
    rows = (tmp_path / "seed_0" / "metrics.jsonl").read_text().splitlines()
    assert (
        len(rows) == 8
        and '"sequences": 64' in rows[-1]
        and '"test_accuracy": null' in rows[-2]
        and '"test_accuracy": 0' in rows[-1]
    )
    assert "final held-out accuracy" in capsys.readouterr().out
    main(argv)  # finished: resuming adds nothing
    assert len((tmp_path / "seed_0" / "metrics.jsonl").read_text().splitlines()) == 8
    capsys.readouterr()
    main(["eval", str(tmp_path), "--steps", "100"])
    assert re.search(
        r"seed 0 \(update 8\): accuracy \d\.\d{3}, accuracy direct \d\.\d{3}, accuracy indirect \d\.\d{3}[\s\S]*\son 100 held-out",
        capsys.readouterr().out,
        re.S,
    )
    main(["eval", str(tmp_path), "--steps", "100", "--task.num-chains", "6", "--core.k", "6"])
    evaluated = capsys.readouterr().out
    assert re.search(
        r"seed 0 \(update 8\): accuracy [\s\S]*\son 100 held-out\s+sequences \(k 6 num_chains 6\)", evaluated, re.S
    )
    main(["eval", str(tmp_path), "--steps", "100", "--task-args", "num_chains", "6", "--core-args", "k", "6"])
    assert capsys.readouterr().out == evaluated  # the earlier spelling of the same settings
    for argv, message in [
        (["--task-args", "stimulus_dim", "4"], "do not fit the settings {'stimulus_dim': 4}"),
        (["--core-args", "d_model", "8"], "do not fit the settings {'d_model': 8}"),
        (["--env-args", "maze_length", "4"], "--env-args does not apply to a supervised run"),
        (["env:tmaze/T-LN"], "env:tmaze/T-LN does not apply to a supervised run; it trained on a sequence task"),
        (
            ["--task-args", "num_chain", "4"],
            "task 'pai' has no setting 'num_chain' (--task-args); its settings: batch_size, num_chains",
        ),
    ]:
        with pytest.raises(SystemExit):
            main(["eval", str(tmp_path), *argv])
        assert message in capsys.readouterr().err


def test_any_core_trains_on_a_sequence_task_from_the_command_line(tmp_path, capsys):
    argv = [
        "train",
        "--out",
        str(tmp_path),
        "supervised",
        "--task",
        "copying",
        "--core",
        "gtrxl",
        "--task-args",
        "gap",
        "3",
        "num_digits",
        "2",
        "--core-args",
        "num_layers",
        "1",
        "d_model",
        "8",
        "num_heads",
        "2",
        "mlp_dim",
        "8",
        "memory_length",
        "4",
        "--embed-dim",
        "8",
        "--total-steps",
        "16",
        "--batch-size",
        "4",
        "--updates-per-chunk",
        "2",
        "--tensorboard",
    ]
    main(argv)
    assert (tmp_path / "curves.png").stat().st_size > 0 and '"metric": "test_accuracy"' in (
        tmp_path / "summary.json"
    ).read_text()
    for log_dir in (
        tmp_path / "tensorboard",
        tmp_path / "seed_0" / "tensorboard",
    ):  # the curves, the scalars (test_tensorboard reads them)
        assert any(log_dir.glob("events.out.tfevents.*")), log_dir
    capsys.readouterr()
    main(["eval", str(tmp_path), "--steps", "10", "--task-args", "gap", "6"])
    assert re.search(
        r"seed 0 \(update 4\): accuracy \d\.\d{3}, sequence accuracy [\s\S]*\son 10 held-out\s+sequences \(gap 6\)",
        capsys.readouterr().out,
        re.S,
    )


def test_an_actor_critic_run_evaluates_with_and_without_its_memory(tmp_path, capsys):
    import jax

    from memrl.learn.impala_config import ImpalaConfig
    from memrl.learn.learners import learner_for
    from memrl.run.folder import RunFolder

    config = ImpalaConfig(
        env=envs.make("tmaze/T-LN", maze_length=4, timeout=8),
        core=cores.make("gru", hidden=8),
        encoder_widths=(8,),
        head_widths=(8,),
        num_envs=4,
    )
    folder = RunFolder(tmp_path)
    folder.prepare(config)
    folder.save_checkpoint(0, learner_for(config).init(jax.random.PRNGKey(0)))
    main(["eval", str(tmp_path), "--steps", "40"])
    plain = capsys.readouterr().out
    main(["eval", str(tmp_path), "--steps", "40", "--amnesic", "--env.timeout", "9"])
    amnesic = capsys.readouterr().out
    main(["eval", str(tmp_path), "--steps", "40", "--amnesic", "--env-args", "timeout", "9"])
    assert re.sub(r"-?\d\.\d{3}", "x", capsys.readouterr().out) == re.sub(r"-?\d\.\d{3}", "x", amnesic)
    number = r"-?\d\.\d{3}"
    line = rf"mean return {number} ± {number} \(standard error of the mean\)\s+over \d+\s+episodes, their\s+standard\s+deviation {number}"
    assert re.search(rf"seed 0 \(update 0\): {line}\n", plain)
    assert re.search(rf"{line}\s+\(timeout 9; memory reset before every step\)", amnesic, re.S)
    with pytest.raises(SystemExit):  # another environment by name: its own settings, here another observation
        main(["eval", str(tmp_path), "--steps", "40", "env:tmaze/T-L"])
    assert "do not fit the settings {'env': 'tmaze/T-L'" in capsys.readouterr().err
    main(["eval", str(tmp_path), "--steps", "40", "--deterministic"])
    greedy = capsys.readouterr().out
    assert re.search(rf"{line}\s+\(most probable actions\)", greedy, re.S)
    main(["eval", str(tmp_path), "--steps", "3"])  # T-LN at length 4 takes at least 5 steps
    assert re.search(r"no episode finished in 3 steps of 4\s+environments: give more --steps", capsys.readouterr().out)


@pytest.mark.parametrize(
    "argv, spelled",
    [
        (["train", "--env", "tmaze/T-LN"], ["train", "--env", "tmaze/T-LN"]),  # no learner: tyro takes ppo
        (["train-impala", "--core", "gru"], ["train", "impala", "--core", "gru"]),
        (["train-supervised"], ["train", "supervised"]),
        (["train", "--out", "x", "impala"], ["train", "--out", "x", "impala"]),
        (["train", "--help"], ["train", "--help"]),
        (["train", "--config", "runs/x"], ["train", "--config", "runs/x"]),  # tyro takes the saved run's learner
        (["eval", "runs/x"], ["eval", "runs/x"]),
    ],
)
def test_one_train_command_keeps_the_earlier_spellings(argv, spelled):
    from memrl.cli import spelled_out

    assert spelled_out(argv) == spelled


def test_a_saved_config_trains_again_with_the_flags_given_changing_it(tmp_path, monkeypatch, capsys):
    import dataclasses

    import memrl.run.train
    from memrl.learn.ppo_config import PPOConfig
    from memrl.run.folder import RunFolder

    saved = PPOConfig(
        env=envs.make("tmaze/T-L", maze_length=6),
        core=cores.make("gru", hidden=16),
        num_envs=4,
        num_minibatches=2,
    )
    RunFolder(tmp_path / "saved").prepare(saved)
    trained = []
    monkeypatch.setattr(memrl.run.train, "train_run", lambda config, folder, *rest: trained.append((config, folder)))
    main(
        [
            "train",
            "--config",
            str(tmp_path / "saved" / "config.json"),
            "--lr",
            "0.01",
            "--env-args",
            "timeout",
            "30",
            "--out",
            str(tmp_path / "again"),
        ]
    )
    main(["train", "ppo", "--config", str(tmp_path / "saved"), "--core-args", "hidden", "8"])
    main(["train", "--config", str(tmp_path / "saved"), "--core", "lstm", "--out", str(tmp_path / "lstm")])
    assert trained[0] == (
        dataclasses.replace(saved, lr=0.01, env=ENVS.changed(saved.env, maze_length=6, timeout=30)),
        tmp_path / "again",
    )
    assert trained[1][0] == dataclasses.replace(saved, core=saved.core.clone(hidden=8))
    assert trained[2][0] == dataclasses.replace(saved, core=cores.make("lstm"))  # the GRU's settings stay with it
    main(["train", "--config", str(tmp_path / "saved"), "--env", "tmaze/T-LS", "--out", str(tmp_path / "ls")])
    assert trained[3][0] == dataclasses.replace(saved, env=envs.make("tmaze/T-LS"))  # T-L's settings stay with it
    for argv, message in (
        (["train", "impala", "--config", str(tmp_path / "saved")], "holds a ppo run; train it with memrl train ppo"),
        (
            ["train", "--config", str(tmp_path / "saved"), "--num-minibatches", "3"],
            "num_envs (4) must be divisible by num_minibatches (3)",
        ),
        (["train", "--config", str(tmp_path / "nothing")], "is neither a run folder nor a run's config.json"),
    ):
        with pytest.raises(SystemExit) as refused:
            main(argv)
        err = capsys.readouterr().err
        assert refused.value.code == 2 and all(part in err for part in as_parts(message)), err
    assert len(trained) == 4


def as_parts(message) -> tuple[str, ...]:
    """What a refusal must say: a message, or parts of one (tyro's own refusals wrap at the box)."""
    return (message,) if isinstance(message, str) else message


def test_the_core_is_a_subcommand_whose_flags_are_its_settings(tmp_path, monkeypatch, capsys):
    from pathlib import Path

    import memrl.run.train
    from memrl.cores.amrl import AMRL
    from memrl.cores.gru import GRU
    from memrl.learn.ppo_config import PPOConfig
    from memrl.run.folder import RunFolder

    trained = []
    monkeypatch.setattr(memrl.run.train, "train_run", lambda config, folder, *rest: trained.append((config, folder)))
    main(["train", "ppo", "core:gru", "--core.hidden", "8", "--core.update-bias", "1.0", "--lr", "0.01"])
    main(["train", "ppo", "--core", "gru", "--core-args", "hidden", "8", "update_bias", "1.0", "--lr", "0.01"])
    main(["train", "ppo", "core:amrl-max", "--core.straight-through", "False"])
    gru = (PPOConfig(core=GRU(hidden=8, update_bias=1.0), lr=0.01), Path("runs/tmaze_T-LN/gru"))
    assert trained[0] == trained[1] == gru
    assert trained[2][0].core == AMRL(aggregator="max", straight_through=False)
    old = tmp_path / "old"  # a run folder from before configs held the core whole: it resumes
    old.mkdir()
    record = PPOConfig(core=GRU(hidden=8), num_envs=4, num_minibatches=2).record()
    record |= {"core": "gru", "core_args": {"hidden": 8}}
    (old / "config.json").write_text(json.dumps({"learner": "ppo", "config": record}))
    RunFolder(old).prepare(PPOConfig(core=GRU(hidden=8), num_envs=4, num_minibatches=2))
    for argv, message in (
        (["train", "ppo", "core:amrl-max", "--core.aggregator", "avg"], ("Unrecognized", "--core.aggregator")),
        (["train", "--core", "lstm", "core:gru"], "--core lstm and core:gru both name the core"),
        (["train", "--core-args", "hidden"], "--core-args takes SETTING VALUE pairs"),
        (["train", "core:lstm", "--core.width", "3"], ("Unrecognized", "--core.width")),
        (["train", "core:lstm", "--core.hidden", "-3"], "LSTM.hidden must be a positive integer, got -3"),
    ):
        with pytest.raises(SystemExit) as refused:
            main(argv)
        err = capsys.readouterr().err
        assert refused.value.code == 2 and all(part in err for part in as_parts(message)), err


def test_the_task_is_a_subcommand_too_and_its_batch_size_the_runs(tmp_path, monkeypatch, capsys):
    from pathlib import Path

    import memrl.run.train
    from memrl.learn.supervised_config import SupervisedConfig
    from memrl.tasks.copying import Copying

    trained = []
    monkeypatch.setattr(memrl.run.train, "train_run", lambda config, folder, *rest: trained.append((config, folder)))
    main(["train", "supervised", "task:copying", "--task.gap", "5", "core:gru", "--batch-size", "8"])
    main(["train", "supervised", "--task", "copying", "--task-args", "gap", "5", "--core", "gru", "--batch-size", "8"])
    copying = SupervisedConfig(task=Copying(gap=5), core=cores.make("gru"), batch_size=8)
    assert trained[0] == trained[1] == (copying, Path("runs/copying/gru-supervised"))
    assert copying.task == Copying(gap=5, batch_size=8) and copying.record()["task"] == {
        "kind": "copying",
        "gap": 5,
        "num_digits": 10,
    }
    saved = tmp_path / "config.json"  # --config: the saved task is the default, its settings changed one by one
    saved.write_text(json.dumps({"learner": "supervised", "config": copying.record()}))
    main(["train", "--config", str(saved), "--task.num-digits", "3"])
    assert trained[2][0].task == Copying(gap=5, num_digits=3, batch_size=8)
    for argv, message in (
        (["train", "supervised", "task:copying", "--task.batch-size", "3"], ("Unrecognized", "--task.batch-size")),
        (["train", "supervised", "--task-args", "batch_size", "3"], "give batch_size with --batch-size"),
        (["train", "supervised", "task:copying", "--task.gap", "-1"], "Copying.gap must be a positive integer, got -1"),
        (["train", "supervised", "task:copyng"], "unknown task 'copyng'; did you mean 'copying'?"),
    ):
        with pytest.raises(SystemExit) as refused:
            main(argv)
        err = capsys.readouterr().err
        assert refused.value.code == 2 and all(part in err for part in as_parts(message)), err
    assert dataclasses.replace(copying, batch_size=16).task == Copying(gap=5, batch_size=16)


def test_the_environment_is_a_subcommand_too_whose_flags_are_its_settings(tmp_path, monkeypatch, capsys):
    """``env:NAME --env.SETTING VALUE``, a settings class generated from the name's defaults; the
    earlier ``--env NAME --env-args`` spells the same run; a gymnasium id is ``env:gymnasium --env.id``."""
    from pathlib import Path

    import memrl.run.train
    from memrl import envs
    from memrl.learn.ppo_config import PPOConfig

    trained = []
    monkeypatch.setattr(memrl.run.train, "train_run", lambda config, folder, *rest: trained.append((config, folder)))
    main(["train", "ppo", "env:tmaze/T-LS", "--env.maze-length", "20", "--env.timeout", "100", "core:gru"])
    main(["train", "ppo", "--env", "tmaze/T-LS", "--env-args", "maze_length", "20", "timeout", "100", "--core", "gru"])
    main(["train", "ppo", "core:gru", "env:tmaze/T-LS", "--env.maze_length", "20", "--env.timeout", "100"])
    expected = PPOConfig(env=envs.make("tmaze/T-LS", maze_length=20, timeout=100), core=cores.make("gru"))
    assert trained[0] == trained[1] == trained[2] == (expected, Path("runs/tmaze_T-LS/gru"))
    assert envs.ENVS.name_of(trained[0][0].env) == (
        "tmaze/T-LS",
        {"maze_length": 20, "timeout": 100},
    )  # what differs from T-LS's
    main(["train", "ppo", "env:tmaze/T-LS", "--env.maze-length", "100"])  # its default: not a setting given
    assert envs.ENVS.name_of(trained[3][0].env) == ("tmaze/T-LS", {})
    saved = tmp_path / "config.json"  # --config: the saved environment's settings are the defaults, changed one by one
    saved.write_text(json.dumps({"learner": "ppo", "config": expected.record()}))
    main(["train", "--config", str(saved), "--env.timeout", "60"])
    assert envs.ENVS.name_of(trained[4][0].env) == ("tmaze/T-LS", {"maze_length": 20, "timeout": 60})
    main(["train", "ppo", "env:gymnasium", "--env.id", "CartPole-v1", "--env.settings", "max_episode_steps", "50"])
    main(["train", "ppo", "--env", "gymnasium/CartPole-v1", "--env-args", "max_episode_steps", "50"])
    assert trained[5] == trained[6]
    assert envs.ENVS.name_of(trained[5][0].env) == ("gymnasium/CartPole-v1", {"max_episode_steps": 50})
    saved.write_text(json.dumps({"learner": "ppo", "config": trained[5][0].record()}))
    main(["train", "--config", str(saved), "--env.settings", "render_mode", "rgb_array"])
    main(["train", "--config", str(saved), "--env.id", "Acrobot-v1"])
    assert envs.ENVS.name_of(trained[7][0].env) == (
        "gymnasium/CartPole-v1",
        {"max_episode_steps": 50, "render_mode": "rgb_array"},
    )
    assert envs.ENVS.name_of(trained[8][0].env) == ("gymnasium/Acrobot-v1", {})  # CartPole's settings stay with it
    with pytest.raises(SystemExit):
        main(["train", "ppo", "env:tmaze/T-LN", "--help"])
    help_text = capsys.readouterr().out
    assert "--env.maze-length INT" in help_text and "(default: 100)" in help_text


def test_evaluation_config_replaces_settings_and_drops_the_stages():
    from memrl import envs
    from memrl.learn.ppo_config import PPOConfig
    from memrl.learn.supervised_config import SupervisedConfig
    from memrl.run.final_agents import changed_settings, evaluation_config

    config = SupervisedConfig(
        task=tasks.make("pai", num_chains=3),
        core=TASK_MODELS.make("htm-pai", k=2, d_model=32),
        stages=("5 direct_fraction=1.0",),
    )
    task, core = dataclasses.replace(config.task, num_chains=8), dataclasses.replace(config.core, k=16)
    evaluated = evaluation_config(config, {"task": task, "core": core})
    assert evaluated.task.num_chains == 8 and evaluated.stages == ()
    assert (evaluated.core.k, evaluated.core.d_model) == (16, 32)
    assert changed_settings(config, evaluated) == {"num_chains": 8, "k": 16}
    tmaze = PPOConfig(env=envs.make("tmaze/T-LS", timeout=200))
    longer = envs.make("tmaze/T-LS", timeout=200, maze_length=150)
    evaluated = evaluation_config(tmaze, {"env": longer})
    assert evaluated.component_record("env") == {"kind": "tmaze/T-LS", "timeout": 200, "maze_length": 150}
    assert changed_settings(tmaze, evaluated) == {"maze_length": 150}
    assert changed_settings(tmaze, evaluation_config(tmaze, {"env": envs.make("tmaze/T-LN")})) == {"env": "tmaze/T-LN"}


def test_plot_labels_each_curve_by_its_core_and_folder(tmp_path, monkeypatch):
    """A folder named after its core is labelled by the core alone; two folders of one name both keep a curve."""
    from memrl.learn.ppo_config import PPOConfig
    from memrl.run import curves
    from memrl.run.folder import RunFolder

    shown = {}
    monkeypatch.setattr(curves, "save_curves", lambda out, panels, *a: shown.update(panels) or out)
    folders = {"a/lstm": "lstm", "b/lstm": "lstm", "a/no-st": "amrl-max"}
    for name, core in folders.items():
        RunFolder(tmp_path / name).prepare(PPOConfig(core=cores.make(core)))
        RunFolder(tmp_path / name).append_metrics(0, [{"env_steps": 64, "episode_return": 0.5}])
    main(["plot", *(str(tmp_path / name) for name in folders), "--out", str(tmp_path / "curves.png")])
    assert set(shown) == {PPOConfig().env_name}
    assert set(shown[PPOConfig().env_name]) == {"lstm", f"lstm ({tmp_path / 'b/lstm'})", "amrl-max (no-st)"}


def help_page(argv, capsys) -> str:
    with pytest.raises(SystemExit) as exit_info:
        main([*argv, "--help"])
    assert exit_info.value.code == 0
    return capsys.readouterr().out


def test_help_lists_every_command_and_shows_code_plainly(capsys):
    from memrl.cli import analyze_commands

    root = help_page([], capsys)
    assert all(f"• {name}" in root for name in ("train", "eval", "reproduce", "analyze", "bench", "sweep"))
    pages = [
        [],
        ["train"],
        ["train", "ppo"],
        ["train", "impala"],
        ["train", "supervised"],
        ["reproduce"],
        ["list"],
        ["eval"],
        ["plot"],
        ["results"],
        ["bench"],
        ["bench", "htm-agents"],
        ["sweep"],
        ["wandb"],
        *(["analyze", name] for name in analyze_commands()),
    ]
    for argv in pages:
        assert "``" not in help_page(argv, capsys), argv  # reStructuredText literals read as plain text


def test_a_misspelled_option_is_pointed_to_the_commands_that_have_it(capsys):
    with pytest.raises(SystemExit):
        main(["train", "--lrr", "3"])
    assert "in memrl train ppo" in capsys.readouterr().err


def test_parsing_a_command_builds_what_it_names_once_and_no_other_component(monkeypatch):
    """Each registered name's default is made once a process (``Registry.default``); a parse then
    builds the environment and the core it names once each (tyro parses them as what they are): no
    default again, no other core."""
    import collections

    from flax import linen as nn

    import memrl.run.train
    from memrl.envs.tmaze import TMaze

    monkeypatch.setattr(memrl.run.train, "train_run", lambda *args: None)
    command = ["train", "ppo", "core:lstm", "--core.hidden", "24", "env:tmaze/T-LN", "--env.maze-length", "30"]
    main(command)  # the defaults every learner's subcommands show, made once
    built = collections.Counter()
    for cls in (nn.Module, TMaze):
        own = cls.__post_init__

        def counted(self, *args, own=own, **kwargs):
            built[type(self).__name__, getattr(self, "hidden", None)] += 1
            return own(self, *args, **kwargs)

        monkeypatch.setattr(cls, "__post_init__", counted)
    main(command)
    assert built == {("LSTM", 24): 1, ("TMaze", None): 1}


def test_a_pilot_of_other_settings_sets_them_in_every_run_and_names_its_folder_by_them(monkeypatch):
    """``--run-settings FIELD VALUE ...``: each value read as a setting (an integer a float where the
    field holds one), set in every run's config, a component's as ``env.SETTING`` (each run's
    environment keeps its name), and written in the output folder's name."""
    import memrl.experiments.runner

    ran = {}
    monkeypatch.setattr(
        memrl.experiments.runner,
        "reproduce",
        lambda experiment, out, *args, **kwargs: ran.update(e=experiment, out=out),
    )
    pilot = "--seeds 1 --run-settings lr 1 update_epochs 2 feed_prev_reward True env.maze_length 12"
    main(["reproduce", "tln-demo", *pilot.split()])
    configs = list(ran["e"].runs.values())
    assert all(
        c.lr == 1.0 and type(c.lr) is float and c.update_epochs == 2 and c.feed_prev_reward is True for c in configs
    )
    assert {ENVS.name_of(c.env)[0] for c in configs} == {"tmaze/T-L", "tmaze/T-LN"}
    assert all(c.env.params.maze_length == 12 for c in configs)
    assert ran["out"].name == "tln-demo-1seeds-lr1.0-update_epochs2-feed_prev_rewardTrue-env.maze_length12"


def test_configs_only_writes_each_runs_config_and_trains_nothing(tmp_path, capsys):
    from memrl import experiments
    from memrl.run.folder import read_config

    out = tmp_path / "configs"
    main(["reproduce", "tln-demo", "--seeds", "1", "--configs-only", "--out", str(out)])
    experiment = experiments.get("tln-demo").with_run_settings(seeds=1)
    for run, config in experiment.runs.items():
        assert read_config(out / run) == config
        assert not (out / run / "seed_0").exists()
    assert json.loads((out / "experiment.json").read_text())["name"] == "tln-demo"
    with pytest.raises(SystemExit):
        main(["reproduce", "tln-demo", "--configs-only", "--record-dir", str(tmp_path / "records")])
    assert "--configs-only trains nothing, so it writes no record" in capsys.readouterr().err
