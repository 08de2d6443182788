"""Records and the scoreboard: checks decided over seeds, verdicts from central checks, every
version's record kept, and the generated scoreboard equal to the committed records."""

import copy
import json
import math
from pathlib import Path

import pytest

from memrl import experiments
from memrl.experiments.record import check_history, check_record, load_records, newest, record_name, verdict
from memrl.experiments.scoreboard import amount, generated_files, page

ROOT = Path(__file__).parents[2]
RECORDS = ROOT / "docs" / "results"


def check(central=True, passed=True, decided=True, reversed=False, learning=False, margin=0.1, seeds=3):
    return {
        "description": "",
        "central": central,
        "learning": learning,
        "value": 1.0,
        "margin": margin,
        "passed": passed,
        "decided": decided,
        "reversed": reversed,
        "per_seed": [1.0] * seeds,
    }


@pytest.mark.parametrize(
    "checks, expected",
    [
        ([check(), check(), check(central=False, passed=False, decided=False)], "reproduced"),
        ([check(), check(decided=False)], "partly"),
        ([check(decided=False), check(decided=False)], "direction only"),
        ([check(decided=False), check(passed=False, decided=False)], "not reproduced"),
        (
            [check(passed=False, decided=False, reversed=True)],
            "not reproduced",
        ),  # reversed, but nothing says the model learned
        ([check(passed=False, decided=False, reversed=True), check(central=False, learning=True)], "reversed"),
        (
            [check(passed=False, decided=False, reversed=True), check(central=False, learning=True, decided=False)],
            "not trained",
        ),
        ([check(decided=False), check(central=False, learning=True, passed=False, decided=False)], "not trained"),
        # a learning check undecided on two seeds cannot say the model did not learn
        ([check(decided=False), check(central=False, learning=True, decided=False, seeds=2)], "direction only"),
        ([check(central=False)], "not run"),
        ([], "not run"),
    ],
)
def test_the_verdict_follows_the_central_checks_and_whether_the_model_learned(checks, expected):
    assert verdict(checks) == expected


def standard_error(values):
    mean = sum(values) / len(values)
    return math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1) / len(values))


def test_a_records_margins_recompute_by_hand_from_its_per_seed_values():
    """One level and one ordering of committed records, recomputed here from their per-seed values."""
    amrl = json.loads((RECORDS / "amrl-tmaze" / "v2.json").read_text())
    level = next(c for c in amrl["checks"] if c["run"] == "T-LN/lstm")
    mean = sum(level["per_seed"]) / 3
    assert level["value"] == pytest.approx(mean) and level["margin"] == pytest.approx(
        2 * standard_error(level["per_seed"])
    )
    assert level["op"] == "<=" and level["decided"] == (mean + level["margin"] <= level["threshold"])

    rmc = json.loads((RECORDS / "rmc-lte" / "v4.json").read_text())
    ordering = rmc["checks"][0]
    assert ordering["paired"]  # supervised runs: seed i of both models saw the same programs
    differences = [a - b for a, b in zip(ordering["per_seed"], ordering["against_per_seed"])]
    assert ordering["value"] - ordering["threshold"] == pytest.approx(sum(differences) / 3)
    assert ordering["margin"] == pytest.approx(2 * standard_error(differences))
    assert ordering["passed"] and not ordering["decided"]  # two of three seed pairs, inside the margin

    epn = json.loads((RECORDS / "epn-memory-planning" / "v4.json").read_text())
    welch = epn["checks"][0]  # RL runs share no episodes: Welch
    assert not welch["paired"]
    expected = 2 * math.sqrt(standard_error(welch["per_seed"]) ** 2 + standard_error(welch["against_per_seed"]) ** 2)
    assert welch["margin"] == pytest.approx(expected)


def test_a_record_whose_numbers_its_seeds_do_not_give_is_refused():
    record = json.loads((RECORDS / "amrl-tmaze" / "v2.json").read_text())
    with pytest.raises(ValueError, match="missing verdict"):
        check_record({k: v for k, v in record.items() if k != "verdict"}, "x")
    with pytest.raises(ValueError, match="its checks give 'partly'"):
        check_record({**record, "verdict": "reproduced"}, "x")
    with pytest.raises(ValueError, match="missing margin"):
        check_record({**record, "checks": [{k: v for k, v in record["checks"][0].items() if k != "margin"}]}, "x")
    widened = copy.deepcopy(record)
    widened["checks"][6]["margin"] = 0.01  # the within-seed margin of old: not what the seeds give
    with pytest.raises(ValueError, match="says margin 0.01; its per-seed values give"):
        check_record(widened, "x")
    lenient = copy.deepcopy(record)
    lenient["checks"][4]["per_seed"] = [3.79, 3.79, 3.79]  # short of 3.8: no leniency toward passing
    with pytest.raises(ValueError, match="passed"):
        check_record(lenient, "x")


