import jax
import numpy as np
import pytest

from memrl.analysis.visited_moves import count_only_loss, known_moves, random_walk, train_model
from memrl.envs.memory_planning import INVERSE_MOVES, MOVES


def test_each_move_is_undone_by_its_inverse():
    assert INVERSE_MOVES.tolist() == [1, 0, 3, 2]
    np.testing.assert_array_equal(np.asarray(MOVES[:4]) + np.asarray(MOVES[INVERSE_MOVES]), 0)


def test_known_moves_are_the_walks_transitions_up_to_each_step_either_way():
    labels, nodes, actions = random_walk(jax.random.PRNGKey(3), 4, 30)
    assert sorted(np.asarray(labels).tolist()) == list(range(16))
    nodes, actions, known = np.asarray(nodes), np.asarray(actions), np.asarray(known_moves(nodes, actions))
    xy = lambda node: np.array([node // 4, node % 4])
    for s in range(1, 30):
        np.testing.assert_array_equal((xy(nodes[s - 1]) + np.asarray(MOVES[actions[s]])) % 4, xy(nodes[s]))
    for t in range(30):
        edges = {(nodes[s - 1], actions[s]) for s in range(1, t + 1)} | {
            (nodes[s], int(INVERSE_MOVES[actions[s]])) for s in range(1, t + 1)
        }
        np.testing.assert_array_equal(known[t], [(nodes[t], a) in edges for a in range(4)])


def test_a_reader_of_the_step_count_knows_nothing_at_the_start_and_one_move_back_after_one_step():
    """At t = 0 no move is known; after one step on a 3x3 torus exactly the way back is (p = 1/4)."""
    binary_entropy = -(0.25 * np.log(0.25) + 0.75 * np.log(0.75))
    assert count_only_loss(jax.random.PRNGKey(0), 3, 2, walks=50) == pytest.approx(binary_entropy / 2, rel=1e-6)


@pytest.mark.parametrize(
    "name, sizes",
    [("epn", {"embed_dim": 8, "width": 8, "num_heads": 1, "iterations": 1}), ("lstm", {"hidden": 8, "embed_dim": 8})],
)
def test_both_models_train_on_the_lookup(name, sizes):
    curve = train_model(name, jax.random.PRNGKey(0), 3, length=12, steps=2, walks=2, queries=3, chunk=1, **sizes)
    assert curve.shape == (2, 2) and np.all(np.isfinite(curve)) and np.all((curve[:, 1] >= 0) & (curve[:, 1] <= 1))


def test_an_unknown_model_is_refused():
    with pytest.raises(ValueError, match="unknown model 'gru'; known: epn, lstm"):
        train_model("gru", jax.random.PRNGKey(0), 3, length=4, steps=1, chunk=1)
