"""Procedural views of graph-nav states, memrl's stand-in for One-Shot StreetLearn's panoramas.

A view is a small top-down egocentric picture of the junction the agent stands at, turned so that
the road it faces points up: every road leaving the junction is a grey bar from the centre along
its bearing relative to the agent's heading, drawn over the junction's colour, and a yellow sun on
the border marks north (as a skyline gives a panorama its absolute orientation). Junction colours
are drawn afresh each episode, so, as with the per-episode label permutation of the one-hot
observations, an agent cannot carry a map from one episode to the next. Views of two states differ
whenever their junctions or headings differ: the colour tells junctions apart and the sun tells the
roads of one junction apart.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

ROAD = (0.5, 0.5, 0.5)
SUN = (1.0, 0.9, 0.0)
ROAD_HALF_WIDTH = 1.0
SUN_RADIUS = 1.5


def render_view(
    state: jax.Array, state_node: jax.Array, heading: jax.Array, node_colour: jax.Array, size: int
) -> jax.Array:
    """uint8 [size, size, 3] view from ``state`` of a graph with per-state nodes [S] (-1 padding) and
    headings [S] (radians counterclockwise from east), with junction colours [N, 3] in [0, 1]."""
    centre = (size - 1) / 2
    rows, cols = jnp.meshgrid(jnp.arange(size, dtype=jnp.float32), jnp.arange(size, dtype=jnp.float32), indexing="ij")
    ahead, right = centre - rows, cols - centre  # pixel offsets from the centre, "up" = the way the agent faces

    def along(relative_bearing):
        """(distance along, distance across) a ray at a bearing counterclockwise from straight ahead."""
        forward, left = jnp.cos(relative_bearing), jnp.sin(relative_bearing)
        return ahead * forward - right * left, jnp.abs(ahead * left + right * forward)

    exits = (state_node == state_node[state]) & (state_node >= 0)
    distance, across = jax.vmap(along)(heading - heading[state])
    road = jnp.any(exits[:, None, None] & (distance >= 0) & (across <= ROAD_HALF_WIDTH), axis=0)
    sun_distance, sun_across = along(jnp.pi / 2 - heading[state])
    sun = jnp.hypot(sun_distance - (centre - SUN_RADIUS), sun_across) <= SUN_RADIUS
    image = jnp.where(
        sun[..., None], jnp.array(SUN), jnp.where(road[..., None], jnp.array(ROAD), node_colour[state_node[state]])
    )
    return jnp.round(image * 255).astype(jnp.uint8)
