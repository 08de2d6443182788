"""Bad input through the command line: each is refused before anything is built or written, with
exit status 2, no traceback, and a message that names the setting and what it allows (issue 27);
files memrl reads name themselves when they are unreadable; a diverging run stops with its update."""

import dataclasses
import json
import os

import jax
import numpy as np
import pytest

from memrl import cores, envs, tasks
from memrl.cli import main
from memrl.learn.learners import learner_for
from memrl.learn.supervised_config import SupervisedConfig
from memrl.run.folder import RunFolder
from memrl.run.seed_training import train_seeds


def refused(argv, capsys) -> str:
    """stderr of ``memrl ARGV``, which must exit with status 2 and no traceback."""
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and "Traceback" not in err, err
    return err


@pytest.mark.parametrize(
    "argv, message",
    [
        # settings out of range, named with what is allowed (issue 27's list first)
        (["train", "--core", "lstm", "--core-args", "hidden", "-3"], "LSTM.hidden must be a positive integer, got -3"),
        (
            ["train", "--env-args", "maze_length", "0"],
            "maze_length must be >= 2 (a start cell and the junction), got 0",
        ),
        (["train", "--env-args", "timeout", "-1"], "timeout must be >= 1"),
        (
            ["train", "--env-args", "timeout", "50"],
            "timeout (50) must be >= maze_length (100): the shortest episode takes 100 steps",
        ),
        (
            ["train", "--env", "minecraft-maze/MC-LSN", "--env-args", "timeout", "60"],
            "timeout must be > 61, got 60: the shortest episode of 10 rooms takes 62 steps",
        ),
        (
            ["train", "--env", "tmaze/T-LO", "--env-args", "maze_length", "50"],
            "second_indicator_pos must lie in 0..maze_length - 2 = 48",
        ),
        (["train", "--env-args", "indicator_pos", "99"], "indicator_pos must lie in 0..maze_length - 2 = 98"),
        (
            ["train", "--core", "gtrxl", "--core-args", "num_heads", "3"],
            "d_model (128) must be divisible by num_heads (3)",
        ),
        (
            ["train", "--core", "gtrxl", "--core-args", "mlp_dim", "0"],
            "TransformerXL.mlp_dim must be a positive integer, got 0",
        ),
        (
            ["train", "--core", "trxl", "--core-args", "memory_length", "-1"],
            "TransformerXL.memory_length must be a positive integer, got -1",
        ),
        (["train", "--core", "htm", "--core-args", "k", "100"], "k (100) must be between 1 and num_chunks (64)"),
        (
            ["train", "--core", "htm", "--core-args", "chunk_size", "0"],
            "HierarchicalTransformerMemory.chunk_size must be a positive integer",
        ),
        (
            ["train", "--core", "rmc", "--core-args", "mem_slots", "0"],
            "RelationalMemory.mem_slots must be a positive integer, got 0",
        ),
        (
            ["train", "--core", "dnc", "--core-args", "num_reads", "0"],
            "DNC.num_reads must be a positive integer, got 0",
        ),
        (
            ["train", "--core", "tlb", "--core-args", "chunk_size", "0"],
            "TemporalLatentBottleneck.chunk_size must be a positive integer, got 0",
        ),
        (
            ["train", "--core", "amrl-max", "--core-args", "hidden", "0"],
            "AMRL.hidden must be a positive integer, got 0",
        ),
        (
            ["train", "--core", "amrl-avg", "--core-args", "hidden", "7"],
            "hidden must be even (its output is split in half), got 7",
        ),
        (["train", "--core", "set", "--core-args", "features", "0"], "SET.features must be a positive integer, got 0"),
        (
            ["train", "--core", "set", "--core-args", "features", "7"],
            "SET.features must equal the width of its inputs (256",
        ),
        (
            ["train", "--core", "conv-lstm", "--core-args", "channels", "0"],
            "ConvLSTM.channels must be a positive integer, got 0",
        ),
        (
            ["train", "--core", "epn", "--env", "memory-planning/4x4", "--core-args", "num_heads", "3"],
            "width (64) must be divisible by num_heads (3)",
        ),
        (
            ["train", "--env", "memory-planning/4x4", "--env-args", "maze_size", "5"],
            "'memory-planning/4x4' fixes maze_size by its name",
        ),
        (
            ["train", "--env", "memory-planning/4x4", "--env-args", "max_steps", "1"],
            "max_steps must be >= 2 (steps per episode; the goal is never the start cell",
        ),
        (
            ["train", "--env", "graph-nav/7", "--env-args", "max_steps", "1"],
            "max_steps must be >= 2 (steps per episode; the goal is never the start state",
        ),
        (
            ["train", "--env", "boxworld/viewport", "--env-args", "min_path", "3", "max_steps", "6"],
            "max_steps must be >= 2 * min_path + 1 = 7, got 6: no level could be solved",
        ),
        (
            ["train", "--env", "boxworld/viewport", "--env-args", "min_path", "3", "max_path", "2"],
            "need 1 <= min_path <= max_path <= path_capacity (5)",
        ),
        (["train", "--env", "minipacman/viewport", "--env-args", "max_steps", "0"], "max_steps must be >= 1"),
        (["train", "--devices", "2"], "--devices must lie in 1..1 (the local cpu devices), got 2"),
        (["train-supervised", "--devices", "0"], "--devices must lie in 1..1 (the local cpu devices), got 0"),
        (["train", "--lr", "-1"], "lr must be > 0, got -1.0 (--lr)"),
        (["train", "--lr", "nan"], "lr (--lr) must be a finite number, got nan"),
        (["train", "--lr", "inf"], "lr (--lr) must be a finite number, got inf"),
        (
            ["train", "--core", "gtrxl", "--core-args", "gate_bias", "inf"],
            "core setting gate_bias (--core.gate_bias) must be a finite number, got inf",
        ),
        (["train", "--num-envs", "0"], "num_envs must be a positive integer, got 0 (--num-envs)"),
        (["train", "--gae-lambda", "1.5"], "gae_lambda must be within [0.0, 1.0], got 1.5"),
        (["train", "--entropy-coef", "-1"], "entropy_coef must be >= 0, got -1.0"),
        (["train-supervised", "--batch-size", "0"], "batch_size must be a positive integer, got 0 (--batch-size)"),
        (["train-supervised", "--task-args", "gap", "0"], "Copying.gap must be a positive integer, got 0"),
        (
            ["train-supervised", "--task", "digits", "--task-args", "patch_size", "3"],
            "Digits.patch_size must divide the image side 8 (1, 2, 4 or 8), got 3",
        ),
        (
            ["train-supervised", "--task", "pai", "--core", "htm-pai", "--task-args", "chain_length", "1"],
            "chain_length must be >= 2, got 1",
        ),
        # names, types and commands
        (["train", "--core", "lstmx"], "unknown core 'lstmx'; did you mean 'lstm' or 'mlstm'? (`memrl list` names all"),
        (
            ["train", "--core", "lstm", "--core-args", "hiden", "8"],
            "core 'lstm' has no setting 'hiden' (--core-args); its settings: hidden",
        ),
        (["train", "--core-args", "hidden", "wide"], "Error parsing --core.hidden"),
        (["train", "--env-args", "maze_length", "1.5"], "Error parsing --env.maze-length"),
        (["train", "env:tmaze/T-LN", "--env.maze-length", "1.5"], "Error parsing --env.maze-length"),
        (["train", "env:tmaze/T-LN", "--env.maze-lenth", "9"], "--env.maze-length INT"),
        (["train", "--env", "tmaze/T-L", "env:tmaze/T-LN"], "--env tmaze/T-L and env:tmaze/T-LN both name the env"),
        (["train-supervised", "--task-args", "gap", "long"], "Error parsing --task.gap"),
        (["list", "--task", "copyin"], "unknown task 'copyin'"),
        (
            ["train", "--env", "tmaze/T-Q"],
            "unknown environment 'tmaze/T-Q'; did you mean 'tmaze/T-L' or 'tmaze/T-LS' or 'tmaze/T-LO'? (`memrl list` names all",
        ),
        (
            ["train", "--env", "CartPole-v1"],
            "unknown environment 'CartPole-v1'; did you mean 'gymnax/CartPole-v1' or 'gymnasium/CartPole-v1'?",
        ),
        (["reproduce", "amrl-tmazee"], "unknown experiment 'amrl-tmazee'; did you mean 'amrl-tmaze'?"),
        (["train", "--gamma", "2"], "gamma must be within [0.0, 1.0]"),
        (
            ["reproduce", "nope"],
            "unknown experiment 'nope'; known: amrl-minecraft, amrl-minecraft-imitation, amrl-tmaze",
        ),
        (
            ["reproduce", "tln-demo", "--preset", "cpu"],
            "experiment 'tln-demo' has no presets; experiments with presets: amrl-minecraft, amrl-tmaze, epn-graph-nav",
        ),
        (["reproduce", "htm-ballet", "--preset", "tpu"], "preset must be one of ('cpu', 'gpu', 'paper'), got 'tpu'"),
        (["reproduce", "amrl-tmaze", "--preset", "gpu"], "preset must be one of ('cpu', 'paper'), got 'gpu'"),
        (["list", "--experiment", "tln-demo"], "experiment 'tln-demo' has no settings table"),
        (["reproduce", "htm-pai", "--num-envs", "8"], "has runs without a 'num_envs' setting"),
        (["reproduce", "tln-demo", "--num-envs", "0"], "num_envs must be a positive integer"),
        (["reproduce", "tln-demo", "--seeds", "0"], "seeds must be a positive integer"),
        (["reproduce", "tln-demo", "--seed", "-1"], "seed must lie in [0, "),
        (["reproduce", "tln-demo", "--run-settings", "lr"], "--run-settings takes FIELD VALUE pairs, got 1 words: lr"),
        (["reproduce", "tln-demo", "--run-settings", "lrr", "1e-3"], "has runs without a 'lrr' setting"),
        (
            ["reproduce", "tln-demo", "--run-settings", "env.maze_lengthh", "12"],
            "environment 'tmaze/T-L' has no setting 'maze_lengthh'; its settings: maze_length",
        ),
        (["reproduce", "tln-demo", "--run-settings", "lr", "-1"], "lr must be"),
        (
            ["reproduce", "tln-demo", "--run-settings", "lr", "1e-3", "--record-dir", "/tmp/records"],
            "--run-settings runs a pilot of other settings than the experiment's, whose record is not the experiment's",
        ),
        (["reproduce", "amrl-tmaze", "--runs", "T-LS/lstmx"], "experiment 'amrl-tmaze' has runs T-LS/amrl-max, "),
        (["eval", "/nonexistent/run"], "is not a run folder"),
        (
            ["eval", "/nonexistent/run", "--env.maze-length", "9"],
            "(no config.json): --env.maze-length changes a run's env",
        ),
        (["train-impala", "--policy-lag", "-1"], "policy_lag must be >= 0, got -1"),
        (["train-supervised", "--task", "pia"], "unknown task 'pia'; did you mean 'pai'? known: babyai, copying"),
        (["train-supervised", "--core", "epn"], "takes named inputs"),
        (
            ["train-supervised", "--core", "tlb", "--readout", "state"],
            "readout \"state\" answers once, from the final state; task 'copying' is scored at other steps too",
        ),
        (["train-supervised", "--core", "tlb", "--core-args", "state_reads", "top_down"], "state_reads must be one of"),
        (["train-supervised", "--task", "pai"], "train it with a task model (htm-pai)"),
        (["analyze", "distance-probe", "/nonexistent/run"], "is not a run folder"),
        (["analyze", "attention", "/nonexistent/run"], "is not a run folder"),
        (["reproduce", "amrl-tmaze", "--add-cores", "gru"], "amrl-tmaze can add the cores dnc, not gru"),
        (
            ["reproduce", "htm-pai", "--add-cores", "dnc"],
            "experiment 'htm-pai' adds no cores; experiments that do: amrl-tmaze",
        ),
        (["analyze", "planner-distance", "--maze-size", "2"], "maze_size must be >= 3"),
        (["analyze", "planner-distance", "--iterations", "2", "0"], "counts >= 1"),
        (["analyze", "visited-moves", "--maze-size", "2"], "maze_size must be >= 3"),
        (
            ["analyze", "visited-moves", "--steps", "150"],
            "steps must be a positive multiple of 100 (steps between checkpoints), got 150",
        ),
        (["reproduce", "tln-demo", "--devices", "2"], "--devices must lie in 1..1"),
        (["reproduce", "rmc-nth-farthest", "--devices", "0"], "--devices must lie in 1..1"),
        (
            ["train-supervised", "--task", "pai", "--core", "htm-pai", "--stages", "100 stored_chain=2"],
            "task 'pai' has no setting 'stored_chain' (--stages '100 stored_chain=2'); its settings: ",
        ),
        (["analyze", "gradients", "--steps", "0"], "--steps must be a positive integer, got 0"),
        *(
            (
                [*command, "--cores"],
                "--cores must be one or more values, each a core's registered name (memrl list); got nothing",
            )
            for command in (["analyze", "gradients"], ["analyze", "snr"], ["analyze", "gradient-scale"])
        ),
        (["analyze", "planner-distance", "--lr", "inf"], "--lr must be a finite number > 0, got inf"),
        (["analyze", "ballet-memory", "--test-episodes", "0"], "--test-episodes must be a positive integer, got 0"),
        (["analyze", "planner-distance", "--seed", "-1"], "--seed must be >= 0, got -1"),
        (
            ["analyze", "chunk-selection", "/nonexistent/run", "--steps", "0"],
            "--steps must be a positive integer, got 0",
        ),
        (
            ["analyze", "distance-probe", "/nonexistent/run", "--max-iterations", "0"],
            "--max-iterations must be a positive",
        ),
        # a value given twice; memrl bench's own settings (checked before anything is measured)
        (
            ["train", "--core-args", "hidden", "64", "hidden", "32"],
            "--core-args gives hidden more than once; give each setting once",
        ),
        (["train", "--lr", "1e-3", "--lr", "1e-4"], "--lr given more than once; give each flag once"),
        (["bench", "throughput", "--updates", "0"], "--updates must be a positive integer, got 0"),
        (["bench", "rmc", "--head-size", "-4"], "--head-size must be a positive integer, got -4"),
        (
            ["bench", "tlb", "--chunks", "100", "0"],
            "--chunks must be one or more values, each a positive integer; got 100 0",
        ),
        (["bench", "unroll", "--lengths", "0"], "--lengths must be one or more values, each a positive integer; got 0"),
        (["bench", "htm", "--width", "100"], "--width must be a multiple of 8"),
        (["bench", "throughput", "--cores", "lstmx"], "--cores: unknown core 'lstmx'; did you mean 'lstm' or 'mlstm'?"),
        (["bench", "all", "--baseline", "no-such-revision"], "--baseline 'no-such-revision': git cannot read"),
        # several processes (hosts.py)
        (
            ["train", "--workers", "-1"],
            "--workers must be a positive integer (processes at once; leave it out for one per CPU core), got -1",
        ),
        (["train", "--workers", "0"], "--workers must be a positive integer"),
        (["reproduce", "tln-demo", "--workers", "0"], "--workers must be a positive integer"),
        (
            ["train", "--core", "lstm", "--core-args", "hidden", "1000000000"],
            "GiB of memory here (cpu); choose smaller sizes",
        ),
        (["train", "--encoder-widths", "0"], "encoder_widths must be positive integers, got (0,) (--encoder-widths)"),
        (
            ["train", "--core", "lstm", "--head-widths", "64", "0"],
            "head_widths must be positive integers, got (64, 0) (--head-widths)",
        ),
        (["train", "--num-processes", "2"], "--coordinator HOST:PORT and --num-processes > 1 go together"),
        (
            ["train", "--coordinator", "node0", "--num-processes", "2"],
            "--coordinator must be HOST:PORT with a port in 1..65535, got 'node0'",
        ),
        (
            ["train", "--coordinator", "node0:1234", "--num-processes", "2", "--process-id", "2"],
            "--process-id must lie in 0..1 (--num-processes 2), got 2",
        ),
        (
            ["train-impala", "--coordinator", "node0:1234", "--num-processes", "3", "--num-envs", "16"],
            "num_envs (16) must be divisible by the devices it is split over (1 x 3 processes)",
        ),
    ],
)
def test_bad_input_exits_2_with_a_message(argv, message, tmp_path, capsys):
    assert message in refused([*argv, "--out", str(tmp_path / "run")] if argv[0].startswith("train") else argv, capsys)
    assert not (tmp_path / "run").exists()  # refused before the run folder is made


