"""One registration for every environment's scripted policies (issue 84 §1): ``scripted_policy``
finds each family's oracle, a memory-less policy and random play by name, and the oracle does better
than random play on the first episode of a few copies."""

import jax
import jax.numpy as jnp
import pytest
from conftest import optimised

from memrl import envs
from memrl.envs.room_view import DELTAS
from memrl.envs.scripted_policy import episode_rewards, register_policies, registered_policies, scripted_policy

TESTED_APART = {"ballet", "pvm", "boxworld"}
"""families whose oracle the tests below hold to the optimum itself"""
ONE_OF_EACH = {
    "tmaze": "tmaze/T-L",
    "memory-planning": "memory-planning/4x4",
    "graph-nav": "graph-nav/5",
    "object-permanence": "object-permanence/mixed",
    "word-learning": "word-learning/distractors0",
    "minecraft-maze": "minecraft-maze/MC-LS",
    "minecraft-maze/chicken": "minecraft-maze/chicken",
}


def test_every_family_with_scripted_policies_is_tried_here():
    assert set(ONE_OF_EACH) | TESTED_APART == set(registered_policies())


def test_a_second_registration_of_the_same_environments_is_refused():
    with pytest.raises(ValueError, match="scripted policies of 'tmaze' are registered twice"):
        register_policies("tmaze", {})


@pytest.mark.parametrize("name", list(ONE_OF_EACH.values()))
def test_the_oracle_beats_random_play_through_the_one_registration(name):
    env = envs.make(name)
    oracle, random = (scripted_policy(name, env, policy) for policy in ("oracle", "random"))
    returns = {
        policy: float(episode_rewards(env, acting, jax.random.PRNGKey(0), 8, 800).sum(1).mean())
        for policy, acting in (("oracle", oracle), ("random", random))
    }
    assert returns["oracle"] > returns["random"], returns


def test_a_name_no_registration_knows_is_refused_with_those_that_exist():
    env = envs.make("minipacman/viewport")
    with pytest.raises(ValueError, match=r"minipacman/viewport has no scripted policies; .*minecraft-maze/chicken"):
        scripted_policy("minipacman/viewport", env, "oracle")
    with pytest.raises(ValueError, match=r"word-learning/distractors0 has no scripted policy 'planner'; its policies"):
        scripted_policy("word-learning/distractors0", envs.make("word-learning/distractors0"), "planner")


def test_the_ballet_oracle_always_touches_the_named_dancer_and_the_guesser_one_in_n():
    env = envs.make("ballet/4_delay16")
    returns = {
        policy: episode_rewards(env, scripted_policy("ballet/4_delay16", env, policy), jax.random.PRNGKey(0), 64, 160)
        .sum(1)
        .mean()
        for policy in ("oracle", "guesser")
    }
    assert float(returns["oracle"]) == 1.0 and 0.1 < float(returns["guesser"]) < 0.45, returns  # 1/4 expected


def test_the_ballet_walkers_answer_one_fixed_move_while_watching_and_decide_only_in_the_choice_phase():
    """While the dancers dance no move counts, and no learner could guess the target yet: the walkers
    answer north there, and only the choice phase's steps are marked as decisions (what a clone weighs)."""
    from memrl.envs.ballet_policies import WATCHING_MOVE

    env = envs.make("ballet/8_delay16")
    _, state = env.reset_env(jax.random.PRNGKey(3), env.default_params)
    for name in ("oracle", "guesser"):
        policy = scripted_policy("ballet/8_delay16", env, name)
        memory = policy.initial_memory(state)
        watching = [state._replace(frame=jnp.int32(f)) for f in (0, 100, int(env.choice_frame(state)) - 1)]
        for watched in watching:
            assert int(policy.act(jax.random.PRNGKey(0), watched, memory)[0][0]) == WATCHING_MOVE
            assert not bool(policy.decides(watched))
        choosing = state._replace(frame=env.choice_frame(state))
        assert bool(policy.decides(choosing))
    oracle = scripted_policy("ballet/8_delay16", env, "oracle")
    choosing = state._replace(frame=env.choice_frame(state))
    target = env.dancer_positions(choosing)[choosing.target]
    move = int(oracle.act(jax.random.PRNGKey(0), choosing, oracle.initial_memory(choosing))[0][0])
    before = int(jnp.abs(choosing.agent - target).max())
    assert int(jnp.abs(choosing.agent + DELTAS[move] - target).max()) == before - 1  # toward the named dancer


def test_the_pvm_oracle_matches_the_colour_after_the_apples_and_the_guesser_one_in_three():
    env = envs.make("pvm")
    steps = int(env.phase_ends(env.default_params)[2])  # the whole episode
    rewards = {
        policy: episode_rewards(env, scripted_policy("pvm", env, policy), jax.random.PRNGKey(0), 64, steps)
        for policy in ("oracle", "guesser")
    }
    match = {policy: (r == env.default_params.match_reward).any(axis=1).mean() for policy, r in rewards.items()}
    assert float(match["oracle"]) == 1.0 and 0.15 < float(match["guesser"]) < 0.55, match  # 1/3 expected
    assert float(rewards["oracle"].sum(1).mean()) > float(env.default_params.match_reward)  # apples too