def test_a_version_after_a_failed_one_must_say_what_it_changed():
    records = load_records(RECORDS)
    lte = [r for r in records if r["experiment"] == "rmc-lte"]
    assert [r["version"] for r in sorted(lte, key=lambda r: r["version"])] == [1, 3, 4]
    check_history(lte)
    silent = [{k: v for k, v in r.items() if k != "changes"} for r in lte]
    with pytest.raises(ValueError, match="rmc-lte v3 follows v1 .* must say what it changed"):
        check_history(silent)


def test_what_the_audit_found_is_no_longer_claimed():
    latest = {r["experiment"]: r for r in newest(load_records(RECORDS))}
    for record in latest.values():
        if record["verdict"] == "reproduced":
            central = [c for c in record["checks"] if c["central"]]
            assert all(c["margin"] is not None and len(c["per_seed"]) >= 3 for c in central), record["experiment"]
    assert latest["tlb-listops"]["verdict"] != "reproduced"
    assert latest["epn-memory-planning"]["verdict"] == "not trained"
    assert latest["popgym-suite"]["kind"] == "benchmark" and experiments.get("popgym-suite").kind == "benchmark"


def test_every_experiment_has_a_finding_central_checks_and_a_committed_record():
    records = load_records(RECORDS)
    pages = {path.name: path.read_text() for path in RECORDS.glob("*.md")}
    assert {r["experiment"] for r in records} == set(experiments.names())
    for name in experiments.names():
        presets = experiments.get(name).presets or (None,)
        for preset in presets:
            experiment = experiments.get(name, preset)
            assert experiment.finding and any(e.central for e in experiment.expectations), (name, preset)
    for record in records:
        assert f'<a id="{record["section"]}"></a>' in pages[page(record)], record["experiment"]  # the scoreboard's link
        assert (RECORDS / record_name(record["experiment"], record["preset"], record["version"])).is_file()
    for record in newest(records):  # earlier versions may have had other runs
        runs = experiments.get(record["experiment"], None if record["preset"] == "-" else record["preset"]).runs
        assert set(record["runs"]) <= set(runs), record["experiment"]


def test_a_record_in_the_wrong_file_is_refused(tmp_path):
    (tmp_path / "rmc-lte").mkdir()
    (tmp_path / "rmc-lte" / "v9.json").write_text((RECORDS / "rmc-lte" / "v4.json").read_text())
    with pytest.raises(ValueError, match="belongs in"):
        load_records(tmp_path)
    (tmp_path / "rmc-lte" / "v9.json").write_text("{")
    with pytest.raises(ValueError, match="v9.json: not a JSON record"):
        load_records(tmp_path)
    (tmp_path / "notes.json").write_text("{}")
    with pytest.raises(ValueError, match="notes.json: not where a record lies"):
        load_records(tmp_path)


def test_the_docs_hold_the_scoreboard_the_records_give():
    for path, text in generated_files(ROOT, load_records(RECORDS)).items():
        assert path.read_text() == text, f"regenerate: memrl results --write ({path.name} differs)"


def test_budgets_are_written_short():
    assert [amount(n) for n in (1_000_000_000, 600_000, 3_840_000, 64, None)] == [
        "1e9",
        "600k",
        "3.84M",
        "64",
        "not stated",
    ]


def test_memrl_results_prints_the_recomputed_scoreboard_with_benchmarks_apart(capsys):
    from memrl.experiments.scoreboard import show

    show(RECORDS)
    printed = capsys.readouterr().out
    assert "epn-memory-planning (cpu, v4)" in printed and "not trained" in printed
    assert (
        "popgym-suite (-, v2) (benchmark)" in printed
        and "memory-benchmark (cpu, v1) (benchmark)" in printed
        and "benchmarks, not in the papers' counts" in printed
    )


@pytest.mark.parametrize(
    "b", [{"mean": 0.5, "standard_error": None, "episodes": None, "per_seed": [0.4, 0.5, 0.6]}, 0.5]
)
def test_a_check_the_runner_writes_recomputes_to_itself(b):
    """Whatever the entries hold (per-seed values on both sides, or a pooled number on one), the
    record's check is what ``recomputed`` gives from its own keys."""
    from memrl.experiments.base import Expectation
    from memrl.experiments.record import DERIVED, recomputed

    a = {"mean": 0.8, "standard_error": 0.01, "episodes": 300, "per_seed": [0.7, 0.8, 0.9]}
    expectation = Expectation("a", ">", None, "", evaluated=("t",), against="b")
    check = {"against": "b", "op": ">", **expectation.outcome({}, {"t": {"a": a, "b": b}})}
    assert {key: check[key] for key in DERIVED} == recomputed(check)
    assert check["decided"] == isinstance(b, dict)
