"""IMPALA/V-trace learner: learning a short T-maze, the behaviour-policy lag, determinism, config errors."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import LEARNING_SEEDS, final_returns, trained_over_seeds

from memrl import cores, envs
from memrl.learn.impala import Impala
from memrl.learn.impala_config import ImpalaConfig
from memrl.learn.learners import make_train

TINY = dict(
    env=envs.make("tmaze/T-LN", maze_length=6, timeout=20),
    core=cores.make("gru", hidden=32),
    encoder_widths=(32,),
    head_widths=(32,),
    num_envs=16,
    rollout_len=24,
)


def tiny(**overrides) -> ImpalaConfig:
    return ImpalaConfig(**{**TINY, **overrides})


@pytest.mark.slow
@pytest.mark.parametrize("policy_lag", [0, 3])
def test_learns_short_tmaze_above_memoryless_optimum(policy_lag):
    """A 6-cell T-LN needs memory of the first observation; without it the best return is 0.5.
    With a lag of 3 updates the V-trace correction keeps learning on track. Every one of 3 seeds."""
    _, metrics = trained_over_seeds(tiny(total_steps=16 * 24 * 150, lr=6e-3, policy_lag=policy_lag))
    assert np.all(final_returns(metrics, last=15) >= 3.5), final_returns(metrics, last=15)
    if policy_lag:
        assert np.all(np.mean(np.asarray(metrics["mean_abs_log_rho"])[:, -50:], axis=1) > 1e-3)


def test_actor_uses_the_parameters_of_lag_updates_ago():
    config = tiny(total_steps=16 * 24 * 4, policy_lag=2)
    learner = Impala(config)
    update = jax.jit(learner.update)
    runner = learner.init(jax.random.PRNGKey(0))
    history = [runner.params]
    for _ in range(4):
        runner, metrics = update(runner)
        history.append(runner.params)
    # after 4 updates the actor holds the parameters after updates 2 and 3
    for index, expected in enumerate(history[2:4]):
        jax.tree.map(
            lambda stacked, p: np.testing.assert_array_equal(stacked[index], p), runner.behaviour_params, expected
        )
    assert float(metrics["mean_abs_log_rho"]) > 0


def test_without_lag_the_learner_is_on_policy():
    learner = Impala(tiny(total_steps=16 * 24))
    runner, metrics = jax.jit(learner.update)(learner.init(jax.random.PRNGKey(0)))
    assert not hasattr(runner, "behaviour_params"), "without a lag the runner holds no older parameters"
    assert float(metrics["mean_abs_log_rho"]) < 1e-5  # step-by-step acting == unrolled learning
    assert float(metrics["clipped_rho_fraction"]) == 0.0  # rounding noise is not clipping


def test_same_seed_same_run():
    learner = Impala(tiny(total_steps=16 * 24 * 2, optimizer="adam"))
    run = jax.jit(learner.run, static_argnums=1)
    _, a = run(learner.init(jax.random.PRNGKey(0)), 2)
    _, b = run(learner.init(jax.random.PRNGKey(0)), 2)
    np.testing.assert_array_equal(a["policy_loss"], b["policy_loss"])


@pytest.mark.parametrize(
    "overrides, message",
    [
        (dict(optimizer="sgd"), "optimizer must be one of 'rmsprop', 'adam', got 'sgd'"),
        (dict(policy_lag=-1), "policy_lag must be >= 0, got -1"),
        (dict(rho_bar=0.0), "rho_bar must be > 0"),
        (dict(rmsprop_decay=1.5), r"rmsprop_decay must be within \[0.0, 1.0\]"),
        (dict(encoder="resnets"), "encoder must be one of \\('mlp', 'conv', 'resnet'\\)"),
        (dict(encoder="resnet", conv_kernels=(1, 3, 3)), "the 'resnet' encoder uses 3×3 convolutions"),
        (dict(conv_kernels=(1, 3)), "one entry per layer each"),
        (dict(reconstruction_coef=-1.0), "reconstruction_coef must be >= 0"),
    ],
)
def test_bad_config_values_say_what_is_allowed(overrides, message):
    with pytest.raises(ValueError, match=message):
        tiny(**overrides).validate()


@pytest.mark.parametrize("memory", [False, True])
def test_an_amnesic_evaluation_resets_the_memory_before_every_step(memory):
    """An agent whose memory holds nothing (the GRU's weights zero: its state stays zero; no previous
    action fed) acts the same amnesic or not, bitwise; one with a memory and its previous action acts
    otherwise (the policy layer scaled up so that small differences change the actions)."""
    learner = Impala(tiny(feed_prev_action=memory))
    params = learner.init(jax.random.PRNGKey(0)).params
    params = jax.tree_util.tree_map_with_path(
        lambda path, x: (
            x * 1000
            if "policy" in jax.tree_util.keystr(path)
            else x * (memory or "core" not in jax.tree_util.keystr(path))
        ),
        params,
    )
    evaluate = jax.jit(learner.evaluate, static_argnums=(2, 3))
    _, _, rewards = evaluate(params, jax.random.PRNGKey(1), 60, False)
    _, _, amnesic_rewards = evaluate(params, jax.random.PRNGKey(1), 60, True)
    assert np.array_equal(rewards, amnesic_rewards) == (not memory)


def test_v_trace_trains_a_gaussian_policy_on_continuous_actions():
    """Pendulum's Box actions through V-trace: the importance ratios of the Gaussian's draws are
    finite, and the unsquashed draws are what the segment keeps (the environment took their squash)."""
    config = ImpalaConfig(
        env=envs.make("gymnax/Pendulum-v1"),
        core=cores.make("gru", hidden=8),
        encoder_widths=(8,),
        head_widths=(8,),
        num_envs=4,
        rollout_len=8,
        total_steps=4 * 8 * 3,
        reward_scale=0.1,
    )
    learner = Impala(config)
    _, segment, _ = jax.jit(learner.act)(learner.init(jax.random.PRNGKey(0)))
    assert segment.transitions.action.shape == (8, 4, 1) and segment.transitions.action.dtype == jnp.float32
    _, metrics = jax.jit(make_train(config))(jax.random.PRNGKey(0))
    for name in ("policy_loss", "value_loss", "entropy", "mean_abs_log_rho"):
        assert np.all(np.isfinite(np.asarray(metrics[name]))), name


def test_loss_weights_are_the_htm_papers_four():
    """HTM's Table 1 weights the V-trace policy loss, the baseline, the entropy and the reconstruction."""
    learner = Impala(tiny(policy_coef=0.1, value_coef=1.0, entropy_coef=1e-3))
    assert learner.total_loss(2.0, 3.0, 4.0, 5.0) == pytest.approx(0.1 * 2.0 + 1.0 * 3.0 - 1e-3 * 4.0)
    with pytest.raises(ValueError, match="policy_coef must be >= 0"):
        tiny(policy_coef=-0.1).validate()


