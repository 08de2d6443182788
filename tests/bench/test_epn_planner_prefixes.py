"""benchmarks/epn_planner_prefixes.py runs both planners and reports their rates."""

import dataclasses
import importlib.util
import re
from pathlib import Path

SCRIPT = Path(__file__).parents[2] / "benchmarks" / "epn_planner_prefixes.py"


def test_the_prefix_benchmark_reports_both_planners(capsys, monkeypatch):
    spec = importlib.util.spec_from_file_location("epn_planner_prefixes", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    small = lambda config: dataclasses.replace(
        config,
        num_envs=2,
        rollout_len=4,
        core=config.core.clone(capacity=8, embed_dim=4, width=8, iterations=1),
        head_widths=(8,),
    )
    real_get = module.get
    monkeypatch.setattr(
        module,
        "get",
        lambda name, preset: dataclasses.replace(
            real_get(name, preset), runs={"3x3/epn": small(real_get(name, preset).runs["3x3/epn"])}
        ),
    )
    module.main("cpu", seeds=2, updates=2)
    lines = capsys.readouterr().out.strip().splitlines()
    assert [re.match(r"prefixes (\d)", line)[1] for line in lines] == ["5", "1"]
    assert all(re.search(r"[\d,]+ env steps/s on cpu$", line) for line in lines)
