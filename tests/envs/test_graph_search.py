from collections import deque

import jax
import numpy as np
import pytest

from memrl.envs.graph_search import breadth_first


def numpy_bfs(neighbors: np.ndarray, source: int):
    n = len(neighbors)
    rank, distance, first = np.full(n, n), np.full(n, -1), np.full(n, -1)
    rank[source], distance[source] = 0, 0
    queue, order = deque([source]), 1
    while queue:
        node = queue.popleft()
        for action, target in enumerate(neighbors[node]):
            if target >= 0 and rank[target] == n:
                rank[target], distance[target] = order, distance[node] + 1
                first[target] = action if node == source else first[node]
                order += 1
                queue.append(target)
    return rank, distance, first


@pytest.mark.parametrize("seed", range(5))
def test_matches_a_plain_python_bfs_on_random_graphs(seed):
    rng = np.random.default_rng(seed)
    neighbors = rng.integers(0, 12, size=(12, 4))
    neighbors[rng.random((12, 4)) < 0.4] = -1  # missing edges, some nodes unreachable
    search = jax.jit(breadth_first)
    for source in range(12):
        expected = numpy_bfs(neighbors, source)
        result = search(neighbors, source)
        for got, want in zip(result, expected):
            np.testing.assert_array_equal(got, want)


def test_grid_first_move_to_any_heads_for_the_nearest_goal_around_walls():
    """On a 5×5 grid with a wall across the middle row but its right end, the first move toward the
    nearer of two goals (the far one straight down through the wall, the near one to the left) and
    toward one goal alone (grid_first_move) are those of a shortest path."""
    import jax.numpy as jnp

    from memrl.envs.graph_search import grid_first_move, grid_first_move_to_any

    moves = jnp.array([(-1, 0), (1, 0), (0, -1), (0, 1)])  # up, down, left, right
    free = jnp.ones((5, 5), bool).at[2, :4].set(False)
    agent = jnp.array([1, 2])
    below, left = jnp.array([3, 2]), jnp.array([1, 0])
    goals = jnp.zeros((5, 5), bool).at[below[0], below[1]].set(True).at[left[0], left[1]].set(True)
    assert int(grid_first_move_to_any(agent, goals, free, moves)) == 2  # left: 2 steps, below: 6 around the wall
    assert int(grid_first_move(agent, below, free, moves)) == 3  # right, toward the gap
    assert int(grid_first_move(agent, left, free, moves)) == 2
