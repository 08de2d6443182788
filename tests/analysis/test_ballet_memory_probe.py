import jax
import numpy as np
import pytest

from memrl import cores, envs
from memrl.analysis.ballet_memory import command, probe_config
from memrl.analysis.ballet_memory_probe import BalletMemoryProbe, watch_episodes
from memrl.analysis.chunked_training import train_probe
from memrl.envs import ballet
from memrl.envs.ballet_tables import DANCER_SLOTS
from memrl.learn.impala_config import ImpalaConfig
from memrl.run.folder import ConfigMismatch

TINY = dict(
    core=cores.make("gru", hidden=8),
    encoder="conv",
    conv_channels=(4, 4, 4),
    conv_kernels=(1, 3, 3),
    conv_strides=(1, 1, 1),
    encoder_widths=(),
    head_widths=(8,),
)


def test_the_watch_phase_ends_at_the_first_choice_frame_and_the_label_is_the_target_slot():
    env = ballet.Ballet(levels=((2, 16),), observation="cells")
    key = jax.random.PRNGKey(3)
    observations, labels = jax.jit(lambda key: watch_episodes(env, key, 4))(key)  # jitted: eager runs op by op
    assert observations["image"].shape == (2 * (15 + 16) + 1, 4, 11, 11, ballet.CELL_CHANNELS)
    reset = jax.jit(env.reset_env)
    for i, episode_key in enumerate(jax.random.split(key, 4)):
        first, state = reset(episode_key, env.default_params)
        np.testing.assert_array_equal(observations["image"][0, i], first["image"])
        np.testing.assert_array_equal(DANCER_SLOTS[int(labels[i])], state.slots[state.target])
        assert int(observations["language"][-1, i]) == 1 + int(state.dances[state.target])
    assert np.all(observations["language"][:-1] == ballet.WATCH)


def test_the_probe_refuses_what_it_cannot_train_on():
    with pytest.raises(ValueError, match="one Ballet level"):
        BalletMemoryProbe(ImpalaConfig(env=envs.make("ballet/mixed", observation="cells"), **TINY))
    with pytest.raises(ValueError, match="needs a Ballet environment"):
        BalletMemoryProbe(ImpalaConfig(env=envs.make("tmaze/T-LN"), core=cores.make("gru", hidden=8)))
    with pytest.raises(ValueError, match="htm-ballet cores"):
        probe_config("amrl-max", "2_delay16")
    with pytest.raises(ValueError, match="unknown Ballet level 'mixed'"):
        command(levels=("mixed",))
    for steps in (0, 75):  # refused before any agent is built
        with pytest.raises(ValueError, match=f"steps must be a positive multiple of 50 .*got {steps}"):
            command(levels=("2_delay16",), steps=steps)
    assert probe_config("htm", "8_delay48").env_name == "ballet/8_delay48"


class Interrupted(Exception):
    pass


def test_an_interrupted_probe_training_resumes_to_the_same_parameters(tmp_path):
    probe = BalletMemoryProbe(ImpalaConfig(env=envs.make("ballet/2_delay16", observation="cells"), **TINY))
    train = lambda **kw: train_probe(probe, jax.random.PRNGKey(0), steps=3, batch_size=2, chunk=1, **kw)
    expected_params, expected_curve = train()
    assert expected_curve[0, 0] == pytest.approx(np.log(8), abs=0.1)  # near-uniform over the 8 slots at initialisation

    def stop_after_two_chunks(done, loss, accuracy):
        if done == 2:
            raise Interrupted

    settings = {"lr": 3e-4}
    with pytest.raises(Interrupted):
        train(checkpoint_dir=tmp_path, settings=settings, on_chunk=stop_after_two_chunks)
    reported = []
    params, curve = train(checkpoint_dir=tmp_path, settings=settings, on_chunk=lambda done, *_: reported.append(done))
    assert reported == [3]
    np.testing.assert_array_equal(curve, expected_curve)
    for got, want in zip(jax.tree.leaves(params), jax.tree.leaves(expected_params)):
        np.testing.assert_array_equal(got, want)
    with pytest.raises(ConfigMismatch, match="a ballet-memory probe with other settings"):
        train(checkpoint_dir=tmp_path, settings={"lr": 1e-3})
