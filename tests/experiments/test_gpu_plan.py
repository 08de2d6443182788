"""The GPU plan (``experiments/gpu_plan.py``): its steps exist at both sizes, a sitting trains, packs
and hands over to the next, writes a record once an experiment's runs have all finished, and stops
when its minutes are spent; on a CPU only its smoke mode runs."""

import json
import subprocess

import pytest

from memrl.experiments.gpu_plan import PLAN, PlanStep, check_plan, run_plan

DEMO = (PlanStep("rmc-pacman", "cpu", ("viewport/rmc", "viewport/lstm"), "a cheap experiment for the tests"),)


def unpack(out, into) -> None:
    """Join the packed parts in ``out`` and unpack them into ``into`` (what benchmarks/gpu_plan.sh does)."""
    into.mkdir(parents=True)
    parts = sorted(out.glob("gpu-plan-runs.tar.gz.*"))
    subprocess.run(f"cat {' '.join(map(str, parts))} | tar -xz -C {into}", shell=True, check=True)


def test_every_step_of_the_plan_builds_at_both_sizes():
    check_plan(PLAN)
    with pytest.raises(ValueError, match="has runs"):
        check_plan((PlanStep("epn-memory-planning", "paper", ("4x4/nothing",), ""),))


def test_the_plan_refuses_a_cpu_outside_smoke_mode(tmp_path):
    with pytest.raises(RuntimeError, match="no accelerator"):
        run_plan(1, tmp_path / "runs", tmp_path / "out", plan=DEMO)


@pytest.mark.slow
def test_a_sitting_writes_the_record_of_finished_runs_and_the_next_goes_on_from_its_pack(tmp_path):
    """On DEMO, not the plan's first step: training that (EPN at the paper's sizes) took two minutes of
    the suite, and ``check_plan`` builds it above."""
    report = run_plan(10, tmp_path / "runs", tmp_path / "out", smoke=True, plan=DEMO)
    assert report["stopped"] is None and report["carry"] == "fits"
    assert set(report["steps"][0]["runs"].values()) == {"finished"}
    assert json.loads((tmp_path / "out" / "gpu-plan.json").read_text()) == report
    record = tmp_path / "out" / "records" / "rmc-pacman"
    assert report["records"] == [str(path) for path in sorted(record.glob("v*.json"))] != []
    unpack(tmp_path / "out", tmp_path / "next")
    again = run_plan(10, tmp_path / "next" / "gpu-plan-runs", tmp_path / "out2", smoke=True, plan=DEMO)
    assert again["steps"] == report["steps"] and again["records"] == []  # nothing trained, no record again


def test_a_sitting_stops_when_its_minutes_are_spent_and_says_where_each_run_stands(tmp_path):
    report = run_plan(0.001, tmp_path / "runs", tmp_path / "out", smoke=True, plan=DEMO)
    assert report["stopped"] == "stopped after 0.001 minutes"
    assert set(report["steps"][0]["runs"].values()) <= {"not started", "update 0 of 2"}
    assert report["records"] == [] and list((tmp_path / "out").glob("gpu-plan-runs.tar.gz.00"))
