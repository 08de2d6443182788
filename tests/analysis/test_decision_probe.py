import json

import jax
import numpy as np
import optax
import pytest

from memrl import cores, envs
from memrl.analysis import chunked_training
from memrl.analysis.decision_probe import DecisionProbe, command
from memrl.envs import word_learning
from memrl.envs.scripted_policy import scripted_policy
from memrl.learn.impala_config import ImpalaConfig
from memrl.run.folder import RunFolder

LEVEL = "word-learning/distractors0"
FRAMES = 32
CONFIG = ImpalaConfig(
    env=envs.make("word-learning/train", observation="cells", test_layout="around"),
    core=cores.make("gru", hidden=16),
    encoder="conv",
    conv_channels=(8, 8, 8),
    conv_kernels=(1, 3, 3),
    conv_strides=(1, 1, 1),
    encoder_widths=(32,),
    head_widths=(32,),
)


@pytest.fixture(scope="module")
def probe():
    return DecisionProbe(CONFIG, LEVEL, FRAMES)


def test_the_label_is_the_oracles_action_at_its_first_test_step_and_the_inputs_are_what_a_clone_reads(probe):
    key = jax.random.PRNGKey(4)
    (observations, previous_actions, previous_rewards, resets), actions, first, has = jax.jit(
        lambda key: probe.episodes(key, 3)
    )(key)
    env, params = probe.env, probe.env.default_params
    oracle = scripted_policy(LEVEL, env, "oracle")
    reset, step, act = jax.jit(env.reset_env), jax.jit(env.step_env), jax.jit(oracle.act)
    for i, episode_key in enumerate(jax.random.split(key, 3)):  # scripted_episodes' keys, stepped by hand
        reset_key, steps_key = jax.random.split(episode_key)
        obs, state = reset(reset_key, params)
        memory, taken, rewards, tested = oracle.initial_memory(state), [], [], None
        for t, step_key in enumerate(jax.random.split(steps_key, FRAMES)):
            np.testing.assert_array_equal(observations["image"][t, i], obs["image"])
            if tested is None and int(state.phase) == word_learning.TEST:
                tested = t
            policy_key, env_key = jax.random.split(step_key)
            action, memory = act(policy_key, state, memory)
            obs, state, reward, *_ = step(env_key, state, action, params)
            taken.append(int(action[0]))
            rewards.append(float(reward))
        assert bool(has[i]) and int(first[i]) == tested
        assert int(actions[tested, i, 0]) == taken[tested]
        np.testing.assert_array_equal(previous_actions[:, i, 0], [0, *taken[:-1]])
        np.testing.assert_allclose(previous_rewards[:, i], [0.0, *rewards[:-1]])
    assert resets[0].all() and not resets[1:].any()


def test_an_episode_without_a_decision_in_its_frames_is_left_out():
    short = DecisionProbe(CONFIG, LEVEL, frames=2)  # the oracle lifts three objects before any test
    _, _, _, has = jax.jit(lambda key: short.episodes(key, 4))(jax.random.PRNGKey(0))
    assert not has.any()
    params = short.init(jax.random.PRNGKey(0))
    loss, (right, decided) = jax.jit(lambda p: short.loss(p, jax.random.PRNGKey(1), 4))(params)
    assert float(loss) == 0.0 and float(right) == 0.0 and float(decided) == 0.0


def test_the_probe_fits_the_decisions_of_a_fixed_batch(probe):
    """The gradient reaches the decision's logits through the unroll: 4 fixed episodes are learnt."""
    params = probe.init(jax.random.PRNGKey(0))
    optimizer = optax.adam(3e-3)
    key = jax.random.PRNGKey(7)

    @jax.jit
    def fit(params):
        def update(carry, _):
            params, state = carry
            (loss, metrics), grads = jax.value_and_grad(probe.loss, has_aux=True)(params, key, 4)
            updates, state = optimizer.update(grads, state)
            return (optax.apply_updates(params, updates), state), (loss, metrics[0])

        return jax.lax.scan(update, (params, optimizer.init(params)), None, 100)[1]

    losses, right = fit(params)
    assert float(losses[0]) > 1.5 and float(losses[-1]) < 0.2, (losses[0], losses[-1])
    assert float(right[-1]) == 1.0


def test_the_probe_refuses_what_it_cannot_train_on():
    with pytest.raises(ValueError, match="frames must be at least 1"):
        DecisionProbe(CONFIG, LEVEL, frames=0)
    with pytest.raises(ValueError, match="'random' marks no decisions"):
        DecisionProbe(CONFIG, LEVEL, FRAMES, teacher="random")
    with pytest.raises(ValueError, match="no scripted policy 'expert'; its policies: oracle, guesser, random"):
        DecisionProbe(CONFIG, LEVEL, FRAMES, teacher="expert")
    pendulum = ImpalaConfig(env=envs.make("gymnax/Pendulum-v1"), core=cores.make("gru", hidden=8))
    with pytest.raises(ValueError, match="scores discrete decisions; gymnax/Pendulum-v1 takes continuous actions"):
        DecisionProbe(pendulum, "gymnax/Pendulum-v1", FRAMES)


def test_the_command_trains_scores_and_continues_from_its_checkpoint(tmp_path, monkeypatch):
    RunFolder(tmp_path / "run").prepare(CONFIG)
    probe_command = lambda: command(
        tmp_path / "run", LEVEL, frames=FRAMES, steps=50, batch_size=2, test_episodes=4, out=tmp_path / "probe"
    )
    probe_command()
    result = json.loads((tmp_path / "probe" / "decision_probe.json").read_text())
    assert len(result["curve"]) == 1 and result["test_episodes"] == 4 and 0 <= result["test_accuracy"] <= 1
    assert (tmp_path / "probe" / "decision_probe.png").exists()

    def trained_again(*args):
        raise AssertionError("the finished probe trained again")

    monkeypatch.setattr(chunked_training, "train_chunk", trained_again)
    probe_command()  # everything is in the checkpoint
    again = json.loads((tmp_path / "probe" / "decision_probe.json").read_text())
    assert again["curve"] == result["curve"] and again["test_accuracy"] == result["test_accuracy"]


def test_the_probe_learns_a_decision_that_needs_memory_where_a_memoryless_agent_guesses():
    """The probe's positive control: the T-maze's turn at the junction, cued 8 steps before it, is
    learnt on fresh episodes from each of 3 initialisations by a GRU in 1,000 steps of 32 episodes
    of the command's training (8 of 8 other initialisations at 1.0 unclipped; after 300 steps 3 of 8
    were still at chance), while the memoryless core guesses. Where a memory stays at chance on a room task's binding
    (docs/results/htm.md), the probe path is not why."""
    from conftest import LEARNING_SEEDS

    env = envs.make("tmaze/T-L", maze_length=10, timeout=12)

    def accuracies(core):
        probe = DecisionProbe(
            ImpalaConfig(env=env, core=core, encoder_widths=(16,), head_widths=(16,)), "tmaze/T-L", 12
        )
        trained = (  # the command's training, one chunk: one compile per probe
            chunked_training.train_probe(probe, key, 1000, batch_size=32, lr=3e-3, chunk=1000)[0]
            for key in jax.random.split(jax.random.PRNGKey(0), LEARNING_SEEDS)
        )
        return [probe.accuracy(params, jax.random.PRNGKey(99), 256, 64)[0] for params in trained]

    gru, memoryless = accuracies(cores.make("gru", hidden=16)), accuracies(cores.make("memoryless"))
    assert min(gru) >= 0.95 and max(memoryless) <= 0.65, (gru, memoryless)
