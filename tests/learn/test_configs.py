"""One config spine: the shared fields declared once, configs checked as they are constructed and
built once, and one learner interface that every learner satisfies."""

import copy
import dataclasses
import json

import jax
import pytest

from memrl import cores, envs, tasks
from memrl.learn.impala_config import ImpalaConfig
from memrl.learn.learner import Learner
from memrl.learn.learners import LEARNERS, learner_for
from memrl.learn.ppo_config import PPOConfig
from memrl.learn.pqn_config import PQNConfig
from memrl.learn.r2d2_config import R2D2Config
from memrl.learn.run_config import ConfigRecord, RunConfig
from memrl.learn.supervised_config import SupervisedConfig
from memrl.registry import declared_types
from memrl.run.config_upgrade import upgrade

TINY = {
    "ppo": PPOConfig(
        env=envs.make("tmaze/T-LN", maze_length=4, timeout=10),
        core=cores.make("gru", hidden=4),
        encoder_widths=(4,),
        head_widths=(4,),
        num_envs=2,
        rollout_len=4,
        num_minibatches=1,
        total_steps=8,
    ),
    "impala": ImpalaConfig(
        env=envs.make("tmaze/T-LN", maze_length=4, timeout=10),
        core=cores.make("gru", hidden=4),
        encoder_widths=(4,),
        head_widths=(4,),
        num_envs=2,
        rollout_len=4,
        total_steps=8,
    ),
    "r2d2": R2D2Config(
        env=envs.make("tmaze/T-LN", maze_length=4, timeout=10),
        core=cores.make("gru", hidden=4),
        encoder_widths=(4,),
        head_widths=(4,),
        num_envs=2,
        rollout_len=4,
        burn_in=2,
        replay_size=8,
        learn_start=4,
        batch_size=2,
        total_steps=8,
    ),
    "pqn": PQNConfig(
        env=envs.make("tmaze/T-LN", maze_length=4, timeout=10),
        core=cores.make("gru", hidden=4),
        encoder_widths=(4,),
        head_widths=(4,),
        num_envs=2,
        rollout_len=4,
        num_minibatches=1,
        total_steps=8,
    ),
    "supervised": SupervisedConfig(
        task=tasks.make("copying", gap=2),
        core=cores.make("gru", hidden=4),
        embed_dim=4,
        batch_size=2,
        total_steps=4,
    ),
}


def test_every_learner_shares_the_fields_declared_once_with_its_own_defaults():
    """A learner whose default differs declares the shared field again: its type and its place stay
    ``ConfigRecord``'s, its default and docstring are the learner's."""
    for config_class, base in (
        (PPOConfig, RunConfig),
        (ImpalaConfig, RunConfig),
        (R2D2Config, RunConfig),
        (PQNConfig, RunConfig),
    ) + ((SupervisedConfig, ConfigRecord),):
        shared = [f.name for f in dataclasses.fields(base)]
        assert [f.name for f in dataclasses.fields(config_class)][: len(shared)] == shared, config_class
        for name in shared:  # the type, its range included (settings.Count, Positive, ...)
            assert declared_types(config_class)[name] == declared_types(base)[name], (config_class, name)
    assert (PPOConfig().adam_eps, PPOConfig().max_grad_norm, ImpalaConfig().max_grad_norm, ImpalaConfig().adam_eps) == (
        1e-5,
        0.5,
        40.0,
        1e-8,
    )
    assert (R2D2Config().lr, R2D2Config().adam_eps, R2D2Config().max_grad_norm) == (1e-4, 1e-3, None)
    assert (PQNConfig().lr, PQNConfig().max_grad_norm, PQNConfig().layer_norm, PQNConfig().gamma) == (
        1e-3,
        10.0,
        True,
        0.99,
    )
    assert (SupervisedConfig().lr, SupervisedConfig().updates_per_chunk, SupervisedConfig().core_name) == (
        3e-4,
        100,
        "lstm",
    )


