"""benchmarks/never_right_output.py: its sequences say what it probes, and a variant trains."""

import importlib.util
from pathlib import Path

import jax
import numpy as np
import pytest

SCRIPT = Path(__file__).parents[2] / "benchmarks" / "never_right_output.py"
spec = importlib.util.spec_from_file_location("never_right_output", SCRIPT)
probe = importlib.util.module_from_spec(spec)
spec.loader.exec_module(probe)


def test_the_target_is_the_move_onto_the_first_frames_colour_and_south_is_never_it_on_fixed_cells():
    size, channels, centre = probe.SIZE, probe.CHANNELS, probe.SIZE // 2
    for drawn, moves in ((False, {0, 1, 3}), (True, {0, 1, 2, 3})):
        frames, target = probe.sequences(jax.random.PRNGKey(0), 256, drawn)
        frames = np.asarray(frames).reshape(256, 2, size, size, channels)
        assert set(np.asarray(target).tolist()) == moves
        cue = frames[:, 0, ..., 2:].sum((1, 2)).argmax(-1)  # the first frame's one square
        onto = centre + np.asarray(probe.MOVES)[np.asarray(target)]
        assert np.all(frames[np.arange(256), 1, onto[:, 0], onto[:, 1], 2 + cue] == 1)
        assert np.all(frames[:, 1, ..., 2:].sum((1, 2, 3)) == probe.COLOURS)


def test_a_named_variant_trains_and_reports_its_loss_and_accuracy(capsys):
    probe.main(3, 1, ("South removed (3 outputs)",))
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 2 and lines[1].startswith("South removed (3 outputs), seed 0: ")
    loss, accuracy = (float(v) for v in lines[1].split(": ")[1].split(" (")[0].split(", "))
    assert np.isfinite(loss) and 0.0 <= accuracy <= 1.0
    with pytest.raises(SystemExit, match="no variant 'East removed'; the variants: 'South never the answer'"):
        probe.main(3, 1, ("East removed",))
