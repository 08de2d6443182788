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
