"""One writer per run folder (issue 48): a second writer is refused at once, naming the folder and
the process that holds it; a killed holder never blocks the folder."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from memrl.run.folder_lock import FolderBusy, writing

HOLD = "import sys, time; from memrl.run.folder_lock import writing\nwith writing(sys.argv[1], 'the test holder'):\n    print('held', flush=True); time.sleep(60)"


def test_a_second_writer_is_refused_until_the_holder_dies(tmp_path):
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(
            FolderBusy, match=f"{tmp_path} is being written by process {holder.pid} \\(the test holder\\)"
        ):
            with writing(tmp_path):
                pass
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    with writing(tmp_path, "the second writer"):  # the dead holder's lock is gone
        with writing(tmp_path):  # re-entrant within one process
            assert "the second writer" in (tmp_path / ".writer.lock").read_text()


def test_two_training_commands_on_one_folder(tmp_path):
    out = tmp_path / "run"
    argv = [
        sys.executable,
        "-m",
        "memrl.cli",
        "train",
        "supervised",
        "--task",
        "copying",
        "--task-args",
        "gap",
        "3",
        "--batch-size",
        "8",
        "--core",
        "lstm",
        "--core-args",
        "hidden",
        "8",
        "--total-steps",
        "4000",
        "--updates-per-chunk",
        "25",
        "--embed-dim",
        "8",
        "--out",
        str(out),
    ]
    env = os.environ | {"JAX_PLATFORMS": "cpu"}
    first = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    lock = out / ".writer.lock"
    deadline = time.time() + 120
    while not (lock.exists() and lock.read_text()) and first.poll() is None and time.time() < deadline:
        time.sleep(0.2)
    second = subprocess.run(argv, capture_output=True, text=True, env=env)
    _, first_err = first.communicate(timeout=300)
    assert first.returncode == 0, first_err
    assert second.returncode == 2 and "Traceback" not in second.stderr, second.stderr
    assert f"{out.resolve()} is being written by process {first.pid}" in second.stderr
    rows = [json.loads(line) for line in (out / "seed_0" / "metrics.jsonl").read_text().splitlines()]
    assert [row["sequences"] for row in rows] == [8 * (u + 1) for u in range(500)]  # every update once, in order
