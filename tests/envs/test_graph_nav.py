"""One-shot graph navigation: street-graph invariants, turning geometry, the env API, the oracle."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from memrl import envs
from memrl.envs.graph_search import breadth_first
from memrl.envs.street_graphs import FORWARD, LEFT, RIGHT, _contract, _state_graph, grow_street_graph


@pytest.mark.parametrize("junctions", [5, 7, 9])
def test_grown_graphs_have_the_requested_junctions_and_are_navigable(junctions):
    rng = np.random.default_rng(junctions)
    for _ in range(10):
        graph = grow_street_graph(rng, junctions)
        states_per_node = np.bincount(graph.state_node, minlength=graph.num_nodes)
        assert np.sum(states_per_node >= 3) == junctions
        assert set(states_per_node) <= {1, 3, 4}  # degree-2 nodes are contracted away
        t = graph.transitions
        np.testing.assert_array_equal(t[t[:, LEFT], RIGHT], np.arange(len(t)))  # Left then Right undoes
        np.testing.assert_array_equal(graph.state_node[t[:, LEFT]], graph.state_node)  # turning stays put
        assert np.all(graph.state_node[t[:, FORWARD]] != graph.state_node)  # Forward always moves
        assert np.all(breadth_first(jnp.asarray(t), 0).distance >= 0)  # every state reachable


def test_forward_goes_straight_through_a_crossing_and_turns_at_dead_ends():
    """A + crossing: from the centre facing east, Forward reaches the dead end and turns round;
    Forward again crosses the centre and keeps going west."""
    centre = (1, 1)
    edges = {tuple(sorted((centre, arm))) for arm in ((2, 1), (0, 1), (1, 2), (1, 0))}
    kept, roads = _contract(edges)
    graph = _state_graph(kept, roads, np.zeros((3, 3, 2)))
    node = {n: i for i, n in enumerate(kept)}
    facing = {}
    for s in range(len(graph.transitions)):
        if graph.state_node[s] == node[centre]:
            facing[graph.state_node[graph.transitions[s, FORWARD]]] = s
    east, west = facing[node[(2, 1)]], facing[node[(0, 1)]]
    at_east_end = graph.transitions[east, FORWARD]
    assert graph.state_node[graph.transitions[at_east_end, FORWARD]] == node[centre]
    assert graph.transitions[graph.transitions[at_east_end, FORWARD], FORWARD] == graph.transitions[west, FORWARD]


def test_contraction_refuses_loops_and_double_roads():
    square = {((0, 0), (0, 1)), ((0, 1), (1, 1)), ((1, 0), (1, 1)), ((0, 0), (1, 0))}
    assert _contract(square) is None  # a block with no junction is one road looping on itself
    assert _contract(square | {((0, 0), (0, -1)), ((1, 1), (1, 2))}) is None  # two roads join the same pair


@pytest.fixture(scope="module")
def env():
    return envs.make("graph-nav/5", bank_size=32)


def test_episode_is_200_steps_and_truncated(env):
    obs, state = env.reset(jax.random.PRNGKey(0))
    assert obs["position"].shape == (64,) and float(obs["position"].sum()) == 1.0
    step = jax.jit(env.step)
    for t in range(200):
        obs, state, reward, done, info = step(jax.random.PRNGKey(t), state, jnp.array([t % 3]))
        assert bool(done) == (t == 199)
    assert bool(info["truncated"]) and not bool(info["terminated"])


def test_collect_on_goal_rewards_and_restarts_elsewhere(env):
    _, state = env.reset(jax.random.PRNGKey(1))
    state = state._replace(goal=state.position)
    _, new, reward, _, _, _ = env.step_env(jax.random.PRNGKey(2), state, jnp.array([3]), env.default_params)
    assert float(reward) == 1.0 and int(new.goal) != int(new.position)
    _, same, reward, _, _, _ = env.step_env(jax.random.PRNGKey(2), new, jnp.array([3]), env.default_params)
    assert float(reward) == 0.0 and int(same.position) == int(new.position)


def test_reference_policies_rank_by_what_they_remember(env):
    """The oracle knows the map; the transition planner learns it over the episode and plans near the
    oracle's level once it has (the last 100 steps); forgetting it at every goal costs most of that."""
    from memrl.envs.graph_nav_policies import POLICIES
    from memrl.envs.scripted_policy import episode_rewards

    halves = {
        name: jax.jit(lambda k, p=p: episode_rewards(env, p(env), k, 64, 200))(jax.random.PRNGKey(0))
        .reshape(64, 2, 100)
        .sum(-1)
        .mean(0)
        for name, p in POLICIES.items()
    }
    returns = {name: float(half.sum()) for name, half in halves.items()}
    assert returns["oracle"] > 35 and returns["random"] < 3, returns
    assert float(halves["transition_planner"][1]) > 0.8 * float(halves["oracle"][1]), halves
    assert 3 * returns["within_trial_planner"] < returns["transition_planner"] < returns["oracle"], returns
    assert returns["within_trial_planner"] > 2 * returns["random"], returns


