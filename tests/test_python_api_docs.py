"""docs/python-api.md: every ```python block runs, in order, in one namespace."""

import re
from pathlib import Path

DOC = Path(__file__).parents[1] / "docs" / "python-api.md"


def test_every_python_example_runs(tmp_path, monkeypatch):
    from memrl import envs

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(envs.ENVS, "_registered", dict(envs.ENVS._factories))  # its registration ends with the test
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)
    assert len(blocks) == 13
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, str(DOC), "exec"), namespace)
    assert namespace["logits"].shape == (12, 2, 3) and namespace["policy"].actions.dims == (4,)
    assert namespace["done"].shape == namespace["returns"].shape == (40, 4)  # the amnesic cloned agent's play
    assert (
        namespace["metrics"]["env_steps"].shape == (2,)
        and namespace["predictions"].shape == namespace["batch"].targets.shape
    )
    assert namespace["own"].record()["env"] == {"kind": "tmaze/T-LN", "maze_length": 3}  # memrl's own name first
    assert namespace["pendulum"].agent.actions.action_shape == (1,)  # a Gaussian over Pendulum's torque
    assert namespace["r2d2"].sequence_length == 24 and namespace["r2d2"].learner == "r2d2"
    assert (namespace["pqn"].optimizer, namespace["pqn"].optimizer_steps) == ("radam", 600)
    held_out = namespace["held_out"]  # the recorded oracle's held-out episodes: 3 scored steps and the turn
    assert held_out.inputs.shape == (6, 8, 3 + 4) and held_out.target_mask.sum() == 8 * 4
