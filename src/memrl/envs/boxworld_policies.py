"""BoxWorld's scripted policies (Zambaldi et al. 2018; Santoro et al. 2018, App. A.3): the oracle
reads the level and takes a shortest path, over free floor only (stepping onto another loose key
would drop the one held), to the next object of the solution: the loose gem once its box is open,
else the lock of the solution path that the key it holds opens, else the loose key that opens one.
The viewport oracle does the same with only what the viewport has shown it (remembered: a teacher
that a memory agent seeing through the viewport can copy), exploring until it knows a box to be on
the solution path; and random play."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from memrl.envs.boxworld import FIRST_KEY, FLOOR, GEM, MOVES, BoxWorld, BoxWorldState, within
from memrl.envs.graph_search import grid_first_move, grid_first_move_to_any
from memrl.envs.scripted_policy import ScriptedPolicy, register_policies, uniform_random


def next_object(state: BoxWorldState) -> jnp.ndarray:
    """The [2] cell the oracle goes to next (module docstring)."""
    cells, locks = state.cells, state.locks
    boxed = jnp.pad(locks[:, 1:], ((0, 0), (0, 1)))  # a box's key sits left of its lock
    path_locks = locks & ~state.distractor_locks
    gem = (cells == GEM) & ~boxed
    held_opens = path_locks & (cells == state.held) & (state.held >= FIRST_KEY)
    loose_keys = (cells >= FIRST_KEY) & ~locks & ~boxed
    wanted_keys = loose_keys & jnp.isin(cells, jnp.where(path_locks, cells, -1))
    target = jnp.where(gem.any(), gem, jnp.where(held_opens.any(), held_opens, wanted_keys))
    return jnp.stack(jnp.unravel_index(jnp.argmax(target), cells.shape)).astype(jnp.int32)


def oracle(env: BoxWorld) -> ScriptedPolicy:
    """Opens the solution path's boxes in order and takes the gem, never a distractor box."""

    def act(key, state: BoxWorldState, memory):
        free = (state.cells == FLOOR) & ~state.locks
        return grid_first_move(state.agent, next_object(state), free, MOVES)[None], memory

    return ScriptedPolicy(lambda state: jnp.int32(0), act, reads_state=True)


def viewport_oracle(env: BoxWorld) -> ScriptedPolicy:
    """The oracle with only what the ``viewport`` has shown (its memory: the cells seen). A box is
    known to lie on the solution path when both its cells were seen and its key is the gem or opens
    another lock seen (a distractor box's key opens none); it goes to the loose gem, else to a known
    good box that the key it holds opens, else to a loose key that opens one, else toward the nearest
    cell whose view holds cells not yet seen. Unseen cells count as free: the next move is always
    onto a cell in view, so it never steps onto an object it has not seen."""
    half = env.viewport // 2

    def seen_now(agent: jax.Array) -> jax.Array:
        return within(jnp.zeros((env.grid_size,) * 2, bool).at[agent[0], agent[1]].set(True), half)

    def act(key, state: BoxWorldState, seen):
        seen = seen | seen_now(state.agent)
        cells, locks = state.cells, state.locks & seen
        inside_seen = jnp.pad(seen[:, :-1], ((0, 0), (1, 0)))  # a lock's left cell (its box's key) seen
        content = jnp.pad(cells[:, :-1], ((0, 0), (1, 0)))
        other_locks = jnp.isin(content, jnp.where(locks, cells, -1))
        good = locks & inside_seen & ((content == GEM) | other_locks)
        right_seen = jnp.pad(seen[:, 1:], ((0, 0), (0, 1)))  # loose only if the cell right of it was seen
        loose = seen & right_seen & ~jnp.pad(locks[:, 1:], ((0, 0), (0, 1))) & ~locks
        gem = (cells == GEM) & loose
        held_opens = good & (cells == state.held) & (state.held >= FIRST_KEY)
        loose_keys = (cells >= FIRST_KEY) & loose
        wanted_keys = loose_keys & jnp.isin(cells, jnp.where(good, cells, -1))
        free_seen = seen & (cells == FLOOR) & ~state.locks
        frontier = free_seen & within(~seen, half)
        goals = jnp.where(
            gem.any(),
            gem,
            jnp.where(held_opens.any(), held_opens, jnp.where(wanted_keys.any(), wanted_keys, frontier)),
        )
        move = grid_first_move_to_any(state.agent, goals, free_seen | ~seen, MOVES)
        return move[None], seen

    return ScriptedPolicy(lambda state: seen_now(state.agent), act, reads_state=True)


POLICIES = {"oracle": oracle, "viewport_oracle": viewport_oracle, "random": uniform_random}
register_policies("boxworld", POLICIES)