def boxworld_gem_steps(name: str) -> float | None:
    """Mean steps to the gem of BoxWorld's oracle ``name`` over 32 levels of 300 steps; None if one
    level went unsolved or a step lost reward (a distractor box)."""
    env = envs.make("boxworld/viewport")
    rewards = episode_rewards(env, scripted_policy("boxworld/viewport", env, name), jax.random.PRNGKey(0), 32, 300)
    gem = rewards == env.default_params.gem_reward
    solved = bool(gem.any(axis=1).all()) and not bool((rewards < 0).any())
    return float(jnp.argmax(gem, axis=1).mean()) if solved else None


def test_the_boxworld_oracles_take_every_gem_by_the_solution_path_the_viewport_one_from_what_it_has_seen():
    """Both oracles solve every level with the path's best return (L boxes + 10 for the gem, no
    distractor box); the viewport oracle explores (more steps than the one that reads the whole
    level), and its action never depends on a cell it has not seen: the unseen cells redrawn, it
    acts the same."""
    steps = {name: optimised(boxworld_gem_steps, name) for name in ("oracle", "viewport_oracle")}
    assert None not in steps.values() and steps["viewport_oracle"] > 1.3 * steps["oracle"], steps
    env = envs.make("boxworld/viewport")
    policy = scripted_policy("boxworld/viewport", env, "viewport_oracle")
    reset, initial_memory, act = jax.jit(env.reset), jax.jit(policy.initial_memory), jax.jit(policy.act)
    for seed in range(8):
        _, state = reset(jax.random.PRNGKey(seed))
        seen = initial_memory(state)
        noise_key, lock_key = jax.random.split(jax.random.PRNGKey(100 + seed))
        redrawn = state._replace(
            cells=jnp.where(seen, state.cells, jax.random.randint(noise_key, state.cells.shape, 0, 23)),
            locks=jnp.where(seen, state.locks, jax.random.bernoulli(lock_key, 0.3, state.locks.shape)),
        )
        assert not bool(seen.all()) and int(act(None, state, seen)[0][0]) == int(act(None, redrawn, seen)[0][0])


def test_the_viewport_oracle_solves_rmc_boxworld_imitations_levels_where_random_play_seldom_does():
    """The teacher of ``rmc-boxworld-imitation`` solves every level of the size its clones learn, with
    no distractor box, and random play solves the fraction the experiment's learning check states."""
    from memrl.experiments.rmc_boxworld_imitation import LEVEL, RANDOM_SOLVED

    env = envs.make("boxworld/viewport", **LEVEL)
    gem = env.default_params.gem_reward
    teacher = episode_rewards(
        env, scripted_policy("boxworld/viewport", env, "viewport_oracle"), jax.random.PRNGKey(1), 64, 300
    )
    assert bool((teacher == gem).any(axis=1).all()) and not bool((teacher < 0).any())
    random = episode_rewards(env, scripted_policy("boxworld/viewport", env, "random"), jax.random.PRNGKey(0), 1000, 300)
    assert round(float((random == gem).any(axis=1).mean()), 3) == RANDOM_SOLVED["trained"]


def driven_returns(env, policy, key, episodes: int, steps: int, driven: int):
    """Returns of episodes whose first ``driven`` steps take uniformly random actions in place of the
    policy's (its memory told of each by ``took``), as an agent's actions mixed into a teacher's do."""
    params = env.default_params

    def episode(key):
        reset_key, key = jax.random.split(key)
        obs, state = env.reset_env(reset_key, params)

        def step(carry, inputs):
            obs, state, memory = carry
            t, key = inputs
            policy_key, random_key, env_key = jax.random.split(key, 3)
            action, memory = policy.act(policy_key, obs, memory)
            random = jax.random.randint(random_key, action.shape, 0, jnp.asarray(env.action_dims))
            action = jnp.where(t < driven, random, action)
            memory = policy.took(memory, action)
            obs, state, reward, terminated, truncated, _ = env.step_env(env_key, state, action, params)
            return (obs, state, memory), reward

        init = (obs, state, policy.initial_memory(state))
        return jax.lax.scan(step, init, (jnp.arange(steps), jax.random.split(key, steps)))[1].sum()

    return jax.vmap(episode)(jax.random.split(key, episodes))


@pytest.mark.parametrize(
    "name, policy, steps, driven",
    [
        ("object-permanence/delay0", "oracle", 60, 45),  # 36 frames of reveal, then 9 random moves
        ("graph-nav/5", "transition_planner", 200, 50),
        ("memory-planning/4x4", "explorer", 100, 30),
        ("memory-planning/4x4", "transition_planner", 100, 30),
    ],
)
def test_a_teacher_that_tracks_its_actions_follows_the_ones_the_environment_took(name, policy, steps, driven):
    """Driven by other actions for a while (an agent's, mixed in while it clones), a teacher that
    tracks its actions keeps a true belief (where it stands, which transitions it made) and does as
    well afterwards as it can; told nothing of them, it believes it took its own and does worse."""
    env = envs.make(name)
    tracking = scripted_policy(name, env, policy)
    assert tracking.tracks_action
    returns = {
        told: float(driven_returns(env, acting, jax.random.PRNGKey(5), 64, steps, driven).mean())
        for told, acting in ((True, tracking), (False, tracking._replace(tracks_action=False)))
    }
    assert returns[True] > 1.2 * returns[False], returns
    if name.startswith("object-permanence"):
        assert returns[True] >= 1.0, returns  # on the named box in every episode