def test_reconstruction_without_anything_to_reconstruct_is_refused():
    with pytest.raises(ValueError, match="needs something to reconstruct"):
        Impala(tiny(reconstruction_coef=1.0))


def test_htm_agent_on_ballet_trains_with_the_reconstruction_loss():
    """The HTM agent's whole path: Ballet cells + instruction -> CNN and language LSTM -> htm ->
    heads, with the reconstruction decoders' loss in the update."""
    config = ImpalaConfig(
        env=envs.make("ballet/2_delay16", observation="cells"),
        core=cores.make(
            "htm", **dict(num_layers=1, d_model=16, num_heads=2, mlp_dim=16, window=4, chunk_size=4, num_chunks=4, k=2)
        ),
        encoder="conv",
        conv_channels=(4, 8, 8),
        conv_kernels=(1, 3, 3),
        conv_strides=(1, 1, 1),
        encoder_widths=(),
        head_widths=(16,),
        reconstruction_coef=1.0,
        num_envs=2,
        rollout_len=8,
        total_steps=32,
    )
    learner = Impala(config)
    _, metrics = jax.jit(lambda r: learner.run(r, 2))(learner.init(jax.random.PRNGKey(0)))
    reconstruction = np.asarray(metrics["reconstruction_loss"])
    assert np.all(np.isfinite(reconstruction)) and np.all(reconstruction > 0)


