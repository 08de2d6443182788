"""Parts of an experiment trained in different sittings make one record (``kept_parts.py``)."""

import dataclasses
import json
import time

import pytest
from conftest import tiny_ppo

from memrl.experiments.base import Expectation, Experiment
from memrl.experiments.record import load_records
from memrl.experiments.runner import reproduce
from memrl.run.folder import ConfigMismatch, RunFolder
from memrl.run.train import train_folders


def parted(keeps_results: bool = True, **fields) -> Experiment:
    return Experiment(
        name="tiny-parts",
        version=1,
        description="tiny",
        runs={"A/gru": tiny_ppo("tmaze/T-L"), "B/gru": tiny_ppo("tmaze/T-L", lr=1e-3)},
        expectations=(Expectation("A/gru", ">=", -100.0, "passes", central=True),),
        reproduces="-",
        finding="-",
        paper_steps=None,
        kind="benchmark",
        parts={"a": ("A",), "b": ("B",)},
        keeps_results=keeps_results,
        **fields,
    )


@pytest.mark.slow
def test_a_part_kept_in_one_sitting_is_restored_in_the_next_and_makes_one_record(tmp_path, capsys, monkeypatch):
    from memrl.experiments import runner

    records, trained = tmp_path / "records", []

    def cut_after_the_first_run(folders, *args, on_job_done, **kwargs):
        trained.append([folder.path.parent.name for folder in folders])

        def kept_then_cut():
            on_job_done()
            raise KeyboardInterrupt

        return train_folders(folders, *args, on_job_done=kept_then_cut, **kwargs)

    monkeypatch.setattr(runner, "train_folders", cut_after_the_first_run)
    with pytest.raises(KeyboardInterrupt):  # a sitting cut short keeps each run it finished, as it finished
        reproduce(parted(), tmp_path / "first", workers=1, record_dir=records)
    monkeypatch.undo()
    kept = records / "tiny-parts" / "kept" / "default" / "A.json"
    assert trained == [["A", "B"]] and kept.exists() and not kept.with_name("B.json").exists()
    reproduce(parted().with_runs(["a"]), tmp_path / "first", workers=1, record_dir=records)  # trained: nothing to do
    assert not (records / "tiny-parts" / "v1.json").exists()  # a part's record is not the experiment's
    sitting = json.loads(kept.read_text())["sittings"]
    assert len(sitting) == 1

    results = reproduce(parted(), tmp_path / "second", workers=1, record_dir=records)  # another machine: no runs/
    printed = capsys.readouterr().out
    unwrapped = lambda text: "".join(text.split())  # the console wraps long paths at its width
    assert unwrapped(f"A/gru: restored from {kept}") in unwrapped(printed)
    first, second = (json.loads((tmp_path / d / "A" / "gru" / "summary.json").read_text()) for d in ("first", "second"))
    assert second == first  # the same summary from the kept metrics
    assert results["summaries"]["B/gru"]["steps_per_seed"] == 64
    record = json.loads((records / "tiny-parts" / "v1.json").read_text())
    assert record["runs"].keys() == {"A/gru", "B/gru"} and load_records(records) == [record]  # kept files are no strays
    restored = RunFolder(tmp_path / "second" / "A" / "gru")
    assert restored.finished() and not restored.checkpoint_path(0).exists()
    with pytest.raises(ConfigMismatch, match="holds the results kept in .*not its parameters"):
        restored.load_checkpoint(0, None)
    assert (records / "tiny-parts" / "kept" / "default" / "B.json").exists()  # kept too, and A's file unchanged
    assert json.loads(kept.read_text())["sittings"] == sitting
    again = reproduce(parted(), tmp_path / "second", workers=1, record_dir=records)  # every run there: none restored
    assert again["wall_time_s"] == results["wall_time_s"] > 0  # still every sitting's training time

    other = dataclasses.replace(parted(), runs={**parted().runs, "A/gru": tiny_ppo("tmaze/T-L", seed=5)})
    reproduce(other, tmp_path / "third", workers=1, record_dir=records)
    assert "trained with another config (seed: 0 there, 5 asked); it trains here" in " ".join(
        capsys.readouterr().out.split()
    )


