import jax
import jax.numpy as jnp
import numpy as np

from memrl import cores, envs
from memrl.analysis.distance_probe import decoding_accuracy, distance_probe, probe_dataset, torus_distance
from memrl.envs.graph_search import breadth_first
from memrl.envs.memory_planning_policies import torus_neighbors


def test_torus_distance_is_the_bfs_distance():
    env = envs.make("memory-planning/4x4")
    neighbors = torus_neighbors(env)
    xy = env.xy(jnp.arange(16))
    bfs = jax.jit(jax.vmap(lambda source: breadth_first(neighbors, source).distance))(jnp.arange(16))
    np.testing.assert_array_equal(torus_distance(xy[:, None], xy[None], 4), bfs)


def test_decoder_separates_separable_classes():
    key = jax.random.PRNGKey(0)
    labels = jax.random.randint(key, (600,), 0, 3)
    x = jax.nn.one_hot(labels, 3) * 4 + 0.3 * jax.random.normal(key, (600, 3))
    accuracy = decoding_accuracy((x[:400], labels[:400]), (x[400:], labels[400:]), 3)
    assert np.all(accuracy > 0.95)


def test_probe_dataset_gives_planner_outputs_and_true_distances():
    core = cores.make("epn", capacity=70, embed_dim=4, width=8)
    x = {"observation": jnp.zeros((1, 16)), "goal": jnp.zeros((1, 16)), "prev_action": jnp.zeros((1, 5))}
    params = jax.jit(core.init)(jax.random.PRNGKey(0), core.initialize_carry(None, (1,)), x, jnp.ones(1, bool))
    outputs, distances = probe_dataset(core, params, jax.random.PRNGKey(1), maps=3, queries=5, iterations=(1, 4))
    assert outputs.shape == (2, 15, 8) and np.all(np.isfinite(outputs))
    assert distances.shape == (15,) and distances.min() >= 0 and distances.max() <= 4


def test_the_probe_reads_a_planner_of_the_3x3_game_on_its_own_size():
    core = cores.make("epn", capacity=40, embed_dim=4, width=8)
    x = {"observation": jnp.zeros((1, 9)), "goal": jnp.zeros((1, 9)), "prev_action": jnp.zeros((1, 5))}
    params = jax.jit(core.init)(jax.random.PRNGKey(0), core.initialize_carry(None, (1,)), x, jnp.ones(1, bool))
    _, distances = probe_dataset(core, params, jax.random.PRNGKey(1), maps=4, queries=8, maze_size=3, iterations=(1,))
    assert set(np.asarray(distances).tolist()) <= {0, 1, 2}  # on the 3×3 torus no goal is further than 2
    results = distance_probe(core, params, max_iterations=2, maps=4, queries=8, maze_size=3)
    assert list(results) == [1, 2] and all(accuracy.shape == (3,) for accuracy in results.values())


def test_a_planner_too_small_to_hold_a_map_is_refused():
    """A curriculum's early stages hold fewer rows than a map has transitions (epn-rl-control's 24)."""
    import pytest

    core = cores.make("epn", capacity=24, embed_dim=4, width=8)
    with pytest.raises(ValueError, match=r"every transition of a 3x3 map \(36 rows\); this planner holds 24"):
        probe_dataset(core, {}, jax.random.PRNGKey(1), maps=1, queries=1, maze_size=3)


def test_a_seed_the_run_lacks_is_refused_with_the_seeds_it_has(tmp_path):
    import pytest

    from memrl.analysis.distance_probe import command
    from memrl.learn.impala_config import ImpalaConfig
    from memrl.run.folder import RunFolder

    config = ImpalaConfig(env=envs.make("memory-planning/3x3"), core=cores.make("epn", capacity=40), seed=300, seeds=2)
    RunFolder(tmp_path / "run").prepare(config)
    with pytest.raises(FileNotFoundError, match=r"no checkpoint for seed 0; its run trains seeds 300, 301 \(--seed\)"):
        command(tmp_path / "run", seed=0)