def test_epn_on_graph_nav_views_trains_through_the_shared_cnn():
    """EPN on procedural street views: both views through one CNN, the current one reconstructed."""
    config = ImpalaConfig(
        env=envs.make("graph-nav/5", observation="images", image_size=8, bank_size=4),
        core=cores.make("epn", **dict(capacity=16, embed_dim=8, width=8, iterations=1)),
        encoder="conv",
        conv_channels=(4, 4),
        conv_kernels=(2, 3),
        conv_strides=(2, 1),
        head_widths=(16,),
        reconstruction_coef=1.0,
        num_envs=2,
        rollout_len=8,
        total_steps=32,
    )
    learner = Impala(config)
    _, metrics = jax.jit(lambda r: learner.run(r, 2))(learner.init(jax.random.PRNGKey(0)))
    assert np.all(np.asarray(metrics["reconstruction_loss"]) > 0) and np.all(
        np.isfinite(np.asarray(metrics["policy_loss"]))
    )


def test_lagged_run_resumes_from_its_checkpoint(tmp_path):
    """The behaviour parameters are part of the checkpoint: a resumed lagged run ends where an
    uninterrupted one does."""
    from memrl.run.folder import RunFolder
    from memrl.run.seed_training import train_seeds

    config = tiny(total_steps=16 * 24 * 4, updates_per_chunk=2, policy_lag=1)
    resumed, straight = RunFolder(tmp_path / "resumed"), RunFolder(tmp_path / "straight")
    for folder in (resumed, straight):
        folder.prepare(config)

    def kill_after_first_chunk(steps_done):
        if steps_done >= 2 * config.steps_per_update:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        train_seeds(config, resumed, [0], on_chunk=kill_after_first_chunk)
    train_seeds(config, resumed, [0])
    train_seeds(config, straight, [0])
    template = Impala(config).init(jax.random.PRNGKey(0))
    a, b = resumed.load_checkpoint(0, template), straight.load_checkpoint(0, template)
    jax.tree.map(np.testing.assert_array_equal, (a.params, a.behaviour_params), (b.params, b.behaviour_params))
    assert int(a.update) == 4


def test_run_folder_refuses_a_run_of_another_learner(tmp_path):
    from memrl.learn.ppo_config import PPOConfig
    from memrl.run.folder import ConfigMismatch, RunFolder

    folder = RunFolder(tmp_path / "run")
    folder.prepare(tiny(total_steps=16 * 24))
    assert folder.load_config() == tiny(total_steps=16 * 24)
    with pytest.raises(ConfigMismatch, match="holds a impala run, not a ppo run"):
        folder.prepare(PPOConfig(**TINY, total_steps=16 * 24))


def test_a_checkpoint_from_before_the_lagged_state_still_resumes(tmp_path):
    """Checkpoints once held ``behaviour_params: None`` in every runner; the runner no longer has the field."""
    from flax import serialization

    from memrl.run.folder import RunFolder

    learner = Impala(tiny(total_steps=16 * 24))
    runner = learner.init(jax.random.PRNGKey(0))
    old = serialization.to_state_dict(runner) | {"behaviour_params": None}
    folder = RunFolder(tmp_path)
    folder.seed_dir(0).mkdir(parents=True)
    folder.checkpoint_path(0).write_bytes(serialization.msgpack_serialize(old))
    jax.tree.map(np.testing.assert_array_equal, folder.load_checkpoint(0, runner), runner)