def test_init_params_are_read_from_where_memrl_train_ran_and_named_there(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    argv = ["train", "--init-params", "earlier/run", "--out", str(tmp_path / "run")]
    assert f"init_params: {tmp_path / 'earlier' / 'run'} is not a run folder" in refused(argv, capsys)


TINY = SupervisedConfig(
    task=tasks.make("copying", gap=2, num_digits=2),
    core=cores.make("gru", hidden=8),
    embed_dim=8,
    batch_size=4,
    total_steps=4 * 3,
    updates_per_chunk=1,
)


@pytest.fixture
def run_folder(tmp_path):
    """A run folder of TINY with the initial model saved as seed 0's checkpoint."""
    folder = RunFolder(tmp_path / "run")
    folder.prepare(TINY)
    folder.save_checkpoint(0, learner_for(TINY).init(jax.random.PRNGKey(0)))
    return folder


def test_an_unreadable_config_names_its_file(run_folder, capsys):
    run_folder.config_path.write_text("{not json")
    assert f"{run_folder.config_path} is not a readable memrl run config" in refused(
        ["eval", str(run_folder.path)], capsys
    )
    run_folder.config_path.write_text(json.dumps({"learner": "supervised", "config": {"tsak": "copying"}}))
    assert "unknown SupervisedConfig fields ['tsak']" in refused(["eval", str(run_folder.path)], capsys)


def test_a_config_of_the_wrong_types_is_refused_from_json_and_from_python(run_folder, capsys):
    record = json.loads(run_folder.config_path.read_text())
    record["config"]["lr"] = "fast"
    run_folder.config_path.write_text(json.dumps(record))
    assert "is not a readable memrl run config" in refused(["eval", str(run_folder.path)], capsys)
    assert "lr must be a number, got 'fast' (--lr)" in refused(["eval", str(run_folder.path)], capsys)
    for wrong, message in [
        (dict(lr="1e-3"), "lr must be a number, got '1e-3'"),
        (dict(seeds=True), "seeds must be a positive integer, got True"),
        (dict(core="lstm"), "core must be the core itself, made by its name"),
        (dict(head_widths=(2.5,)), "head_widths must be integers"),
    ]:
        with pytest.raises(ValueError, match=message):
            dataclasses.replace(TINY, **wrong).validate()


def test_a_user_module_that_fails_on_import_is_named_in_one_line(tmp_path, monkeypatch, capsys):
    (tmp_path / "broken_envs.py").write_text("raise RuntimeError('boom')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert "imports: importing 'broken_envs' raised RuntimeError: boom" in refused(
        ["train", "--imports", "broken_envs", "--out", str(tmp_path / "run")], capsys
    )
    assert "gymnasium cannot make 'broken_envs:Env-v0': it raised RuntimeError: boom" in refused(
        ["train", "--env", "gymnasium/broken_envs:Env-v0", "--out", str(tmp_path / "run")], capsys
    )
    assert not (tmp_path / "run").exists()


def test_resuming_names_an_unreadable_checkpoint_and_says_what_a_missing_one_drops(run_folder, tmp_path, capsys):
    from memrl.run.train import train_folders

    run_folder.append_metrics(0, [{"sequences": 4, "accuracy": 0.5}])
    path = run_folder.checkpoint_path(0)
    path.write_bytes(b"")
    with pytest.raises(
        ValueError, match=f"checkpoint {path} is unreadable .*: remove it to train seed 0 from the start"
    ):
        train_folders([run_folder], workers=1)
    path.unlink()
    from memrl.run.train import announce_discarded_rows

    announce_discarded_rows([run_folder])
    said = " ".join(capsys.readouterr().out.split())  # rich wraps long lines
    assert (
        f"seed 0 of {run_folder.path} has no checkpoint: it starts over, and drops the 1 metrics rows after it" in said
    )
    said = refused(["eval", str(run_folder.path)], capsys)  # metrics of 1 update, its checkpoint removed
    assert f"{path} and its other seeds' are missing, though its metrics record 1 updates: were they removed?" in said
    run_folder.metrics_path(0).unlink()
    assert "do not exist yet: no seed has trained a whole chunk of updates" in refused(
        ["eval", str(run_folder.path)], capsys
    )


def test_resuming_after_the_metrics_file_was_removed_says_which_updates_the_curve_lacks(run_folder, capsys):
    from memrl.run.train import announce_discarded_rows

    runner = learner_for(TINY).init(jax.random.PRNGKey(0))
    run_folder.save_checkpoint(0, runner.replace(update=3))
    run_folder.append_metrics(0, [{"sequences": 4, "accuracy": 0.5}])
    announce_discarded_rows([run_folder])
    said = " ".join(capsys.readouterr().out.split())
    assert f"seed 0 of {run_folder.path} has a checkpoint at update 3 and metrics of 1 updates" in said
    assert "it goes on from update 4, its metrics and curve without updates 2-3" in said


def test_a_cut_or_foreign_checkpoint_names_its_file(run_folder, capsys):
    path = run_folder.checkpoint_path(0)
    path.write_bytes(path.read_bytes()[:100])
    assert f"checkpoint {path} is unreadable or does not fit this run's config" in refused(
        ["eval", str(run_folder.path)], capsys
    )
    other = dataclasses.replace(TINY, core=TINY.core.clone(hidden=16))
    run_folder.save_checkpoint(0, learner_for(other).init(jax.random.PRNGKey(0)))
    assert "its arrays have other shapes" in refused(["eval", str(run_folder.path)], capsys)


def test_a_nan_loss_stops_the_run_at_its_update_and_keeps_the_last_good_checkpoint(tmp_path):
    """An absurd learning rate blows the parameters up in the first update; the second update's loss
    is not finite: the run stops there, and its checkpoint and metrics stay at update 1."""
    config = dataclasses.replace(TINY, lr=1e38)
    folder = RunFolder(tmp_path / "run")
    folder.prepare(config)
    with pytest.raises(
        FloatingPointError,
        match=r"loss is (nan|inf) at update 2 of seed 0: the run stopped, its checkpoint and metrics stay at update 1",
    ):
        train_seeds(config, folder, [0])
    assert int(folder.load_checkpoint(0, learner_for(config).init(jax.random.PRNGKey(0))).update) == 1
    rows = folder.read_metrics(0)
    assert len(rows) == 1 and np.isfinite(rows[0]["loss"])


@pytest.mark.parametrize("steps", ["0", "-5"])
def test_eval_refuses_a_number_of_steps_below_one(run_folder, steps, capsys):
    assert (
        f"--steps must be a positive integer (steps per environment, or held-out sequences for a supervised run), got {steps}"
        in refused(["eval", str(run_folder.path), "--steps", steps], capsys)
    )


@pytest.mark.parametrize(
    "argv, hint",
    [
        (["train", "pp"], "'pp' is not a learner (did you mean ppo?): memrl train {impala,ppo,pqn,r2d2,supervised}"),
        (["train", "--learning-rate", "0.1"], "--learning-rate is not a flag of memrl train ppo: did you mean --lr?"),
        (
            ["train", "impala", "--clone-update", "3"],
            "--clone-update is not a flag of memrl train impala: did you mean --clone-updates?",
        ),
    ],
)
def test_a_misspelt_learner_or_flag_of_train_gets_a_pointer(argv, hint, capsys):
    assert f"memrl: hint: {hint}" in refused(argv, capsys)


def test_every_other_librarys_flag_name_points_at_a_flag_of_a_learner():
    from memrl.cli import FLAG_SYNONYMS, LEARNER_CLASSES
    from memrl.settings import flag_of

    flags = {flag_of(f.name) for config in LEARNER_CLASSES.values() for f in dataclasses.fields(config)}
    assert set(FLAG_SYNONYMS.values()) <= flags and not set(FLAG_SYNONYMS) & flags


def test_eval_refuses_more_steps_than_the_machine_can_hold(tmp_path, capsys):
    from memrl.learn.ppo_config import PPOConfig

    config = PPOConfig(env=envs.make("tmaze/T-L"), num_envs=2, num_minibatches=1, rollout_len=8, total_steps=16)
    folder = RunFolder(tmp_path / "rl")
    folder.prepare(config)
    folder.save_checkpoint(0, learner_for(config).init(jax.random.PRNGKey(0)))
    said = refused(["eval", str(folder.path), "--steps", "100000000000"], capsys)
    assert "--steps 100,000,000,000 x 2 environments would keep" in said and "give at most" in said


def test_an_output_name_or_path_longer_than_the_file_system_allows_is_refused(tmp_path, capsys):
    assert "the name xxxx" in refused(["train", "--out", str(tmp_path / ("x" * 300))], capsys)
    deep = tmp_path.joinpath(*["y" * 200] * 25)
    assert "the files inside it would pass this file system's limit" in refused(["train", "--out", str(deep)], capsys)


def test_an_amnesic_evaluation_of_a_supervised_run_is_refused(run_folder, capsys):
    assert "--amnesic applies to actor-critic runs" in refused(["eval", str(run_folder.path), "--amnesic"], capsys)


def test_output_paths_that_cannot_be_folders_are_refused_before_anything_is_made(tmp_path, capsys):
    a_file = tmp_path / "a_file"
    a_file.write_text("")
    assert f"--out {a_file} is a file, not a folder" in refused(["train", "--out", str(a_file)], capsys)
    assert f"--out {a_file / 'run'} cannot be made: {a_file} is a file" in refused(
        ["train", "--out", str(a_file / "run")], capsys
    )
    assert "--out must name a folder for the output's files, not the current directory" in refused(
        ["train", "--out", ""], capsys
    )
    assert f"--out {a_file} is a file" in refused(["reproduce", "tln-demo", "--out", str(a_file)], capsys)
    assert f"--out {a_file} is a file" in refused(["analyze", "gradients", "--out", str(a_file)], capsys)
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    if not os.access(locked, os.W_OK):  # root writes anywhere: nothing to refuse
        assert f"cannot be made: {locked} is not writable by this user" in refused(
            ["train", "--out", str(locked / "run")], capsys
        )
    assert f"--out {tmp_path} is a folder; give the image file to write" in refused(
        ["plot", str(tmp_path), "--out", str(tmp_path)], capsys
    )
    assert "the image's name must end in one of .png" in refused(
        ["plot", str(tmp_path), "--out", str(tmp_path / "curves.txt")], capsys
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a_file", "locked"]


def test_output_folders_that_hold_other_things_are_refused(run_folder, tmp_path, monkeypatch, capsys):
    """The current directory by its absolute path too; a folder of the user's files; a run or an
    experiment inside a run folder; a place the system refuses although os.access lets root pass."""
    monkeypatch.chdir(tmp_path)
    assert "not the current directory" in refused(["train", "--out", str(tmp_path)], capsys)
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine")
    assert f"--out {mine} holds files that are not a memrl run's (notes.txt)" in refused(
        ["train", "--out", str(mine)], capsys
    )
    assert f"--out {mine} holds files that are not a memrl experiment's (notes.txt)" in refused(
        ["reproduce", "tln-demo", "--out", str(mine)], capsys
    )
    nested = run_folder.path / "demo"
    assert f"--out {nested} lies inside the run folder {run_folder.path}" in refused(
        ["reproduce", "tln-demo", "--out", str(nested)], capsys
    )
    assert f"lies inside the run folder {run_folder.path}" in refused(
        ["train", "--out", str(run_folder.path / "seed_0" / "x")], capsys
    )
    assert "cannot be made" in refused(
        ["train", "--out", "/sys/memrl-probe/run"], capsys
    )  # EPERM for root, not writable for others
    assert (
        (mine / "notes.txt").read_text() == "mine"
        and not nested.exists()
        and not (run_folder.path / "seed_0" / "x").exists()
    )


def test_a_metrics_line_that_is_not_a_row_is_named_and_refused(run_folder, tmp_path, capsys):
    run_folder.append_metrics(0, [{"sequences": 4, "accuracy": 0.5}, {"sequences": 8, "accuracy": 0.6}])
    path = run_folder.metrics_path(0)
    with path.open("a") as f:
        f.write('{"sequences": 12, "accur')  # cut by a kill mid-write: not a row, and not an error
    assert [r["sequences"] for r in run_folder.read_metrics(0)] == [4, 8]
    path.write_text(path.read_text() + "\ngarbage\n" + json.dumps({"sequences": 16}) + "\n")
    message = refused(["plot", str(run_folder.path), "--out", str(tmp_path / "curves.png")], capsys)
    assert f"{path} line 3 is not a metrics row (not JSON" in message and "remove that line" in message
    path.write_text(json.dumps({"sequences": 4}) + "\n[1, 2]\n")
    assert f"{path} line 2 is not a metrics row (not an object of metrics)" in refused(
        ["plot", str(run_folder.path), "--out", str(tmp_path / "c.png")], capsys
    )
    path.write_text(json.dumps({"sequences": 4, "accuracy": "high"}) + "\n")
    assert f"{path} line 1 is not a metrics row ('accuracy' is 'high', not a number)" in refused(
        ["plot", str(run_folder.path), "--out", str(tmp_path / "c.png")], capsys
    )
    assert not (tmp_path / "curves.png").exists()


def test_plot_of_metrics_that_measured_nothing_is_refused(run_folder, tmp_path, capsys):
    """Empty metrics, or every score NaN: refused by name, no blank figure (issue 86 §1)."""
    message = refused(["plot", str(run_folder.path), "--out", str(tmp_path / "c.png")], capsys)
    assert f"{run_folder.path} has no measured accuracy in its metrics" in message
    run_folder.append_metrics(0, [{"sequences": 4, "accuracy": float("nan")}])
    assert "nothing to plot" in refused(["plot", str(run_folder.path), "--out", str(tmp_path / "c.png")], capsys)
    assert not (tmp_path / "c.png").exists()


def test_a_failed_worker_with_an_empty_log_reports_the_free_space(tmp_path):
    from memrl.run.launch import failure_reason

    log = tmp_path / "worker.log"
    log.write_text("")
    assert f"its log {log} is empty;" in failure_reason(log) and "bytes are free on its file system" in failure_reason(
        log
    )
    log.write_text("Traceback (most recent call last):\n  ...\nOSError: [Errno 28] No space left on device\n")
    assert failure_reason(log) == (
        "OSError: [Errno 28] No space left on device; the checkpoints are whole (each written atomically): "
        "free some space and run the same command again to resume"
    )


def test_an_atomic_write_that_fails_leaves_no_partial_file(tmp_path, monkeypatch):
    from memrl.run import folder as folder_module

    target = tmp_path / "checkpoint.msgpack"
    target.write_bytes(b"old")

    def full_disk(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(folder_module.os, "replace", full_disk)
    with pytest.raises(OSError, match="No space left"):
        folder_module.atomic_write(target, b"new")
    assert target.read_bytes() == b"old" and sorted(p.name for p in tmp_path.iterdir()) == ["checkpoint.msgpack"]


def test_plot_writes_one_runs_figure_into_its_folder_and_several_runs_here(run_folder, tmp_path, monkeypatch):
    """The output checks refuse the current directory as a run folder, never as the place of plot's curves.png."""
    run_folder.append_metrics(0, [{"sequences": 4, "accuracy": 0.5}])
    monkeypatch.chdir(tmp_path)
    main(["plot", str(run_folder.path)])
    assert (run_folder.path / "curves.png").exists() and not (tmp_path / "curves.png").exists()
    main(["plot", str(run_folder.path), str(run_folder.path)])
    assert (tmp_path / "curves.png").exists()


def test_a_full_disk_says_so_and_how_to_resume(tmp_path, monkeypatch, capsys):
    """Where this process's write (the summary, metrics.csv) meets a full disk: one line, exit 1."""
    import errno

    from memrl.run import train as train_module

    def full_disk(config, out, *args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "run" / "summary.json"))

    monkeypatch.setattr(train_module, "train_run", full_disk)
    with pytest.raises(SystemExit) as exit_info:
        main(["train", "--out", str(tmp_path / "run")])
    err = capsys.readouterr().err
    assert exit_info.value.code == 1 and "Traceback" not in err
    assert f"no space left on device (writing {tmp_path / 'run' / 'summary.json'}); the checkpoints are whole" in err
    assert f"run the same command again to resume: memrl train --out {tmp_path / 'run'}" in err
