import os
from pathlib import Path
from types import SimpleNamespace

from memrl.run.launch import Job, cores_for, jobs_for


def seeds(n):
    return SimpleNamespace(seed_list=lambda: list(range(n)))


def test_cpu_jobs_start_first_seeds_together_and_follow_with_the_rest():
    dirs = [Path("a"), Path("b"), Path("c")]
    jobs = jobs_for(dirs, [seeds(3), seeds(2), seeds(3)], on_cpu=True, workers=2)
    assert [(j.run_dir.name, j.seeds) for j in jobs] == [
        ("a", (0,)),
        ("b", (0,)),
        ("a", (1,)),
        ("a", (2,)),
        ("b", (1,)),
        ("c", (0,)),
        ("c", (1,)),
        ("c", (2,)),
    ]


def test_gpu_jobs_are_whole_runs():
    assert jobs_for([Path("a"), Path("b")], [seeds(3), seeds(1)], on_cpu=False, workers=2) == [
        Job(Path("a"), (0, 1, 2)),
        Job(Path("b"), (0,)),
    ]


def test_a_pipelined_job_takes_a_second_core_only_when_no_job_waits_for_it():
    lagged = SimpleNamespace(seed_list=lambda: [0, 1], policy_lag=1)
    first, last = jobs_for([Path("a")], [lagged], on_cpu=True, workers=2)
    assert first.pipelined and last.pipelined
    assert cores_for(first, free=[0, 1], waiting=1) == (0,)
    assert cores_for(last, free=[0, 1], waiting=0) == (0, 1)
    assert cores_for(last, free=[1], waiting=0) == (1,)
    assert cores_for(Job(Path("b"), (0,)), free=[0, 1], waiting=0) == (0,)  # without a lag, one core


def test_a_worker_ends_when_its_launcher_is_killed(tmp_path):
    """A SIGKILL of the launcher alone leaves no orphan worker training on (issue 86 §1)."""
    import signal
    import subprocess
    import sys
    import time

    worker = "from memrl.run.worker import end_with_launcher; end_with_launcher(); import time; time.sleep(60)"
    launcher = (
        "import os, subprocess, sys, time\n"
        f"child = subprocess.Popen([sys.executable, '-c', {worker!r}], env={{**os.environ, 'MEMRL_LAUNCHER_PID': str(os.getpid())}})\n"
        f"open({str(tmp_path / 'pid')!r}, 'w').write(str(child.pid))\n"
        "time.sleep(60)\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", launcher])
    pid_file = tmp_path / "pid"
    while not pid_file.exists() or not pid_file.read_text():
        time.sleep(0.05)
    child = int(pid_file.read_text())
    time.sleep(1.0)  # the worker has set its death signal
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    for _ in range(100):
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            return
        if open(f"/proc/{child}/stat").read().split()[2] == "Z":  # ended, not yet reaped by init
            return
        time.sleep(0.05)
    os.kill(child, signal.SIGKILL)
    raise AssertionError("the worker outlived its launcher by 5 s")
