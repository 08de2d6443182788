"""The command line: listing, and clean errors for bad input."""

import pytest

from memrl.cli import main


def test_list_names_cores_envs_and_experiments(capsys):
    main(["list"])
    out = capsys.readouterr().out
    for name in ("amrl-max", "gtrxl", "tmaze/T-LSO", "gymnax/CartPole-v1", "amrl-tmaze", "tln-demo"):
        assert name in out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["train", "--core", "lstmx"], "unknown core 'lstmx'; known: "),
        (["train", "--env", "tmaze/T-Q"], "unknown env 'tmaze/T-Q'; known: "),
        (["train", "--gamma", "2"], "gamma must lie in"),
        (["reproduce", "nope"], "unknown experiment 'nope'; known: amrl-tmaze"),
        (["eval", "/nonexistent/run"], "is not a run folder"),
    ],
)
def test_bad_input_exits_2_with_a_message(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err