@pytest.mark.slow
@pytest.mark.parametrize("env, env_args", [("pvm", {}), ("ballet/2_delay16", {"observation": "cells"})])
def test_the_reconstruction_loss_decodes_every_image_part_whatever_its_name_and_falls(env, env_args):
    """pvm's grid is the part "observation", Ballet's cells the part "image": both are decoded (HTM
    App. D.4), so the loss is above zero and falls as the decoder learns."""
    config = ImpalaConfig(
        env=envs.make(env, **env_args),
        core=cores.make("lstm", hidden=16),
        encoder="conv",
        conv_channels=(8, 8, 8),
        conv_kernels=(1, 3, 3),
        conv_strides=(1, 1, 1),
        encoder_widths=(),
        head_widths=(16,),
        reconstruction_coef=1.0,
        optimizer="adam",
        lr=3e-3,
        num_envs=4,
        rollout_len=16,
        total_steps=4 * 16 * 30,
    ).validate()
    learner = Impala(config)
    _, metrics = jax.jit(learner.run, static_argnums=1)(learner.init(jax.random.PRNGKey(0)), 30)
    loss = np.asarray(metrics["reconstruction_loss"])
    assert loss[0] > 0.1 and loss[-5:].mean() < 0.8 * loss[:5].mean(), loss


def test_a_reconstruction_that_would_decode_nothing_is_refused_naming_the_parts():
    with pytest.raises(
        ValueError, match=r"pvm's observation parts are \{'observation': \(7, 7, 11\)\}, read by encoder 'mlp'"
    ):
        Impala(ImpalaConfig(env=envs.make("pvm"), core=cores.make("gru", hidden=4), reconstruction_coef=1.0))


def test_while_cloning_the_teacher_acts_and_the_policy_loss_is_its_cross_entropy():
    """On a 6-cell T-LN the oracle turns to the indicator's side: the agent clones it for 2 updates
    (every action the teacher's, log μ = 0), then acts itself."""
    from memrl.envs.tmaze_policies import oracle

    config = tiny(total_steps=16 * 24 * 3, teacher="oracle", clone_updates=2)
    learner = Impala(config)
    runner = learner.init(jax.random.PRNGKey(0))
    teacher = oracle(learner.env)
    for update in range(3):
        before = runner
        runner, segment = jax.jit(lambda r: learner.rollout(r, learner.acting_params(r), learner.teach(r)))(before)
        actions, logp = np.asarray(segment.transitions.action), np.asarray(segment.transitions.logp)
        # the teacher's actions, replayed from the same observations with its own memory
        memory = jax.vmap(teacher.initial_memory)(before.env_state)
        for t in range(config.rollout_len):
            fresh = jax.vmap(teacher.initial_memory)(before.env_state)
            reset = segment.transitions.reset[t]
            memory = jax.tree.map(
                lambda m, f: np.where(np.reshape(reset, (-1,) + (1,) * (np.ndim(m) - 1)), f, m), memory, fresh
            )
            key = jax.random.PRNGKey(t)  # the oracle is deterministic
            taught, memory = jax.vmap(teacher.act)(
                jax.random.split(key, config.num_envs), segment.transitions.obs[t], memory
            )
            if update < 2:
                np.testing.assert_array_equal(actions[t], taught)
        assert np.all(logp == 0.0) if update < 2 else np.all(logp < 0.0)
        runner = runner.replace(update=runner.update + 1)
    cloned, info = jax.jit(learner._loss)(runner.params, segment, True)
    assert float(info["policy_loss"]) > 0  # −mean log π(a_teacher)


def test_dagger_mixing_lets_the_agent_act_more_often_and_still_learns_the_teachers_action():
    """With agent_share s the agent's own action drives the environment with a probability rising
    from 0 (the first cloning update) to s (the last); the target stays the teacher's, and log μ is the
    mixture's: log((1 − s)·[a = a_teacher] + s·π(a))."""

    config = tiny(total_steps=16 * 24 * 3, teacher="oracle", clone_updates=3, agent_share=0.5)
    learner = Impala(config)
    runner = learner.init(jax.random.PRNGKey(0))
    rollout = jax.jit(lambda r: learner.rollout(r, learner.acting_params(r), learner.teach(r)))
    for update, share in enumerate((0.0, 0.25, 0.5)):
        assert float(learner.agent_share(jnp.int32(update))) == share
        runner = runner.replace(update=jnp.int32(update))
        _, segment = rollout(runner)
        traj = segment.transitions
        action, target, logp = (
            np.asarray(x)[..., 0] if x.ndim == 3 else np.asarray(x) for x in (traj.action, traj.target, traj.logp)
        )
        logits, _, _ = learner.unroll(runner.params, segment.initial_carry, traj)
        policy = np.exp(np.asarray(learner.agent.actions.log_prob(logits, traj.action)))
        np.testing.assert_allclose(
            logp, np.log((1 - share) * (action == target) + share * policy), rtol=1e-5, atol=1e-6
        )
        own = (action != target).mean()
        assert own == 0.0 if update == 0 else 0.0 < own < share  # the agent's own turns, where they differ
    assert float(jax.jit(learner._loss)(runner.params, segment, True)[1]["policy_loss"]) == pytest.approx(
        -float(jnp.mean(learner.agent.actions.log_prob(logits, traj.target))), rel=1e-5
    )  # the cross-entropy of the teacher's actions, not of those taken


