"""Several processes train one run (``--coordinator``, ``--num-processes``, ``--process-id``): two
local processes on 127.0.0.1, joined through JAX's CPU collectives, resume a run and equal one
process that holds the same environments; only process 0 writes the run folder. (Bad process settings: test_cli_bad_input.)"""

import json
import socket
import subprocess
import sys

import pytest

from memrl import cores, envs
from memrl.learn.ppo_config import PPOConfig
from memrl.run.folder import RunFolder
from memrl.run.seed_training import train_seeds

TRAIN = [
    "train",
    "--env",
    "tmaze/T-LN",
    "--env-args",
    "maze_length",
    "4",
    "timeout",
    "10",
    "--core",
    "gru",
    "--core-args",
    "hidden",
    "8",
    "--encoder-widths",
    "8",
    "--head-widths",
    "8",
    "--num-envs",
    "8",
    "--rollout-len",
    "8",
    "--num-minibatches",
    "2",
    "--total-steps",
    str(8 * 8 * 3),
    "--updates-per-chunk",
    "2",
]


def memrl(*args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "memrl.cli", *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def metrics(run_dir) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "seed_0" / "metrics.jsonl").read_text().splitlines()]


class Interrupted(Exception):
    pass


def interrupt_after_first_chunk(steps_done):
    if steps_done >= 2 * 64:
        raise Interrupted


def test_two_processes_resume_a_run_and_train_like_one(tmp_path):
    """The two-process run resumes a run interrupted after its first chunk (both processes load its
    checkpoint) and ends as one process does uninterrupted (in this process: one program fewer to
    start and compile)."""
    config = PPOConfig(
        env=envs.make("tmaze/T-LN", maze_length=4, timeout=10),
        core=cores.make("gru", hidden=8),
        encoder_widths=(8,),
        head_widths=(8,),
        num_envs=8,
        rollout_len=8,
        num_minibatches=2,
        total_steps=8 * 8 * 3,
        updates_per_chunk=2,
    )  # what TRAIN says
    one, interrupted = RunFolder(tmp_path / "one"), RunFolder(tmp_path / "two")
    for folder in (one, interrupted):
        folder.prepare(config)
    train_seeds(config, one, [0])
    with pytest.raises(Interrupted):
        train_seeds(config, interrupted, [0], on_chunk=interrupt_after_first_chunk)

    coordinator = f"127.0.0.1:{free_port()}"
    both = [
        memrl(
            *TRAIN,
            "--out",
            str(tmp_path / "two"),
            "--coordinator",
            coordinator,
            "--num-processes",
            "2",
            "--process-id",
            str(i),
        )
        for i in (0, 1)
    ]
    for proc in both:
        out, _ = proc.communicate(timeout=600)
        assert proc.returncode == 0, out[-3000:]
    two, single = metrics(tmp_path / "two"), metrics(tmp_path / "one")
    assert [r["env_steps"] for r in two] == [64, 128, 192]  # process 1 wrote no second copy
    for a, b in zip(single, two):
        for name in ("policy_loss", "value_loss", "entropy", "episode_return"):
            assert a[name] == pytest.approx(b[name], rel=1e-4, abs=1e-6), (name, a, b)
    assert (tmp_path / "two" / "summary.json").exists()
    assert "Rank 1 is connected" in (tmp_path / "two" / "worker_process_1.log").read_text()
