"""Timing a learner: the rate after its compile, measured per core."""

import os

import pytest

from memrl.run.timing import on_one_core


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="the system does not let a process choose its cores")
def test_on_one_core_pins_the_process_and_restores_its_cores():
    before = os.sched_getaffinity(0)
    with on_one_core():
        assert os.sched_getaffinity(0) == {min(before)}
    assert os.sched_getaffinity(0) == before
    with pytest.raises(RuntimeError), on_one_core():
        raise RuntimeError
    assert os.sched_getaffinity(0) == before