def test_the_teachers_decision_steps_weigh_clone_decision_weight_in_the_cloning_loss():
    """Passive Visual Match's oracle marks its choice-phase steps: with clone_decision_weight w the
    cloning loss is −mean(w_t log π(a_teacher)), w_t = w there and 1 elsewhere (NumPy reference)."""
    from memrl.envs.passive_visual_match import CHOICE_PHASE

    env = envs.make("pvm", steps_per_second=2, color_seconds=1, distractor_seconds=1, choice_seconds=3)
    config = tiny(
        env=env, rollout_len=16, total_steps=16 * 16 * 2, teacher="oracle", clone_updates=2, clone_decision_weight=8.0
    )
    learner = Impala(config)
    runner = learner.init(jax.random.PRNGKey(0))
    states = []
    step = jax.jit(lambda r: learner.env_step(r, learner.acting_params(r), teach=learner.teach(r)))
    transitions = []
    for _ in range(config.rollout_len):
        states.append(runner.env_state)
        runner, (transition, *_) = step(runner)
        transitions.append(transition)
    choosing = np.stack([np.asarray(jax.vmap(learner.env.phase, (0, None))(s, learner.env_params)) for s in states])
    weights = np.stack([np.asarray(t.target_weight) for t in transitions])
    assert (choosing == CHOICE_PHASE).any() and (choosing != CHOICE_PHASE).any()
    np.testing.assert_array_equal(weights, np.where(choosing == CHOICE_PHASE, 8.0, 1.0))
    _, segment = jax.jit(lambda r: learner.rollout(r, learner.acting_params(r), learner.teach(r)))(runner)
    logits, _, _ = learner.unroll(runner.params, segment.initial_carry, segment.transitions)
    logp = np.asarray(learner.agent.actions.log_prob(logits, segment.transitions.target))
    loss = jax.jit(learner._loss)(runner.params, segment, True)[1]["policy_loss"]
    np.testing.assert_allclose(float(loss), -np.mean(np.asarray(segment.transitions.target_weight) * logp), rtol=1e-5)


def test_clone_value_coef_weighs_the_value_loss_while_cloning_and_value_coef_after():
    """With clone_value_coef 0 the value loss moves nothing while cloning (the value head's gradient is
    0, the loss is the cross-entropy's and the entropy's alone); after cloning, value_coef weighs it again."""
    config = tiny(total_steps=16 * 24 * 3, teacher="oracle", clone_updates=2, clone_value_coef=0.0)
    learner = Impala(config)
    runner = learner.init(jax.random.PRNGKey(0))
    _, segment = jax.jit(lambda r: learner.rollout(r, learner.acting_params(r), learner.teach(r)))(runner)
    value_grads = {}
    for cloning in (True, False):
        grads, info = jax.grad(learner._loss, has_aux=True)(runner.params, segment, cloning)
        value_grads[cloning] = max(
            float(jnp.abs(g).max()) for path, g in jax.tree_util.tree_leaves_with_path(grads) if "value" in str(path)
        )
        assert float(info["value_loss"]) > 0  # still measured
    assert value_grads[True] == 0.0 and value_grads[False] > 0.0, value_grads


