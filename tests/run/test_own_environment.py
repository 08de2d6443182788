"""An environment registered from a user's own module trains through ``memrl train``'s worker
processes when the config names the module in ``imports``; without it the worker's error says
which name is unknown; a module that cannot be imported is refused before anything starts."""

import json
import sys
import textwrap

import pytest

from memrl.cli import main
from memrl.learn.ppo_config import PPOConfig

MODULE = "memrl_test_own_env"
ARGS = [
    "--core",
    "gru",
    "--core-args",
    "hidden",
    "4",
    "--encoder-widths",
    "4",
    "--head-widths",
    "4",
    "--num-envs",
    "2",
    "--rollout-len",
    "4",
    "--num-minibatches",
    "1",
    "--total-steps",
    "16",
    "--workers",
    "1",
]


@pytest.fixture
def own_module(tmp_path, monkeypatch):
    from memrl import envs

    monkeypatch.setattr(envs.ENVS, "_registered", dict(envs.ENVS._factories))  # the registration ends with the test
    (tmp_path / f"{MODULE}.py").write_text(
        textwrap.dedent("""
        from memrl import envs
        import dataclasses

        from memrl.envs.tmaze import TMaze

        @dataclasses.dataclass(frozen=True)
        class OwnTMaze(TMaze):
            pass

        envs.register("own/short-tmaze", OwnTMaze.from_settings, fixed=dict(noise=True), defaults=dict(maze_length=3))
    """)
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))  # the worker processes
    yield
    sys.modules.pop(MODULE, None)


def test_an_own_environment_trains_through_the_workers_when_its_module_is_imported(own_module, tmp_path, capsys):
    main(["train", "ppo", "--env", "own/short-tmaze", "--imports", MODULE, *ARGS, "--out", str(tmp_path / "run")])
    assert "final return" in capsys.readouterr().out
    assert (tmp_path / "run" / "seed_0" / "checkpoint.msgpack").exists()
    assert json.loads((tmp_path / "run" / "config.json").read_text())["config"]["env"] == {"kind": "own/short-tmaze"}


def test_an_unknown_environment_and_an_unimportable_module_are_named(tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(["train", "ppo", "--env", "own/nothing", *ARGS, "--out", str(tmp_path / "a")])
    assert "unknown environment 'own/nothing'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(
            [
                "train",
                "ppo",
                "--env",
                "tmaze/T-LN",
                "--imports",
                "no_such_module_here",
                *ARGS,
                "--out",
                str(tmp_path / "b"),
            ]
        )
    assert "imports: cannot import 'no_such_module_here'" in capsys.readouterr().err
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()
    assert PPOConfig().imports == ()
