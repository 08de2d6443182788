"""Two memrl commands on one machine share its cores (``run/cores_in_use.py``)."""

import collections
import os
import subprocess

import pytest

from memrl.run import cores_in_use

CORES = sorted(os.sched_getaffinity(0))


@pytest.mark.skipif(len(CORES) < 2, reason="needs two cores to pin a process to one of them")
def test_other_workers_are_counted_on_the_cores_they_are_pinned_to(tmp_path):
    worker = subprocess.Popen(["sleep", "60"], preexec_fn=lambda: os.sched_setaffinity(0, {CORES[-1]}))
    other = subprocess.Popen(["sleep", "60"], preexec_fn=lambda: os.sched_setaffinity(0, {CORES[0]}))
    try:
        proc = tmp_path / "proc"
        for pid, cmdline in ((worker.pid, b"python\0-m\0memrl.run.worker\0run\0"), (other.pid, b"sleep\x0060\0")):
            (proc / str(pid)).mkdir(parents=True)
            (proc / str(pid) / "cmdline").write_bytes(cmdline)
        (proc / "self").mkdir()
        assert cores_in_use.other_workers_cores(proc) == collections.Counter({CORES[-1]: 1})  # not the other program
    finally:
        worker.kill(), other.kill()


def test_a_launcher_pins_to_the_cores_other_workers_use_least(monkeypatch):
    monkeypatch.setattr(cores_in_use, "other_workers_cores", lambda: collections.Counter({CORES[0]: 2}))
    assert cores_in_use.least_used_cores(1) == ([CORES[1]] if len(CORES) > 1 else CORES)
    assert cores_in_use.least_used_cores(len(CORES)) == CORES  # every core, in order, when it needs them all
