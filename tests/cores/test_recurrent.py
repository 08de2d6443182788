"""The recurrent baselines (LSTM, stacked LSTM, GRU) refuse sizes that are not positive integers,
naming the core and the setting, before anything is built."""

import pytest

from memrl import cores


@pytest.mark.parametrize(
    "core, settings, message",
    [
        ("lstm", dict(hidden=-3), r"LSTM.hidden must be a positive integer, got -3"),
        ("lstm", dict(hidden=2.5), r"LSTM.hidden must be a positive integer, got 2.5"),
        ("lstm-stack", dict(layers=0), r"StackedLSTM.layers must be a positive integer, got 0"),
        ("gru", dict(hidden=0), r"GRU.hidden must be a positive integer, got 0"),
    ],
)
def test_bad_sizes_are_refused(core, settings, message):
    with pytest.raises(ValueError, match=message):
        cores.make(core, **settings)
