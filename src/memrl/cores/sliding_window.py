"""The sliding per-layer cache of the transformer memories (TrXL/GTrXL's memory, HTM's window),
for a segment of T steps computed at once.

Rows are numbered [the cache's W rows, the segment's T rows]; step t sits at row W + t and sees
the rows at distance 0..W that are valid and belong to its episode (a reset step starts one).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp


def window_mask(valid: jax.Array, resets: jax.Array) -> tuple[jax.Array, jax.Array]:
    """valid [B, W] (the cache's rows), resets [B, T] -> (distances [T, W + T] from each row to each
    step, mask [B, T, W + T] of the rows each step attends to)."""
    width, steps = valid.shape[1], resets.shape[1]
    distances = width + jnp.arange(steps)[:, None] - jnp.arange(width + steps)[None]
    episode = jnp.cumsum(resets, axis=1)  # resets so far, the step's own included
    row_episode = jnp.concatenate([jnp.zeros_like(valid, dtype=episode.dtype), episode], axis=1)
    row_valid = jnp.concatenate([valid, jnp.ones_like(resets)], axis=1)
    in_window = (distances >= 0) & (distances <= width)
    return distances, in_window[None] & row_valid[:, None] & (row_episode[:, None] == episode[:, :, None])


def slide(cache: jax.Array, valid: jax.Array, rows: jax.Array, resets: jax.Array) -> tuple[jax.Array, jax.Array]:
    """The cache after the segment: its last W rows of [cache [B, L, W, D], rows [B, L, T, D]],
    emptied (zeros, invalid) before the segment's last reset, as T single steps leave it."""
    width, steps = valid.shape[1], resets.shape[1]
    last_reset = steps - 1 - jnp.argmax(resets[:, ::-1], axis=1)
    episode_start = jnp.where(resets.any(axis=1), width + last_reset, 0)  # first row of the last episode
    current = jnp.arange(steps, width + steps)[None] >= episode_start[:, None]  # [B, W]
    kept = jnp.concatenate([cache, rows], axis=2)[:, :, steps:]
    kept_valid = jnp.concatenate([valid, jnp.ones_like(resets)], axis=1)[:, steps:]
    return jnp.where(current[:, None, :, None], kept, 0.0), kept_valid & current
