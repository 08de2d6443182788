"""benchmarks/nth_farthest_mlp_reference.py runs and reports accuracy overall and on ranks n >= 1."""

import importlib.util
import re
from pathlib import Path

SCRIPT = Path(__file__).parents[2] / "benchmarks" / "nth_farthest_mlp_reference.py"


def test_the_mlp_reference_reports_ten_evaluations(capsys):
    spec = importlib.util.spec_from_file_location("nth_farthest_mlp_reference", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.main(num_objects=3, num_features=2, batch_size=8, updates=10, lr=1e-3)
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 10
    for line in lines:
        match = re.fullmatch(r"update \d+: accuracy (\S+), ranks n >= 1 (\S+) \(shortcut there 0\.500\), \d+ s", line)
        assert match and all(0.0 <= float(v) <= 1.0 for v in match.groups())