@pytest.mark.slow
def test_cloning_the_oracle_solves_a_short_tmaze_then_v_trace_keeps_it():
    """Behaviour cloning of the T-maze oracle through the GRU agent's unroll: the agent solves the
    6-cell T-LN within 40 cloning updates (V-trace alone: 150 updates at lr 6e-3, above) and V-trace
    keeps it there, on every one of 3 seeds."""
    _, metrics = trained_over_seeds(tiny(total_steps=16 * 24 * 80, lr=6e-3, teacher="oracle", clone_updates=40))
    loss = np.asarray(metrics["policy_loss"])
    assert np.all(loss[:, 35:40].mean(axis=1) < 0.25 * loss[:, :5].mean(axis=1))  # the cross-entropy falls
    assert np.all(final_returns(metrics) >= 3.5), final_returns(metrics)


@pytest.mark.slow
def test_an_lstm_cloning_the_oracle_with_dagger_solves_t_l_and_amnesic_it_guesses():
    """Imitation of the T-maze oracle (issue 84 §1): every update clones it, the agent acting itself
    up to half the time by the end; the frozen agent solves a 6-cell T-L, and the same agent with its
    memory reset before every step is back at a guess at the junction (+4 or -3, less the steps' cost:
    0.38 for the greedy amnesic agent, which always turns the same way; 4.0 with its memory, 2026-12-03),
    on every one of 3 seeds."""
    config = tiny(
        env=envs.make("tmaze/T-L", maze_length=6, timeout=20),
        core=cores.make("lstm", hidden=32),
        total_steps=16 * 24 * 120,
        lr=6e-3,
        teacher="oracle",
        clone_updates=120,  # at 40 the junction's turn was still a guess (greedy 0.38)
        agent_share=0.5,
    )
    learner = Impala(config)
    trained, _ = trained_over_seeds(config)
    evaluate = jax.jit(learner.evaluate, static_argnums=(2, 3, 4))
    for seed in range(LEARNING_SEEDS):
        params = jax.tree.map(lambda x: x[seed], trained)
        returns = {}
        for amnesic in (False, True):
            done, episode_return, _ = evaluate(params, jax.random.PRNGKey(1), 200, amnesic, True)
            returns[amnesic] = float(np.asarray(episode_return)[np.asarray(done)].mean())
        assert returns[False] >= 3.5 and returns[True] <= 1.0, (seed, returns)


@pytest.mark.parametrize(
    "settings, message",
    [
        (dict(teacher="oracle"), "teacher and clone_updates go together"),
        (dict(clone_updates=3), "teacher and clone_updates go together"),
        (dict(teacher="planner", clone_updates=3), "tmaze/T-LN has no scripted policy 'planner'; its policies: oracle"),
        (
            dict(env=envs.make("gymnax/CartPole-v1"), teacher="oracle", clone_updates=3),
            "gymnax/CartPole-v1 has no scripted policies",
        ),
        (dict(teacher="oracle", clone_updates=3, policy_lag=1), "policy_lag must be 0 with a teacher"),
        (dict(teacher="oracle", clone_updates=-1), "clone_updates must be >= 0, got -1"),
        (dict(agent_share=0.5), r"agent_share \(0.5\) mixes the agent into a teacher's cloning: give a teacher"),
        (dict(teacher="oracle", clone_updates=3, agent_share=1.5), r"agent_share must be within \[0.0, 1.0\], got 1.5"),
        (dict(clone_value_coef=0.0), r"clone_value_coef \(0.0\) weighs the value loss while cloning: give a teacher"),
        (dict(teacher="oracle", clone_updates=3, clone_value_coef=-1.0), "clone_value_coef must be >= 0, got -1.0"),
        (dict(clone_decision_weight=5.0), r"clone_decision_weight \(5.0\) weighs a teacher's decisions while cloning"),
        (
            dict(teacher="always_left", clone_updates=3, clone_decision_weight=5.0),
            r"clone_decision_weight \(5.0\) weighs the steps a teacher marks as its decisions; tmaze/T-LN's 'always_left' marks none",
        ),
        (dict(teacher="oracle", clone_updates=3, clone_decision_weight=0.0), "clone_decision_weight must be > 0"),
    ],
)
def test_a_teacher_is_refused_where_it_cannot_teach(settings, message):
    with pytest.raises(ValueError, match=message):
        tiny(**settings).validate()
