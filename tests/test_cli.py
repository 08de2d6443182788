"""The command line: listing, and clean errors for bad input."""

import pytest

from memrl.cli import main


def test_list_names_cores_envs_and_experiments(capsys):
    main(["list"])
    out = capsys.readouterr().out
    for name in ("amrl-max", "gtrxl", "epn-nxk", "tmaze/T-LSO", "memory-planning/4x4", "graph-nav/9", "gymnax/CartPole-v1", "amrl-tmaze", "tln-demo", "epn-graph-nav"):
        assert name in out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["train", "--core", "lstmx"], "unknown core 'lstmx'; known: "),
        (["train", "--env", "tmaze/T-Q"], "unknown env 'tmaze/T-Q'; known: "),
        (["train", "--gamma", "2"], "gamma must lie in"),
        (["reproduce", "nope"], "unknown experiment 'nope'; known: amrl-tmaze"),
        (["eval", "/nonexistent/run"], "is not a run folder"),
        (["train-impala", "--policy-lag", "-1"], "policy_lag must be a non-negative integer"),
        (["analyze", "distance-probe", "/nonexistent/run"], "is not a run folder"),
    ],
)
def test_bad_input_exits_2_with_a_message(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("analysis, files", [("gradients", ("gradients.png", "gradients.json")), ("snr", ("snr.png", "snr.json"))])
def test_analyses_write_figure_and_table(analysis, files, tmp_path, capsys):
    main(["analyze", analysis, "--cores", "set", "amrl-sum", "--steps", "12", "--inits", "1", "--out", str(tmp_path)])
    assert "t=10" in capsys.readouterr().out
    for name in files:
        assert (tmp_path / name).stat().st_size > 0


def test_analysis_of_unknown_core_exits_2(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["analyze", "snr", "--cores", "lstmx", "--steps", "5"])
    assert exit_info.value.code == 2
    assert "unknown core 'lstmx'" in capsys.readouterr().err