@pytest.mark.parametrize(
    "config_class, settings, message",
    [
        (
            PPOConfig,
            dict(env="tmaze/T-LN"),
            r"env must be the env itself, made by its name: env=memrl.envs.make\('tmaze/T-LN'",
        ),
        (ImpalaConfig, dict(optimizer="sgd"), "optimizer must be one of 'rmsprop', 'adam', got 'sgd'"),
        (
            SupervisedConfig,
            dict(core={"kind": "lstm"}),
            "got a record {'kind': 'lstm'}; SupervisedConfig.from_dict reads",
        ),
        (PPOConfig, dict(total_steps=10), "total_steps \\(10\\) is less than one update \\(3200 environment steps\\)"),
        (SupervisedConfig, dict(head_widths=(0,)), "head_widths must be positive integers"),
    ],
)
def test_a_config_is_checked_as_it_is_constructed(config_class, settings, message, tmp_path):
    from memrl.run.folder import RunFolder

    with pytest.raises(ValueError, match=message):
        RunFolder(tmp_path / "run").prepare(config_class(**settings))
    assert not (tmp_path / "run").exists()
    with pytest.raises(ValueError, match=message):
        dataclasses.replace(config_class(), **settings)
    unchecked = copy.copy(config_class())  # the settings set past the constructor's check
    for name, value in settings.items():
        object.__setattr__(unchecked, name, value)
    with pytest.raises(ValueError, match=message):
        unchecked.validate()


@pytest.mark.parametrize("learner", sorted(TINY))
def test_the_learner_takes_what_the_config_built_when_it_was_checked(learner):
    config = TINY[learner]
    built = learner_for(config)
    if learner == "supervised":
        assert built.model is config.model and built.task is config.task
    else:
        assert built.agent.core is config.core and built.env is config.env


@pytest.mark.parametrize("learner", sorted(TINY))
def test_every_learner_satisfies_the_learner_protocol(learner):
    config = TINY[learner]
    built = learner_for(config)
    assert isinstance(built, Learner) and LEARNERS.factory(learner).config_class is type(config)
    state = jax.eval_shape(built.init, jax.random.PRNGKey(0))
    assert hasattr(state, "params") and config.trained_on in ("tmaze/T-LN", "copying")


def test_a_total_that_is_not_whole_updates_is_rounded_down_with_a_note():
    config = PPOConfig(num_envs=16, rollout_len=100, total_steps=200_000)  # 1,600 steps per update
    assert config.num_updates == 125 and config.rounding_note() == ""
    config = PPOConfig(num_envs=32, rollout_len=100, total_steps=200_000)
    assert config.num_updates == 62
    assert config.rounding_note() == (
        "total_steps 200,000 is not a multiple of one update's 3,200 environment steps: each seed trains 198,400 (62 updates)"
    )


def test_a_config_holds_its_core_whole_and_records_it_by_name_and_settings():
    from memrl.cores.amrl import AMRL
    from memrl.cores.lstm import LSTM
    from memrl.cores.transformer_xl import TransformerXL

    class Unregistered(LSTM):
        pass

    assert PPOConfig(core=LSTM(hidden=8)) == PPOConfig(core=cores.make("lstm", hidden=8))
    assert PPOConfig(core=AMRL(aggregator="max", hidden=8)).core_name == "amrl-max"
    gtrxl = SupervisedConfig(task=tasks.make("copying"), core=TransformerXL(gated=True, num_layers=1)).core
    assert cores.CORES.name_of(gtrxl) == ("gtrxl", {"num_layers": 1})
    assert json.loads(PPOConfig(core=LSTM()).to_json())["core"] == {
        "kind": "lstm",
        "hidden": 256,
        "weight_init": "fused",
    }
    assert PPOConfig.from_dict(upgrade(PPOConfig, {"core": "gru", "core_args": {"hidden": 4}})).core == cores.make(
        "gru", hidden=4
    )
    with pytest.raises(ValueError, match="core must be a registered core"):
        PPOConfig(core=Unregistered())
    with pytest.raises(ValueError, match="fixes aggregator"):
        cores.CORES.changed(AMRL(aggregator="max"), aggregator="avg")
    with pytest.raises(ValueError, match=r"'lstm' has no setting 'hiden'; its settings: hidden"):
        PPOConfig.from_dict({"core": {"kind": "lstm", "hiden": 8}})
    with pytest.raises(ValueError, match="unknown core or task model 'nope'"):
        SupervisedConfig.from_dict({"core": {"kind": "nope"}})


