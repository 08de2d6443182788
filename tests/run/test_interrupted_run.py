"""Ctrl-C during training: one line that says where the checkpoints stand and the command that
resumes them, and exit status 130 (``tests/test_cli.py`` shows that the command resumes)."""

import dataclasses

import pytest

from memrl import cores, tasks
from memrl.cli import main
from memrl.learn.supervised_config import SupervisedConfig
from memrl.run import train
from memrl.run.folder import RunFolder
from memrl.run.seed_training import train_seeds

TINY = [
    "--task",
    "copying",
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
    "32",
    "--updates-per-chunk",
    "2",
    "--workers",
    "1",
]


def test_ctrl_c_says_where_the_run_is_saved_and_how_to_resume(tmp_path, monkeypatch, capsys):
    out = tmp_path / "run"
    args = ["train", "supervised", *TINY, "--out", str(out)]
    config = SupervisedConfig(
        task=tasks.make("copying", gap=2, num_digits=2),
        core=cores.make("gru", hidden=8),
        embed_dim=8,
        batch_size=4,
        total_steps=16,
        updates_per_chunk=2,
    )
    folder = RunFolder(out)
    folder.prepare(config)
    train_seeds(config, folder, [0])  # 4 updates in the checkpoint, as if a longer run had been stopped there

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(train, "run_jobs", interrupted)
    out.joinpath("config.json").unlink()  # the command's run is the 32-sequence one: 8 updates
    folder.prepare(dataclasses.replace(config, total_steps=32))
    with pytest.raises(SystemExit) as exit_info:
        main(args)
    err = capsys.readouterr().err.strip().splitlines()
    assert exit_info.value.code == 130 and len(err) == 1
    assert err[0].startswith(
        "memrl: interrupted, saved at update 4 of 8; the same command resumes: memrl train supervised --task copying"
    )
    assert folder.checkpoint_update(0) == 4 and RunFolder(tmp_path / "none").checkpoint_update(0) == 0


def test_a_ctrl_c_swallowed_on_its_way_is_raised_again():
    """A KeyboardInterrupt raised where the interpreter drops it (JAX's garbage-collection hook) is
    recorded, and the loops that wait on training raise it again."""
    import os
    import signal

    from memrl.run import interrupts

    with interrupts.recorded():
        interrupts.raise_if_requested()  # nothing yet
        try:
            os.kill(os.getpid(), signal.SIGINT)
        except KeyboardInterrupt:
            pass  # swallowed, as an "Exception ignored" callback would
        with pytest.raises(KeyboardInterrupt):
            interrupts.raise_if_requested()
    assert signal.getsignal(signal.SIGINT) is not interrupts._on_interrupt  # the previous handler is back
    try:
        interrupts.raise_if_requested()
    except KeyboardInterrupt:
        pytest.fail("the Ctrl-C outlived its block: training started after it would stop at once")