def test_the_planner_recognises_states_by_their_views(env, image_env):
    """On views the transition planner acts as on labels: the episodes are the same (the views' colours
    are drawn apart), so are its rewards."""
    from memrl.envs.graph_nav_policies import transition_planner
    from memrl.envs.scripted_policy import episode_rewards

    labelled = envs.make("graph-nav/5", bank_size=8)
    rewards = [episode_rewards(e, transition_planner(e), jax.random.PRNGKey(3), 4, 200) for e in (labelled, image_env)]
    assert float(rewards[0].sum()) > 20
    np.testing.assert_array_equal(rewards[0], rewards[1])


def test_too_few_labels_and_bad_params_are_rejected():
    with pytest.raises(ValueError, match="num_labels \\(8\\) must be at least"):
        envs.make("graph-nav/5", num_labels=8, bank_size=4).reset(jax.random.PRNGKey(0))
    with pytest.raises(ValueError, match="'graph-nav/5' has no setting 'max_step'; its settings: num_labels"):
        envs.make("graph-nav/5", max_step=3)


@pytest.fixture(scope="module")
def image_env():
    return envs.make("graph-nav/5", bank_size=8, observation="images")


def test_views_tell_every_state_apart_and_change_between_episodes(image_env):
    env = image_env
    _, state = env.reset(jax.random.PRNGKey(0))
    views = lambda st: np.asarray(jax.vmap(lambda s: env.view(st, s))(jnp.arange(int(env.bank.num_states[st.graph]))))
    first = views(state)
    assert first.shape[1:] == (16, 16, 3) and first.dtype == np.uint8
    assert len({v.tobytes() for v in first}) == len(first)
    _, other = env.reset(jax.random.PRNGKey(1))
    recoloured = views(other._replace(graph=state.graph))  # the same graph in another episode
    assert not np.any(np.all(first == recoloured, axis=(1, 2, 3)))


def test_view_draws_the_faced_road_ahead_and_north_on_the_border():
    """A + crossing facing east: roads up, down, left and right of the centre; north (the sun,
    drawn over the road) on the left."""
    from memrl.envs.street_views import ROAD, SUN, render_view

    nodes, heading = jnp.zeros(4, jnp.int32), jnp.array([0.0, np.pi / 2, np.pi, -np.pi / 2])
    view = np.asarray(render_view(0, nodes, heading, jnp.zeros((1, 3)), 9)) / 255
    road, sun = np.all(np.isclose(view, ROAD, atol=0.01), -1), np.all(np.isclose(view, SUN, atol=0.01), -1)
    assert road[:, 4].all() and road[4, 4:].all() and (road | sun)[4].all() and not road[0, 0]
    assert sun[4, 0] and not sun[4, 8] and not sun[0, 4] and not sun[8, 4]


def test_oracle_recognises_states_from_views(image_env):
    from memrl.envs.graph_nav_policies import oracle
    from memrl.envs.scripted_policy import episode_rewards

    labels_env = envs.make("graph-nav/5", bank_size=8)
    returns = [
        float(jax.jit(lambda k, e=e: episode_rewards(e, oracle(e), k, 8, 200))(jax.random.PRNGKey(0)).sum())
        for e in (labels_env, image_env)
    ]
    assert returns[0] == returns[1] > 8 * 35, returns


def test_bad_observation_settings_are_rejected():
    with pytest.raises(ValueError, match="observation must be one of \\('labels', 'images'\\), got 'pixels'"):
        envs.make("graph-nav/5", observation="pixels")
    with pytest.raises(ValueError, match="image_size must be >= 8"):
        envs.make("graph-nav/5", observation="images", image_size=4)
