"""Records and the scoreboard: verdicts from central checks, every experiment recorded, and the
generated scoreboard equal to the committed records."""

import json
import re
from pathlib import Path

import pytest

from memrl import experiments
from memrl.experiments.base import Expectation
from memrl.experiments.record import check_record, load_records, record_name, verdict
from memrl.experiments.scoreboard import amount, generated_files

ROOT = Path(__file__).parents[2]


def check(central=True, passed=True, reversed=False):
    return {"description": "", "central": central, "value": 1.0, "margin": None, "passed": passed, "reversed": reversed}


@pytest.mark.parametrize("checks, expected", [
    ([check(), check(), check(central=False, passed=False)], "reproduced"),
    ([check(), check(passed=False)], "partly"),
    ([check(passed=False), check(passed=False, reversed=True)], "reversed"),
    ([check(passed=False), check(central=False)], "not reproduced"),
    ([check(central=False)], "not run"),
    ([], "not run"),
])
def test_the_verdict_counts_only_central_checks(checks, expected):
    assert verdict(checks) == expected


def test_a_comparison_is_reversed_only_beyond_its_margin():
    summaries = {
        "a": {"final_mean": 5.0, "final_standard_error": 0.5, "final_episodes": 40},
        "b": {"final_mean": 7.0, "final_standard_error": 0.5, "final_episodes": 40},
        "c": {"final_mean": 7.0, "final_standard_error": None, "final_episodes": None},
    }
    beyond = Expectation("a", ">", None, "", against="b").outcome(summaries, None)  # 2.0 below, margin 2 * 0.707
    assert beyond["margin"] == pytest.approx(2 * 0.5 * 2**0.5) and not beyond["passed"] and beyond["reversed"]
    summaries["b"]["final_mean"] = 6.0  # 1.0 below: inside the margin
    assert not Expectation("a", ">", None, "", against="b").outcome(summaries, None)["reversed"]
    unknown = Expectation("a", ">", None, "", against="c").outcome(summaries, None)  # no standard error: no margin, never reversed
    assert unknown["margin"] is None and not unknown["passed"] and not unknown["reversed"]


def test_a_record_with_a_missing_key_or_a_wrong_verdict_is_refused():
    record = json.loads((ROOT / "docs" / "results" / "tln-demo.json").read_text())
    with pytest.raises(ValueError, match="missing verdict"):
        check_record({k: v for k, v in record.items() if k != "verdict"}, "x")
    with pytest.raises(ValueError, match="central checks give 'reproduced'"):
        check_record({**record, "verdict": "partly"}, "x")
    with pytest.raises(ValueError, match="missing margin"):
        check_record({**record, "checks": [{k: v for k, v in record["checks"][0].items() if k != "margin"}]}, "x")


def test_every_experiment_has_a_finding_central_checks_and_a_committed_record():
    records = load_records(ROOT / "docs" / "results")
    anchors = set(re.findall(r'<a id="([^"]+)"></a>', (ROOT / "docs" / "results.md").read_text()))
    assert {r["experiment"] for r in records} == set(experiments.names())
    for name in experiments.names():
        presets = experiments.get(name).presets or (None,)
        for preset in presets:
            experiment = experiments.get(name, preset)
            assert experiment.finding and any(e.central for e in experiment.expectations), (name, preset)
    for record in records:
        assert record["section"] in anchors, record["experiment"]
        assert record_name(record["experiment"], record["preset"]) in {p.name for p in (ROOT / "docs" / "results").glob("*.json")}
        runs = experiments.get(record["experiment"], None if record["preset"] == "-" else record["preset"]).runs
        assert set(record["runs"]) <= set(runs), record["experiment"]


def test_the_docs_hold_the_scoreboard_the_records_give():
    for path, text in generated_files(ROOT, load_records(ROOT / "docs" / "results")).items():
        assert path.read_text() == text, f"regenerate: memrl results --write ({path.name} differs)"


def test_budgets_are_written_short():
    assert [amount(n) for n in (1_000_000_000, 600_000, 3_840_000, 64, None)] == ["1e9", "600k", "3.84M", "64", "not stated"]
