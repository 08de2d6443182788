"""Procedural street-like graphs for one-shot graph navigation (host-side NumPy, made once per env).

A graph is grown edge by edge on a jittered square lattice, the way a street network spreads:
each new street segment joins the current network to a lattice neighbour (or closes a block between
two network nodes). Chains of degree-2 nodes are then contracted into single roads, as the EPN paper
does with StreetLearn's graphs, keeping at each end the bearing of the road's first segment. Growth
stops when the contracted graph has the requested number of junctions (nodes of degree 3-4);
dead ends (degree 1) may remain. Graphs with two roads between the same junctions or a road that
loops back to its own junction are redrawn.

The navigation state is a directed edge: the agent stands at a node facing one of its roads.
``StateGraph`` holds, per state, the state reached by Forward (drive along the road, then face the
road that continues straightest; turn back only at a dead end), Left and Right (turn on the spot to
the next road counterclockwise / clockwise by bearing), and the bearing the agent faces (for the
procedural views of ``street_views``).
"""

from __future__ import annotations

import dataclasses
import functools
from typing import NamedTuple

import numpy as np

FORWARD, LEFT, RIGHT = 0, 1, 2
LATTICE_STEPS = ((1, 0), (0, 1), (-1, 0), (0, -1))


@dataclasses.dataclass(frozen=True)
class StateGraph:
    """A street graph as its navigation states (directed edges) and their transitions."""

    transitions: np.ndarray  # int32 [S, 3]: next state for Forward, Left, Right
    state_node: np.ndarray  # int32 [S]: the node the agent stands at
    heading: np.ndarray  # float32 [S]: bearing of the road the agent faces (radians counterclockwise from east)
    num_nodes: int


class GraphBank(NamedTuple):
    """Graphs padded to one number of states S_max (transitions and nodes -1, headings 0 past a graph's states)."""

    transitions: np.ndarray  # int32 [G, S_max, 3]
    num_states: np.ndarray  # int32 [G]
    state_node: np.ndarray  # int32 [G, S_max]
    heading: np.ndarray  # float32 [G, S_max]


def _contract(edges: set[tuple[tuple[int, int], tuple[int, int]]]):
    """(kept nodes, roads (a, b, next lattice node after a, before b)) with the chains of degree-2
    lattice nodes contracted; None if a road loops back to its start or two roads join one pair."""
    adjacency: dict = {}
    for a, b in edges:
        adjacency.setdefault(a, []).append(b)
        adjacency.setdefault(b, []).append(a)
    kept = [n for n, nbrs in adjacency.items() if len(nbrs) != 2]
    if not kept:
        return None
    roads = {}
    for start in kept:
        for first in adjacency[start]:
            path = [start, first]
            while len(adjacency[path[-1]]) == 2:
                path.append(next(n for n in adjacency[path[-1]] if n != path[-2]))
            if path[-1] == start:
                return None
            # found once from each end; its two end segments identify it
            roads[frozenset({(start, path[1]), (path[-1], path[-2])})] = (start, path[-1], path[1], path[-2])
    pairs = [frozenset(road[:2]) for road in roads.values()]
    if len(pairs) != len(set(pairs)):
        return None
    return kept, list(roads.values())


def grow_street_graph(
    rng: np.random.Generator, junctions: int, lattice: int = 7, jitter: float = 0.25, max_tries: int = 500
) -> StateGraph:
    """One connected street graph with exactly ``junctions`` nodes of degree >= 3."""
    for _ in range(max_tries):
        offsets = rng.uniform(-jitter, jitter, size=(lattice, lattice, 2))
        start = (int(rng.integers(lattice)), int(rng.integers(lattice)))
        nodes, edges = {start}, set()
        while True:
            candidates = []
            for x, y in nodes:
                for dx, dy in LATTICE_STEPS:
                    other = (x + dx, y + dy)
                    if 0 <= other[0] < lattice and 0 <= other[1] < lattice:
                        edge = tuple(sorted(((x, y), other)))
                        if edge not in edges:
                            candidates.append(edge)
            if not candidates:
                break
            a, b = candidates[rng.integers(len(candidates))]
            edges.add((a, b))
            nodes.update((a, b))
            contracted = _contract(edges)
            if contracted is None:
                break
            kept, roads = contracted
            degree = {n: 0 for n in kept}
            for a, b, _, _ in roads:
                degree[a] += 1
                degree[b] += 1
            count = sum(d >= 3 for d in degree.values())
            if count > junctions:
                break
            if count == junctions and rng.random() < 0.5:
                return _state_graph(kept, roads, offsets)
    raise RuntimeError(f"could not grow a street graph with {junctions} junctions in {max_tries} tries")


def _bearing(offsets, a, b) -> float:
    pa = np.array(a, float) + offsets[a]
    pb = np.array(b, float) + offsets[b]
    return float(np.arctan2(pb[1] - pa[1], pb[0] - pa[0]))


def _state_graph(kept, roads, offsets) -> StateGraph:
    index = {n: i for i, n in enumerate(kept)}
    exits: dict[int, list[tuple[float, int, int]]] = {i: [] for i in range(len(kept))}  # (bearing, to, road)
    for r, (a, b, a_next, b_prev) in enumerate(roads):
        exits[index[a]].append((_bearing(offsets, a, a_next), index[b], r))
        exits[index[b]].append((_bearing(offsets, b, b_prev), index[a], r))
    states = []  # (node, slot) with slots sorted counterclockwise by bearing
    slot_of = {}
    for node in range(len(kept)):
        exits[node].sort()
        for slot, (_, _to, road) in enumerate(exits[node]):
            slot_of[(node, road)] = len(states)
            states.append((node, slot))
    transitions = np.zeros((len(states), 3), np.int32)
    for s, (node, slot) in enumerate(states):
        degree = len(exits[node])
        transitions[s, LEFT] = slot_of[(node, exits[node][(slot + 1) % degree][2])]
        transitions[s, RIGHT] = slot_of[(node, exits[node][(slot - 1) % degree][2])]
        bearing, to, road = exits[node][slot]
        arrival = [e for e in exits[to] if e[2] != road]
        back = next(e for e in exits[to] if e[2] == road)
        if not arrival:  # dead end: turn around
            transitions[s, FORWARD] = slot_of[(to, road)]
            continue
        travel = back[0] + np.pi  # direction of travel when arriving
        turn = [abs((e[0] - travel + np.pi) % (2 * np.pi) - np.pi) for e in arrival]
        transitions[s, FORWARD] = slot_of[(to, arrival[int(np.argmin(turn))][2])]
    heading = np.array([exits[node][slot][0] for node, slot in states], np.float32)
    return StateGraph(transitions, np.array([n for n, _ in states], np.int32), heading, len(kept))


@functools.lru_cache(maxsize=16)
def graph_bank(junctions: int, size: int, seed: int) -> GraphBank:
    """``size`` graphs with ``junctions`` junctions grown from ``seed``, padded to one shape."""
    rng = np.random.default_rng(seed)
    graphs = [grow_street_graph(rng, junctions) for _ in range(size)]
    max_states = max(len(g.transitions) for g in graphs)
    transitions = np.full((size, max_states, 3), -1, np.int32)
    state_node = np.full((size, max_states), -1, np.int32)
    heading = np.zeros((size, max_states), np.float32)
    for i, g in enumerate(graphs):
        transitions[i, : len(g.transitions)] = g.transitions
        state_node[i, : len(g.transitions)] = g.state_node
        heading[i, : len(g.transitions)] = g.heading
    return GraphBank(transitions, np.array([len(g.transitions) for g in graphs], np.int32), state_node, heading)