@dataclasses.dataclass(frozen=True)
class Unregistered(envs.tmaze.TMaze):
    """A T-maze of a class no name makes."""


def test_a_config_holds_its_environment_whole_and_records_it_by_name_and_the_settings_given(tmp_path):
    """The settings given are those that differ from the name's defaults, however they were spelled,
    and the environment constructed directly: its class and settings say which name makes it."""
    from memrl import envs
    from memrl.envs.tmaze import TMaze

    made = envs.make("tmaze/T-LN", maze_length=5, timeout=20, success_reward=4.0)  # 4.0: T-LN's own
    assert envs.ENVS.name_of(made) == ("tmaze/T-LN", {"maze_length": 5, "timeout": 20})
    config = PPOConfig(env=made)
    assert config.env is made and config.env_name == config.trained_on == "tmaze/T-LN"
    record = {"kind": "tmaze/T-LN", "maze_length": 5, "timeout": 20}
    assert json.loads(config.to_json())["env"] == record
    for spelled in (  # made with the settings given, a record, a run folder's record from before
        PPOConfig(env=envs.make("tmaze/T-LN", maze_length=5, timeout=20)),
        PPOConfig(env=TMaze(noise=True, params=made.params)),
        PPOConfig.from_dict({"env": record}),
        PPOConfig.from_dict(upgrade(PPOConfig, {"env": "tmaze/T-LN", "env_args": {"maze_length": 5, "timeout": 20}})),
        PPOConfig.from_dict(json.loads(config.to_json())),
    ):
        assert spelled.record() == config.record() and spelled.env.params.maze_length == 5
    assert PPOConfig(env=envs.ENVS.changed(made, maze_length=7)).component_record("env") == record | {"maze_length": 7}
    with pytest.raises(ValueError, match="no registered environment makes a Unregistered like this one"):
        PPOConfig(env=Unregistered(noise=True))
    with pytest.raises(ValueError, match="'tmaze/T-LN' has no setting 'maze_lenght'.*its settings: maze_length"):
        envs.make("tmaze/T-LN", maze_lenght=5)
    with pytest.raises(ValueError, match="setting 'maze_length' must be an integer, got 'long'"):
        envs.make("tmaze/T-LN", maze_length="long")
    with pytest.raises(ValueError, match="fixes noise by its name"):
        envs.ENVS.changed(made, noise=False)
    with pytest.raises(
        ValueError, match=r"timeout \(20\) must be >= maze_length \(30\)"
    ):  # the environment's own check
        envs.ENVS.changed(made, maze_length=30)
    with pytest.raises(ValueError, match=r"env setting success_reward \(--env.success_reward\) must be a finite"):
        PPOConfig(env=envs.make("tmaze/T-LN", success_reward=float("inf")))


@pytest.mark.parametrize("learner", sorted(TINY))
def test_configs_are_equal_when_recorded_alike_and_differ_in_any_field(learner):
    """Equality is config.json's: a component made twice alike is the same (an environment is not a
    value object: gymnasium's made twice are two objects), and every field counts (the actor-critic
    configs inherit AgentSpec's equality, which would compare the agent's fields alone)."""
    config = TINY[learner]
    assert config == type(config).from_dict(config.record()) and hash(config) == hash(
        type(config).from_dict(config.record())
    )
    for field in dataclasses.fields(config):
        value = getattr(config, field.name)
        if isinstance(value, bool):
            changed = not value
        elif isinstance(value, (int, float)) and field.name != "max_grad_norm":
            changed = value + 1
        else:
            continue
        other = copy.copy(config)  # changed past the constructor's check (value + 1 may be out of range)
        object.__setattr__(other, field.name, changed)
        assert other != config, field.name
    host = dict(env=envs.make("gymnasium/CartPole-v1"), num_envs=2, rollout_len=4, num_minibatches=1, total_steps=8)
    if learner == "ppo":
        assert PPOConfig(**host) == PPOConfig(**host)