@pytest.mark.slow
def test_an_evaluation_of_the_agents_is_kept_with_each_run_and_merged_into_the_record(tmp_path):
    """A run restored in a later sitting has no parameters: with evaluation_reads_agents its frozen
    evaluation, made as it was kept, comes back from its kept file, and no run is evaluated twice."""
    from memrl.experiments.evaluations import frozen_returns

    records, evaluated = tmp_path / "records", []
    frozen = frozen_returns(16)

    def evaluation(folders, out):
        evaluated.append(sorted(folders))
        return frozen(folders, out)

    experiment = parted(evaluation=evaluation, evaluation_reads_agents=True)
    reproduce(experiment.with_runs(["a"]), tmp_path / "first", workers=1, record_dir=records)
    kept = json.loads((records / "tiny-parts" / "kept" / "default" / "A.json").read_text())["runs"]["A/gru"]
    assert evaluated == [["A/gru"]] and set(kept["evaluation"]) == {"returns", "returns_without_memory", "memory_gain"}

    results = reproduce(experiment, tmp_path / "second", workers=1, record_dir=records)  # A restored, B trained
    assert evaluated == [["A/gru"], ["B/gru"]]  # B as it was kept; A not again (it has no parameters here)
    assert results["evaluation"]["returns"]["A/gru"] == kept["evaluation"]["returns"]
    assert set(results["evaluation"]["returns"]) == {"A/gru", "B/gru"}
    first = json.loads((tmp_path / "first" / "results.json").read_text())["evaluation"]
    assert first["returns"]["A/gru"] == kept["evaluation"]["returns"]
    with pytest.raises(ValueError, match="reads its agents in an evaluation \\(evaluation_reads_agents\\) it lacks"):
        parted(evaluation_reads_agents=True)


def test_a_record_dir_with_some_runs_is_refused_unless_the_experiment_keeps_its_parts(tmp_path):
    with pytest.raises(ValueError, match="--record-dir writes tiny-parts's record, which some of its runs cannot make"):
        reproduce(parted(keeps_results=False).with_runs(["a"]), tmp_path / "out", record_dir=tmp_path / "records")
    assert not (tmp_path / "out").exists()


def test_only_a_finished_run_is_kept(tmp_path):
    from memrl.run.kept_results import keep_run

    folder = RunFolder(tmp_path / "run")
    folder.prepare(tiny_ppo("tmaze/T-L"))
    with pytest.raises(ValueError, match="seed 0 of .* is at update 0 of 2: only a finished run's results are kept"):
        keep_run(folder)


@pytest.mark.slow
def test_an_experiment_that_keeps_no_parts_counts_every_sittings_training_time(tmp_path, monkeypatch):
    """Its runs resume in its output folder: a sitting cut short, one that trained some runs and the
    one that trained the rest each add their time (``out/sittings.json``) to the record's."""
    from memrl.experiments import runner

    def cut_short(*args, **kwargs):
        time.sleep(1.0)
        raise KeyboardInterrupt

    out = tmp_path / "out"
    monkeypatch.setattr(runner, "train_folders", cut_short)
    with pytest.raises(KeyboardInterrupt):
        reproduce(parted(keeps_results=False), out, workers=1)
    monkeypatch.undo()
    time.sleep(1.0)  # sittings are named to the second
    reproduce(parted(keeps_results=False).with_runs(["a"]), out, workers=1)
    time.sleep(1.0)
    results = reproduce(parted(keeps_results=False), out, workers=1)
    sittings = json.loads((out / "sittings.json").read_text())
    assert len(sittings) == 3 and min(sittings.values()) >= 1.0
    assert results["wall_time_s"] == pytest.approx(sum(sittings.values()))
    assert (
        reproduce(parted(keeps_results=False), out, workers=1)["wall_time_s"] == results["wall_time_s"]
    )  # nothing trained
