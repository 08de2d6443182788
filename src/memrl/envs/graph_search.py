"""Breadth-first search on a graph given as a neighbour table, in JAX (jittable, fixed shapes)."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp


class BFSResult(NamedTuple):
    """Per node: discovery order, distance and first action from the source."""

    rank: jax.Array  # int32 [N]: discovery order (0 for the source), N if unreachable
    distance: jax.Array  # int32 [N]: edges from the source, -1 if unreachable
    first_action: (
        jax.Array
    )  # int32 [N]: the action leaving the source on the BFS-tree path, -1 for the source/unreachable


def breadth_first(neighbors: jax.Array, source: jax.Array) -> BFSResult:
    """BFS from ``source`` over ``neighbors`` [N, A] (node reached by action a, -1 for none).
    Neighbours are expanded in action order, so ties between equally near nodes go to the lower
    action, as in a BFS that visits neighbours in that order."""
    num_nodes, num_actions = neighbors.shape
    rank = jnp.full(num_nodes, num_nodes, jnp.int32).at[source].set(0)
    distance = jnp.full(num_nodes, -1, jnp.int32).at[source].set(0)
    first_action = jnp.full(num_nodes, -1, jnp.int32)
    queue = jnp.zeros(num_nodes, jnp.int32).at[0].set(source)

    def expand(i, carry):
        rank, distance, first_action, queue, tail = carry
        node = queue[i]
        for action in range(num_actions):
            target = neighbors[node, action]
            new = (i < tail) & (target >= 0) & (rank[jnp.maximum(target, 0)] == num_nodes)
            slot = jnp.where(new, target, num_nodes)  # out of range: dropped
            rank = rank.at[slot].set(tail, mode="drop")
            distance = distance.at[slot].set(distance[node] + 1, mode="drop")
            first_action = first_action.at[slot].set(jnp.where(node == source, action, first_action[node]), mode="drop")
            queue = queue.at[jnp.where(new, tail, num_nodes)].set(target, mode="drop")
            tail = tail + new
        return rank, distance, first_action, queue, tail

    rank, distance, first_action, _, _ = jax.lax.fori_loop(
        0, num_nodes, expand, (rank, distance, first_action, queue, jnp.int32(1))
    )
    return BFSResult(rank, distance, first_action)


def grid_first_move(agent: jax.Array, goal: jax.Array, free: jax.Array, moves: jax.Array) -> jax.Array:
    """The first of ``moves`` [A, 2] on a shortest path from ``agent`` to the cell ``goal`` [2] over
    the cells of the grid where ``free`` [H, W] (the goal is always reached); see ``grid_first_move_to_any``."""
    return grid_first_move_to_any(agent, jnp.zeros(free.shape, bool).at[goal[0], goal[1]].set(True), free, moves)


def grid_first_move_to_any(agent: jax.Array, goals: jax.Array, free: jax.Array, moves: jax.Array) -> jax.Array:
    """The first of ``moves`` [A, 2] on a shortest path from ``agent`` to the nearest of the cells
    where ``goals`` [H, W] over the cells where ``free`` (goals are always reached), by relaxing every
    cell's distance to the goals; ties go to the lower move. A move off the grid or onto a cell that
    is not free is never taken unless no move is free (then the first)."""
    height, width = free.shape
    far = height * width
    free = free | goals
    start = jnp.where(goals, 0, far)

    def relax(distance, _):
        padded = jnp.pad(distance, 1, constant_values=far)
        shifted = jnp.stack([padded[1 + dr : 1 + dr + height, 1 + dc : 1 + dc + width] for dr, dc in moves.tolist()])
        return jnp.where(free, jnp.minimum(distance, shifted.min(0) + 1), distance), None

    distance = jax.lax.scan(relax, start, None, far)[0]
    onto = agent + moves
    inside = jnp.all((onto >= 0) & (onto < jnp.array([height, width])), axis=-1)
    row, col = jnp.clip(onto[:, 0], 0, height - 1), jnp.clip(onto[:, 1], 0, width - 1)
    return jnp.argmin(jnp.where(inside & free[row, col], distance[row, col], far + 1)).astype(jnp.int32)
